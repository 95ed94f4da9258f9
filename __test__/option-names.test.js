'use strict'
// A misspelt option is a TypeError naming the closest known name, in every API that takes
// options, thrown where the options are read (the call, or when the middleware is made):
// ignored, `limt: '1mb'` would keep the default limit and nobody would know. The one
// exception is BodyAccumulator, the per-body building block, whose names are not checked
// (docs/api.md says why).
const test = require('node:test')
const assert = require('node:assert/strict')
const uwsBody = require('..')

const res = () => ({ onData () {}, onAborted () {}, pause () {}, resume () {}, writeStatus () { return this }, writeHeader () { return this }, end () {}, cork (f) { f() } })
const headers = { 'content-type': 'multipart/form-data; boundary=b', 'content-length': '10' }
const quiet = (made) => { if (made && typeof made.catch === 'function') made.catch(() => {}) }

const CASES = [
  ['readBody', (o) => quiet(uwsBody.readBody(res(), headers, o)), { limt: 1 }, 'limit'],
  ['readText', (o) => quiet(uwsBody.readText(res(), headers, o)), { encodng: 'utf8' }, 'encoding'],
  ['bodyStream', (o) => uwsBody.bodyStream(res(), headers, o), { highWatermark: 1 }, 'highWaterMark'],
  ['readMultipart', (o) => quiet(uwsBody.readMultipart(res(), headers, o)), { limitz: 1 }, 'limits'],
  ['json', (o) => uwsBody.json(o), { strct: false }, 'strict'],
  ['raw', (o) => uwsBody.raw(o), { tpye: '*/*' }, 'type'],
  ['text', (o) => uwsBody.text(o), { defaultCharst: 'utf-8' }, 'defaultCharset'],
  ['urlencoded', (o) => uwsBody.urlencoded(o), { parameterLimt: 3 }, 'parameterLimit'],
  ['multipart', (o) => uwsBody.multipart(o), { fileFiltr () {} }, 'fileFilter'],
  ['multipart limits', (o) => uwsBody.multipart({ limits: o }), { fileSise: 1 }, 'fileSize'],
  ['diskStorage', (o) => uwsBody.multipart.diskStorage(o), { filenme () {} }, 'filename'],
  ['linger', (o) => uwsBody.json({ linger: o }), { byte: 1 }, 'bytes'],
  ['answerError', (o) => uwsBody.answerError(res(), new Error('x'), o), { contentTyp: 'text/plain' }, 'contentType']
]

test('a misspelt option is a TypeError naming the closest known one, in every API', () => {
  for (const [api, use, options, near] of CASES) {
    assert.throws(() => use(options), (err) => err instanceof TypeError && err.message.includes(`(did you mean "${near}"?)`), api)
  }
})

test('the right names pass, and a name unlike any known one lists them', () => {
  uwsBody.json({ limit: '1mb', strict: true, reviver: null, type: 'application/json', verify: undefined, inflate: true, timeout: 1000, linger: { bytes: '1mb', timeout: 100 } })
  uwsBody.urlencoded({ extended: true, parameterLimit: 10, depth: 2, defaultCharset: 'utf-8', charsetSentinel: false, interpretNumericEntities: false })
  quiet(uwsBody.readText(res(), headers, { encoding: 'latin1', limit: 10, maxPreallocated: 10, inflate: false, timeout: 10, linger: false, onAborted () {} }))
  assert.throws(() => uwsBody.raw({ zzzzzzzz: 1 }), /unknown parser option "zzzzzzzz"; known: inflate, limit, type/)
})

test('an option that means nothing to an API is refused as an unknown one: bodyStream\'s maxPreallocated', () => {
  // A stream preallocates nothing; taken and ignored, it would look like a bound it is not.
  assert.throws(() => uwsBody.bodyStream(res(), headers, { maxPreallocated: 1 }), { name: 'TypeError', message: /unknown bodyStream option "maxPreallocated"/ })
})

test('BodyAccumulator does not check its option names (its per-body cost would be a third of a tiny body\'s)', () => {
  const acc = new uwsBody.BodyAccumulator({ limt: 1, contentLength: '0' })
  assert.equal(acc.finish().length, 0)
})
