'use strict'
// What one Buffer and one string can hold, on the Node version running: a body over it is
// the client's 413, before any byte is read where the length is declared, and never a
// crash, a plain Error or a second free.
//   Buffer (finish(), readBody, the raw parser): buffer.constants.MAX_LENGTH, 2^32 on
//     Node 20, 2^53 - 1 on Node 22 and later (then memory is the only bound).
//   String (finishString(), readText, the json/text/urlencoded parsers):
//     buffer.constants.MAX_STRING_LENGTH (2^29 - 24 on Node 20, 22 and 24) UTF-16 units:
//     a latin1 body's bytes, a utf16le body's units, and for utf8 its characters when they
//     all fit one byte (the native tier makes such text a one-byte string), else its bytes
//     (V8's UTF-8 decoder checks the byte length).
const test = require('node:test')
const assert = require('node:assert/strict')
const os = require('node:os')
const { constants: { MAX_LENGTH, MAX_STRING_LENGTH } } = require('node:buffer')
const { BodyAccumulator, setMemoryBudget } = require('..')
const { defaultBudget } = require('../lib/body/budget')
const { runChild, ending } = require('./helpers/child')

const NODE_MAJOR = Number(process.versions.node.split('.')[0])
const GIB = 2 ** 30
const MIB = 2 ** 20

test('a declared length of exactly what one Buffer holds is taken: the cap is inclusive', () => {
  // Without a memory budget: the default one (a share of this machine's memory) refuses
  // a declared length larger than itself before the cap is reached (budget.test.js).
  setMemoryBudget(Infinity)
  try {
    const acc = new BodyAccumulator({ limit: Infinity, contentLength: String(MAX_LENGTH) })
    assert.equal(acc.error, null, `Node ${process.version}: ${MAX_LENGTH} bytes`)
    assert.ok(acc.capacity <= MIB, 'no more than maxPreallocated is taken before bytes arrive')
    acc.abort()
  } finally {
    setMemoryBudget(defaultBudget())
  }
})

test('a declared length over what one Buffer holds is a 413 at once, with that limit', () => {
  // As a client sends it: a header string (a number over 2^53 is not a length at all).
  const acc = new BodyAccumulator({ limit: Infinity, contentLength: String(MAX_LENGTH + 1) })
  assert.equal(acc.error && acc.error.status, 413)
  assert.equal(acc.error.code, 'ERR_BODY_TOO_LARGE')
  assert.equal(acc.error.limit, MAX_LENGTH, 'the limit that applied: the largest Buffer')
  assert.equal(acc.capacity, 0)
  assert.equal(new BodyAccumulator({ limit: Infinity }).error, null, 'an unbounded limit is still a limit')
})

test('limit: Infinity is 4 GiB on Node 20 only: later versions take a longer body', () => {
  const acc = new BodyAccumulator({ limit: Infinity, contentLength: String(5 * GIB) })
  if (NODE_MAJOR <= 20) {
    assert.equal(acc.error && acc.error.code, 'ERR_BODY_TOO_LARGE')
    assert.equal(acc.error.limit, 2 ** 32)
  } else {
    assert.equal(acc.error, null)
    assert.ok(acc.capacity <= 1024 * 1024, 'no more than maxPreallocated is taken before bytes arrive')
  }
  acc.abort()
})

const BIG = os.totalmem() < 16 * GIB && `needs 16 GiB of memory (this machine has ${(os.totalmem() / GIB).toFixed(1)})`

test('one byte over 4 GiB: Node 20 refuses the Buffer (freed once, by Node); Node 22+ makes it', { skip: BIG }, () => {
  // Straight through the native functions, as any code that loads the .node file can, past
  // the JS layer's own cap. Node 20 frees the block and throws (the old copy fallback freed
  // it again: SIGSEGV); Node 22 and later hand out a Buffer of 2^32 + 1 bytes.
  const source = `
    const native = require(ROOT + '/lib/native/native')
    const N = 2 ** 32 + 1
    const chunk = Buffer.alloc(256 * 1024 * 1024, 7)
    // Preallocated whole: one allocation, no growth copies (this test moves 4 GiB).
    const body = native.create(N, N, N, null, true)
    for (let sent = 0; sent < N;) {
      const n = Math.min(chunk.length, N - sent)
      if (native.push(body, chunk.subarray(0, n)) !== true) throw new Error('push refused')
      sent += n
    }
    const out = {}
    try {
      const buf = native.finish(body)
      out.length = buf.length
      out.ends = [buf[0], buf[buf.length - 1]]
    } catch (err) { out.code = err.code }
    // Node frees an external Buffer's block from a finalizer it queues after the GC that
    // collected it, a turn or more later under load: asked again each turn, for up to 2 s.
    let turns = 0
    const freed = () => {
      globalThis.gc()
      out.inUse = native.stats().bytesInUse
      if (out.inUse === 0 || ++turns === 200) console.log(JSON.stringify(out))
      else setTimeout(freed, 10)
    }
    setImmediate(freed)`
  const r = runChild(source, { timeout: 180000 })
  assert.equal(r.status, 0, ending(r))
  const out = JSON.parse(r.stdout)
  if (NODE_MAJOR <= 20) {
    assert.equal(out.code, 'ERR_BUFFER_TOO_LARGE', 'Node\'s own error, not a crash')
  } else {
    assert.deepEqual([out.length, out.ends], [2 ** 32 + 1, [7, 7]])
  }
  assert.equal(out.inUse, 0, 'freed once')
})

test('a body longer than a string can be: a 413 BodyError from finishString, for each encoding', { skip: os.totalmem() < 8 * GIB && 'needs 8 GiB of memory' }, () => {
  // MAX_STRING_LENGTH bytes is the longest ASCII or latin1 body a string holds, 2x that
  // for utf16le; other encodings go through Buffer.toString, whose ERR_STRING_TOO_LONG is
  // mapped the same way.
  const source = `
    const { BodyAccumulator } = require(ROOT)
    const { constants: { MAX_STRING_LENGTH: MAX } } = require('node:buffer')
    const ascii = Buffer.alloc(64 * 1024 * 1024, 0x61)
    // Not one-byte: from Node 24 Buffer.toString decodes it (lib/body/accumulator.js).
    const cjk = Buffer.from(ascii)
    Buffer.from('\u4e16').copy(cjk)
    const out = []
    for (const [n, encoding, chunk = ascii] of [[MAX, 'utf8'], [MAX + 1, 'utf8'], [MAX + 1, 'utf8', cjk], [MAX + 1, 'latin1'], [2 * MAX + 2, 'utf16le'], [MAX / 2 + 1, 'hex']]) {
      const acc = new BodyAccumulator({ contentLength: n, limit: '2gb' })
      for (let at = 0; at < n; at += chunk.length) acc.push(chunk.subarray(0, Math.min(chunk.length, n - at)))
      try {
        out.push([encoding, n, 'string', acc.finishString(encoding).length])
      } catch (err) {
        out.push([encoding, n, err.name, err.status, err.code, err.type, err.limit, err.received, acc.error === err, acc.length])
      }
    }
    console.log(JSON.stringify(out))`
  const r = runChild(source, { timeout: 180000 })
  assert.equal(r.status, 0, ending(r))
  const MAX = MAX_STRING_LENGTH
  const tooLong = (encoding, n) => [encoding, n, 'BodyError', 413, 'ERR_BODY_STRING_TOO_LONG', 'entity.too.large', MAX, n, true, 0]
  assert.deepEqual(JSON.parse(r.stdout), [
    ['utf8', MAX, 'string', MAX],
    tooLong('utf8', MAX + 1),
    // UTF-8 with characters over U+00FF: V8's decoder counts its bytes, Node 24's
    // Buffer.toString the characters it makes (a 3-byte one at each 64 MiB chunk's start).
    NODE_MAJOR >= 24 ? ['utf8', MAX + 1, 'string', MAX + 1 - 2 * Math.ceil((MAX + 1) / (64 * MIB))] : tooLong('utf8', MAX + 1),
    tooLong('latin1', MAX + 1),
    tooLong('utf16le', 2 * MAX + 2),
    tooLong('hex', MAX / 2 + 1)
  ])
})
