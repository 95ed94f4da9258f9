'use strict'
// What multer 2.5 added, in multipart() (and readMultipart where it applies), side by
// side with multer 2.5 itself over the same bytes: defCharset, streamHandler, diskStorage's
// flush, limits as a function of the request, and busboy's messages for a malformed body.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PassThrough, Readable } = require('node:stream')
const multer = require('multer')
const { multipart, readMultipart } = require('..')
const { formBody } = require('./helpers/multer-form')

const B = 'x25boundary'
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-multer25-'))
test.after(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A request stream carrying `bytes`, as multer's suite makes one; `extra` set on it. */
function requestOf (bytes, contentType = `multipart/form-data; boundary=${B}`, extra = {}) {
  const req = new PassThrough()
  req.headers = { 'content-type': contentType, 'content-length': String(bytes.length) }
  Object.assign(req, extra)
  return req
}

/** Runs `middleware` over `bytes`; resolves with { err, req } once it called next. */
function submit (middleware, bytes, contentType, extra) {
  const req = requestOf(bytes, contentType, extra)
  return new Promise((resolve) => {
    middleware(req, null, (err) => resolve({ err, req }))
    if (!req.readableEnded) req.end(bytes)
  })
}

/** The same middleware of multer 2.5 and of multipart() over the same bytes. */
async function both (options, use, bytes, contentType, extra) {
  const theirs = await submit(use(multer(options)), bytes, contentType, extra)
  const ours = await submit(use(multipart(options)), bytes, contentType, extra)
  return { theirs, ours }
}

const body = (o) => ({ ...o.req.body })

test('defCharset: fields without a charset are read in it, a field with its own keeps that', async () => {
  const cp1251 = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]) // "Привет" in windows-1251
  const parts = [
    { name: 'a', data: cp1251 },
    { name: 'b', data: Buffer.from('caf\xe9', 'latin1') },
    { name: 'c', type: 'text/plain; charset=utf-8', data: Buffer.from('é') }
  ]
  // busboy 1.6 reads a charset of neither family as undefined (its TextDecoder is made
  // with an arrow function's `this`): compared for these, windows-1251 checked below.
  for (const defCharset of ['latin1', 'utf8', undefined]) {
    const { theirs, ours } = await both({ defCharset }, (m) => m.none(), formBody(B, parts))
    assert.equal(ours.err, undefined, String(defCharset))
    assert.deepEqual(body(ours), body(theirs), String(defCharset))
  }
  const r = await submit(multipart({ defCharset: 'windows-1251' }).none(), formBody(B, parts))
  assert.equal(r.req.body.a, 'Привет')
  const utf16 = await submit(multipart({ defCharset: 'utf-16le' }).none(), formBody(B, [{ name: 'u', data: Buffer.from('ü名', 'utf16le') }]))
  assert.equal(utf16.req.body.u, 'ü名')
  assert.throws(() => multipart({ defCharset: 'nope' }), /defCharset: unknown charset "nope"/)
  assert.throws(() => multipart({ defCharset: 8 }), /defCharset must be a string/)
})

test('defCharset in readMultipart', async () => {
  const bytes = formBody(B, [{ name: 'a', data: Buffer.from([0xcf, 0xf0, 0xe8]) }])
  const res = { onData (f) { res.data = f }, onAborted () {}, pause () {}, resume () {} }
  const read = readMultipart(res, { 'content-type': `multipart/form-data; boundary=${B}` }, { defCharset: 'windows-1251' })
  res.data(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), true)
  assert.equal((await read).fields.a, 'При')
})

test('streamHandler feeds the form: from req.rawBody (a consumed request), by pipe, or write and end', async () => {
  const bytes = formBody(B, [{ name: 'n', data: Buffer.from('v') }, { name: 'f', filename: 'f.txt', data: Buffer.from('file bytes') }])
  const handlers = {
    rawBody: (req, sink) => sink.end(req.rawBody),
    pipe: (req, sink) => req.pipe(sink),
    writes: (req, sink) => {
      for (let i = 0; i < req.rawBody.length; i += 7) sink.write(req.rawBody.subarray(i, i + 7))
      sink.end()
    },
    later: (req, sink) => setTimeout(() => Readable.from([req.rawBody]).pipe(sink), 5)
  }
  for (const [name, streamHandler] of Object.entries(handlers)) {
    const consumed = name !== 'pipe'
    const make = () => consumed ? Object.assign(new PassThrough(), { rawBody: bytes }) : null
    for (const [who, m] of [['multer', multer], ['multipart', multipart]]) {
      const req = make() || requestOf(bytes)
      req.headers = { 'content-type': `multipart/form-data; boundary=${B}`, 'content-length': String(bytes.length) }
      // A consumed request (Cloud Functions): its stream ended long ago.
      if (consumed) req.end()
      const r = await new Promise((resolve) => {
        m({ streamHandler }).single('f')(req, null, (err) => resolve({ err, req }))
        if (!consumed) req.end(bytes)
      })
      assert.equal(r.err, undefined, `${who} ${name}`)
      assert.deepEqual([body(r), r.req.file.originalname, r.req.file.buffer.toString()], [{ n: 'v' }, 'f.txt', 'file bytes'], `${who} ${name}`)
    }
  }
  // A cut form fed by the handler is the form's error; what the handler throws is the request's.
  const cut = await submit(multipart({ streamHandler: (req, sink) => sink.end(bytes.subarray(0, 60)) }).any(), bytes)
  assert.equal(cut.err.code, 'ERR_MULTIPART_TRUNCATED')
  const thrown = await submit(multipart({ streamHandler: () => { throw new Error('handler broke') } }).any(), bytes)
  assert.equal(thrown.err.message, 'handler broke')
  assert.throws(() => multer({ streamHandler: 'pipe' }), { name: 'TypeError', message: 'Expected streamHandler to be a function' })
  assert.throws(() => multipart({ streamHandler: 'pipe' }), { name: 'TypeError', message: 'Expected streamHandler to be a function' })
})

test('diskStorage flush: each file is fsynced before it is stored, and a removal waits for it', async (t) => {
  const synced = []
  const fsync = fs.fsync
  fs.fsync = (fd, cb) => { synced.push(fd); return fsync(fd, cb) }
  t.after(() => { fs.fsync = fsync })
  const dest = path.join(dir, 'flush')
  const bytes = formBody(B, [{ name: 'f', filename: 'a', data: Buffer.alloc(1000, 1) }, { name: 'f', filename: 'b', data: Buffer.alloc(10, 2) }])
  const r = await submit(multipart({ storage: multipart.diskStorage({ destination: dest, flush: true }) }).array('f'), bytes)
  assert.equal(r.err, undefined)
  assert.equal(synced.length, 2)
  assert.deepEqual(r.req.files.map((f) => fs.readFileSync(f.path).length), [1000, 10])
  const plain = await submit(multipart({ storage: multipart.diskStorage({ destination: dest }) }).array('f'), bytes)
  assert.equal(plain.err, undefined)
  assert.equal(synced.length, 2, 'no flush without the option')
  // A failure after the files were written removes them, flushed or being flushed.
  const rm = path.join(dir, 'flush-rm')
  const failed = await submit(multipart({ storage: multipart.diskStorage({ destination: rm, flush: true }), limits: { files: 1 } }).any(), bytes)
  assert.equal(failed.err.code, 'LIMIT_FILE_COUNT')
  assert.deepEqual(fs.readdirSync(rm), [])
  // A failure while a file is being flushed: it is removed once flushed.
  const order = []
  const unlink = fs.unlink
  fs.fsync = (fd, cb) => setTimeout(() => fsync(fd, (err) => { order.push('fsynced'); cb(err) }), 50)
  fs.unlink = (at, cb) => { order.push('unlink'); return unlink(at, cb) }
  t.after(() => { fs.unlink = unlink })
  const during = formBody(B, [{ name: 'f', filename: 'a', data: Buffer.alloc(10) }, { name: 'x', data: Buffer.from('too long') }])
  const slow = await submit(multipart({ storage: multipart.diskStorage({ destination: rm, flush: true }), limits: { fieldSize: 2 } }).any(), during)
  assert.equal(slow.err.code, 'LIMIT_FIELD_VALUE')
  assert.deepEqual([order, fs.readdirSync(rm)], [['fsynced', 'unlink'], []])
})

test('limits as a function of the request: multipart() and readMultipart call it per request', async () => {
  const bytes = formBody(B, [{ name: 'f', filename: 'f', data: Buffer.alloc(100) }])
  const seen = []
  const limits = (req) => { seen.push(req); return { fileSize: req.max } }
  const upload = multipart({ limits }).single('f')
  const small = await submit(upload, bytes, undefined, { max: 10 })
  assert.equal(small.err.code, 'LIMIT_FILE_SIZE')
  const large = await submit(upload, bytes, undefined, { max: 1000 })
  assert.equal(large.err, undefined)
  assert.deepEqual(seen, [small.req, large.req])
  const invalid = await submit(multipart({ limits: () => ({ fileSize: 1.5 }) }).none(), bytes)
  assert.equal(invalid.err.message, 'Expected limits.fileSize to be a non-negative integer or Infinity')

  const read = (options, headers) => {
    const res = { onData (f) { res.data = f }, onAborted () {}, pause () {}, resume () {} }
    const p = readMultipart(res, headers, options)
    res.data(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), true)
    return p
  }
  const headers = { 'content-type': `multipart/form-data; boundary=${B}`, max: 10 }
  const got = []
  await assert.rejects(read({ limits: (req) => { got.push(req); return { fileSize: req.max } } }, headers), { code: 'LIMIT_FILE_SIZE' })
  assert.deepEqual(got, [headers])
  assert.equal((await read({ limits: () => undefined }, headers)).files.length, 1)
  await assert.rejects(read({ limits: () => { throw new Error('no limits for you') } }, headers), { message: 'no limits for you' })
  await assert.rejects(read({ limits: () => ({ fileSize: -1 }) }, headers), { name: 'TypeError' })
})

test('a malformed body: busboy\'s message, as multer passes it on, with uws-body\'s code and status', async () => {
  const head = `--${B}\r\nContent-Disposition: form-data; name="f"; filename="t.txt"\r\nContent-Type: text/plain\r\n\r\n`
  const cases = [
    [Buffer.from('test'), 'multipart/form-data', 'Multipart: Boundary not found', 400, 'ERR_MULTIPART_BOUNDARY'],
    [Buffer.from(head + 'no end delimiter'), undefined, 'Unexpected end of form', 400, 'ERR_MULTIPART_TRUNCATED'],
    [Buffer.from(head + `--${B}--\r\n`), undefined, 'Malformed part header', 400, 'ERR_MULTIPART_HEADER'],
    [Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--${B.slice(0, -1)}`), undefined, 'Unexpected end of form', 400, 'ERR_MULTIPART_TRUNCATED'],
    [Buffer.from('x'), `multipart/mixed; boundary=${B}`, `Unsupported content type: multipart/mixed; boundary=${B}`, 415, 'ERR_MULTIPART_CONTENT_TYPE']
  ]
  for (const [bytes, type, message, status, code] of cases) {
    const { theirs, ours } = await both({}, (m) => m.single('f'), bytes, type)
    assert.equal(theirs.err.message, message, 'multer 2.5 says so')
    assert.deepEqual([ours.err.message, ours.err.status, ours.err.code], [message, status, code])
  }
})

test('streamHandler under ultimate-express: a pipe of the request, or bytes of its own; a cut form is the form\'s error', async (t) => {
  const ultimateExpress = require('ultimate-express')
  const bytes = formBody(B, [{ name: 'n', data: Buffer.from('v') }, { name: 'f', filename: 'f', data: Buffer.alloc(3 << 20, 7) }])
  const own = formBody(B, [{ name: 'n', data: Buffer.from('own') }, { name: 'f', filename: 'f', data: Buffer.alloc(5) }])
  const app = ultimateExpress()
  const answer = (req, res) => res.send(`${req.body.n} ${req.files[0].size}`)
  app.post('/pipe', multipart({ streamHandler: (req, sink) => req.pipe(sink) }).any(), answer)
  app.post('/own', multipart({ streamHandler: (req, sink) => sink.end(own) }).any(), answer)
  app.use((err, req, res, next) => res.status(err.status || 500).send(`${err.code} ${err.message}`))
  const port = await new Promise((resolve) => app.listen(0, '127.0.0.1', () => resolve(app.port)))
  t.after(() => app.close())
  const post = async (where, body) => {
    const r = await fetch(`http://127.0.0.1:${port}${where}`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${B}` }, body })
    return `${r.status} ${await r.text()}`
  }
  assert.equal(await post('/pipe', bytes), `200 v ${3 << 20}`)
  assert.equal(await post('/own', bytes), '200 own 5')
  assert.equal(await post('/pipe', bytes.subarray(0, 1000)), '400 ERR_MULTIPART_TRUNCATED Unexpected end of form')
})

test('file.stream\'s highWaterMark: Node\'s Readable default, as busboy\'s (multer\'s), unless fileHwm or highWaterMark sets it', async () => {
  const bytes = formBody(B, [{ name: 'f', filename: 'a.txt', data: Buffer.from('file content') }])
  const marks = []
  const storage = {
    _handleFile (req, file, cb) { marks.push(file.stream.readableHighWaterMark); file.stream.resume(); file.stream.on('end', () => cb(null, {})) },
    _removeFile (req, file, cb) { cb(null) }
  }
  for (const options of [{}, { fileHwm: 1024 }, { highWaterMark: 2048 }]) {
    for (const m of [multer, multipart]) {
      const r = await submit(m({ storage, ...options }).single('f'), bytes)
      assert.equal(r.err, undefined)
    }
  }
  const node = new Readable().readableHighWaterMark
  // multer's highWaterMark is busboy's parser buffer; multipart() has none, and gives it to the files.
  assert.deepEqual(marks, [node, node, 1024, 1024, node, 2048])
  // readMultipart's streams keep uws-body's mark (bodyStream's).
  const res = { onData (f) { res.data = f }, onAborted () {}, pause () {}, resume () {} }
  const read = readMultipart(res, { 'content-type': `multipart/form-data; boundary=${B}` }, { storage })
  res.data(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), true)
  await read
  assert.equal(marks.at(-1), 512 * 1024)
})
