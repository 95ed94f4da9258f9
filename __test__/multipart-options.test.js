'use strict'
// One meaning per option in both multipart APIs: readMultipart and multipart() take the
// same limits and shared options, refuse the same mistakes with the same TypeError (at
// the call for readMultipart, when the middleware is made for multipart()), and treat a
// missing destination the same way (made).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { readMultipart, multipart } = require('..')

const res = () => ({ onData () {}, onAborted () {}, pause () {}, resume () {} })
const headers = { 'content-type': 'multipart/form-data; boundary=b' }
const viaRead = (options) => readMultipart(res(), headers, options)
const viaMulter = (options) => multipart(options)

/** What each API does with `options`: 'ok' or the TypeError's message. */
function outcome (make, options) {
  try {
    const made = make(options)
    if (made && typeof made.catch === 'function') made.catch(() => {})
    return 'ok'
  } catch (err) {
    assert.ok(err instanceof TypeError, `${JSON.stringify(options)}: ${err}`)
    // Each API lists its own option names after '; known:'.
    return err.message.replace(/readMultipart option|multipart option/, 'option').replace(/; known: .*/, '')
  }
}

const SAME = [
  [{ limits: { fileSize: 1.5 } }, /Expected limits.fileSize to be a non-negative integer or Infinity/],
  [{ limits: { fileSize: -1 } }, /Expected limits.fileSize/],
  [{ limits: { fileSize: Infinity, files: 0, fieldNestingDepth: 3, fieldArrayIndexLimit: 10, headerSize: 100 } }, 'ok'],
  [{ limits: { fileSizes: 10 } }, /unknown limit "fileSizes" \(did you mean "fileSize"\?\)/],
  [{ limits: 'many' }, /limits must be an object/],
  [{ defParamCharset: 'utf-16le' }, 'ok'],
  [{ defParamCharset: 'koi8-r' }, 'ok'],
  [{ defParamCharset: 'nope' }, /unknown charset "nope"/],
  [{ defParamCharset: 8 }, /defParamCharset must be a string/],
  [{ defCharset: 'windows-1251' }, 'ok'],
  [{ defCharset: 'utf-16le' }, 'ok'],
  [{ defCharset: 'nope' }, /defCharset: unknown charset "nope"/],
  [{ defCharset: 8 }, /defCharset must be a string/],
  [{ limits: () => ({ fileSize: 1 }) }, 'ok'],
  [{ limit: '10mb', timeout: 1000, highWaterMark: 1 << 16, maxPreallocated: 0 }, 'ok'],
  [{ limit: ' 10kb ' }, /invalid limit/],
  [{ timeout: -1 }, /timeout must be/],
  [{ highWaterMark: 'big' }, /highWaterMark must be a non-negative number/],
  [{ limt: 10 }, /unknown option "limt" \(did you mean "limit"\?\)/]
]

test('the same options mean the same in readMultipart and multipart()', () => {
  for (const [options, want] of SAME) {
    const a = outcome(viaRead, options)
    const b = outcome(viaMulter, options)
    assert.equal(a, b, `${JSON.stringify(options)}: readMultipart ${a}, multipart() ${b}`)
    if (want === 'ok') assert.equal(a, 'ok', JSON.stringify(options))
    else assert.match(a, want, JSON.stringify(options))
  }
})

test('a missing destination is made by both', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-mpopt-'))
  try {
    const a = path.join(root, 'a', 'b')
    viaRead({ storage: { dest: a } }).catch(() => {})
    assert.ok(fs.statSync(a).isDirectory())
    const c = path.join(root, 'c', 'd')
    viaMulter({ dest: c })
    assert.ok(fs.statSync(c).isDirectory())
    const e = path.join(root, 'e')
    multipart.diskStorage({ destination: e })
    assert.ok(fs.statSync(e).isDirectory())
    assert.throws(() => multipart.diskStorage({ destnation: e }), /unknown diskStorage option "destnation" \(did you mean "destination"\?\)/)
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
})
