'use strict'
// Every option of every API is read once: a getter (or a proxy) that answers '1kb' and
// then '1gb' must not let one value pass the checks and the other govern the body.
// Each API gets options whose every property, nested ones included (linger, limits,
// storage), counts its reads.
const test = require('node:test')
const assert = require('node:assert/strict')
const os = require('node:os')
const uwsBody = require('..')

const res = () => ({ onData () {}, onAborted () {}, pause () {}, resume () {}, writeStatus () { return this }, writeHeader () { return this }, end () {}, cork (f) { f() }, getWriteOffset () { return 0 } })
const multipartHeaders = { 'content-type': 'multipart/form-data; boundary=b', 'content-length': '10' }
const quiet = (made) => { if (made && typeof made.catch === 'function') made.catch(() => {}) }

/** `value` with every property's reads counted in `reads` under `path.name`; objects within too. */
function counted (value, reads, path) {
  const target = {}
  for (const [name, v] of Object.entries(value)) {
    const inner = v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype ? counted(v, reads, `${path}.${name}`) : v
    Object.defineProperty(target, name, {
      enumerable: true,
      get () {
        reads.set(`${path}.${name}`, (reads.get(`${path}.${name}`) || 0) + 1)
        return inner
      }
    })
  }
  return target
}

const linger = { bytes: '1mb', timeout: 1000, idle: 500, errorAtOnce: false }
const CASES = [
  ['readBody', (o) => quiet(uwsBody.readBody(res(), { 'content-length': '5' }, o)), { limit: '1kb', maxPreallocated: 10, inflate: true, timeout: 1000, linger, onAborted () {} }],
  ['readText', (o) => quiet(uwsBody.readText(res(), { 'content-length': '5' }, o)), { limit: '1kb', encoding: 'latin1', maxPreallocated: 10, inflate: true, timeout: 1000, linger, onAborted () {} }],
  ['bodyStream', (o) => uwsBody.bodyStream(res(), { 'content-length': '5' }, o).destroy(), { limit: '1kb', inflate: true, timeout: 1000, highWaterMark: 1024, linger, onAborted () {}, digest: false }],
  ['readMultipart', (o) => quiet(uwsBody.readMultipart(res(), multipartHeaders, o)), {
    storage: { dest: os.tmpdir() },
    limits: { fileSize: 10, files: 2, fields: 3, fieldSize: 100, parts: 5, fieldNameSize: 10, headerPairs: 10, headerSize: 1000, fieldNestingDepth: 2, fieldArrayIndexLimit: 5 },
    limit: '1kb',
    timeout: 1000,
    highWaterMark: 1024,
    defParamCharset: 'utf8',
    preservePath: false,
    maxPreallocated: 10,
    linger,
    onAborted () {}
  }],
  ['json', (o) => uwsBody.json(o), { limit: '1kb', inflate: true, type: 'application/json', verify () {}, timeout: 1000, linger, reviver: null, strict: true }],
  ['raw', (o) => uwsBody.raw(o), { limit: '1kb', inflate: true, type: '*/*', verify () {}, timeout: 1000, linger }],
  ['text', (o) => uwsBody.text(o), { limit: '1kb', inflate: true, type: 'text/plain', verify () {}, timeout: 1000, linger, defaultCharset: 'utf-8' }],
  ['urlencoded', (o) => uwsBody.urlencoded(o), { limit: '1kb', inflate: true, type: 'application/x-www-form-urlencoded', verify () {}, timeout: 1000, linger, extended: true, parameterLimit: 10, depth: 2, defaultCharset: 'utf-8', charsetSentinel: false, interpretNumericEntities: false }],
  ['multipart', (o) => uwsBody.multipart(o), {
    dest: os.tmpdir(),
    limits: { fileSize: 10, files: 2 },
    fileFilter (req, file, cb) { cb(null, true) },
    preservePath: false,
    defParamCharset: 'utf8',
    fileHwm: 1024,
    limit: '1kb',
    timeout: 1000,
    maxPreallocated: 10,
    linger
  }],
  ['diskStorage', (o) => uwsBody.multipart.diskStorage(o), { destination: os.tmpdir(), filename (req, file, cb) { cb(null, 'x') } }],
  ['BodyAccumulator', (o) => new uwsBody.BodyAccumulator(o).abort(), { limit: '1kb', maxPreallocated: 10, inflate: true, contentLength: '5', contentEncoding: null }],
  ['answerError', (o) => uwsBody.answerError(res(), new Error('x'), o), { body: 'no', contentType: 'text/plain', headers: { 'retry-after': '5' }, bodyEnded: true, linger }]
]

test('every option of every API is read once, nested ones included', () => {
  for (const [api, use, options] of CASES) {
    const reads = new Map()
    use(counted(options, reads, api))
    const twice = [...reads].filter(([, n]) => n > 1).map(([name, n]) => `${name} (${n})`)
    assert.deepEqual(twice, [], `${api}: options read more than once`)
    assert.ok(reads.size >= Object.keys(options).length, `${api}: ${reads.size} reads`)
  }
})

test('bodyStream: a limit getter that answers 1kb and then 1gb is held to 1kb', async () => {
  let asked = 0
  const options = { get limit () { return asked++ === 0 ? '1kb' : '1gb' }, linger: false }
  const handlers = {}
  const r = { ...res(), onData (f) { handlers.data = f }, onAborted (f) { handlers.abort = f } }
  const stream = uwsBody.bodyStream(r, {}, options)
  const failed = new Promise((resolve) => stream.on('error', resolve))
  stream.resume()
  handlers.data(new ArrayBuffer(4096), false)
  const err = await failed
  assert.equal(err.code, 'ERR_BODY_TOO_LARGE')
  assert.equal(err.limit, 1024)
})
