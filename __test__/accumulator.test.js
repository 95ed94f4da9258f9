'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const { BodyAccumulator, BodyError, JS_TIER_MAX, FIRST_CHUNK_MAX, stats } = require('..')
const { bodyOf } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const MIB = 1024 * 1024

// Where an accumulator keeps its bytes (lib/body/body-store.js): the native core's handle, or
// the JS tier's Buffer.
const nativeTier = (acc) => 'handle' in acc._store
const bufferOf = (acc) => acc._store.buf

// Sizes on both sides of the JS/native tier boundary and of the preallocation cap.
const SIZES = [0, 1, 100, FIRST_CHUNK_MAX - 1, FIRST_CHUNK_MAX, FIRST_CHUNK_MAX + 1, JS_TIER_MAX - 1, JS_TIER_MAX, JS_TIER_MAX + 1, 3 * MIB]

function feed (acc, body, step, as = 'arraybuffer') {
  for (let i = 0; i < body.length || i === 0; i += step) {
    const piece = body.subarray(i, i + step)
    // uWS hands an ArrayBuffer of exactly the chunk; copy so the test's own bytes can
    // be scribbled over afterwards, the way uWS reuses its receive buffer.
    const chunk = as === 'arraybuffer' ? piece.buffer.slice(piece.byteOffset, piece.byteOffset + piece.length) : piece
    const accepted = acc.push(chunk)
    if (as === 'arraybuffer') new Uint8Array(chunk).fill(0xee)
    if (!accepted) return false
    if (body.length === 0) break
  }
  return true
}

test('every byte comes back, any size, any chunking, with and without content-length', async () => {
  roundTrips()
  assert.equal(await bytesInUseAfterGc(), 0)
})

function roundTrips () {
  for (const size of SIZES) {
    const body = bodyOf(size)
    for (const step of [1, 1000, 65483, 524288]) {
      if (step < 1000 && size > 200000) continue
      for (const contentLength of [size, String(size), undefined]) {
        const acc = new BodyAccumulator({ contentLength, limit: 8 * MIB })
        assert.equal(feed(acc, body, step), true)
        assert.equal(acc.received, size)
        const out = acc.finish()
        assert.ok(Buffer.isBuffer(out))
        assert.ok(out.equals(body), `size ${size} step ${step} length ${contentLength}`)
      }
    }
  }
}

test('accepts any ArrayBufferView and copies before returning', () => {
  const body = bodyOf(5000)
  for (const make of [(b) => new Uint8Array(b), (b) => new DataView(b.buffer, b.byteOffset, b.length), (b) => Buffer.from(b)]) {
    const acc = new BodyAccumulator({ contentLength: 5000 })
    const view = make(Buffer.from(body))
    acc.push(view)
    new Uint8Array(view.buffer, view.byteOffset, view.byteLength).fill(0)
    assert.ok(acc.finish().equals(body))
  }
  const words = new Uint32Array([1, 2])
  const acc = new BodyAccumulator({})
  acc.push(words)
  assert.equal(acc.finish().length, 8)
})

test('empty body gives an empty Buffer', () => {
  for (const contentLength of [0, '0', undefined, null, '']) {
    const acc = new BodyAccumulator({ contentLength })
    acc.push(new ArrayBuffer(0))
    const out = acc.finish()
    assert.ok(Buffer.isBuffer(out))
    assert.equal(out.length, 0)
  }
  assert.equal(new BodyAccumulator().finish().length, 0, 'finish without any push')
})

test('preallocates the declared length, capped by maxPreallocated', () => {
  // A body read in JS makes its Buffer with its first bytes (lib/body/accumulator.js).
  const js = new BodyAccumulator({ contentLength: 1000 })
  assert.equal(js.capacity, 0)
  js.push(new Uint8Array(1))
  assert.equal(js.capacity, 1000)
  js.abort()
  // Native blocks are rounded up to the pool's size class: at most 25% more.
  const withinClass = (capacity, n) => capacity >= n && capacity <= n * 1.25
  const mid = new BodyAccumulator({ contentLength: 500000, limit: '1mb' })
  assert.ok(withinClass(mid.capacity, 500000), String(mid.capacity))
  mid.abort()
  const big = new BodyAccumulator({ contentLength: 64 * MIB, limit: '100mb' })
  assert.equal(big.capacity, MIB)
  big.push(new Uint8Array(1))
  assert.equal(big.capacity, MIB, 'one byte sent: no more memory than the cap')
  big.abort()
  assert.equal(big.capacity, 0)
  const small = new BodyAccumulator({ contentLength: 300000, limit: '1mb', maxPreallocated: 100000 })
  assert.ok(withinClass(small.capacity, 100000), String(small.capacity))
  small.abort()
})

test('declared length over the limit: 413 at construction, nothing stored', () => {
  for (const contentLength of [101, '101', '99999999999999999999999']) {
    const acc = new BodyAccumulator({ contentLength, limit: 100 })
    assert.ok(acc.error instanceof BodyError)
    assert.equal(acc.error.status, 413)
    assert.equal(acc.error.statusCode, 413)
    assert.equal(acc.error.type, 'entity.too.large')
    assert.equal(acc.error.expose, true)
    assert.equal(acc.error.limit, 100)
    assert.equal(acc.capacity, 0)
    assert.equal(acc.push(new Uint8Array(10)), false)
    assert.equal(acc.received, 0)
    assert.throws(() => acc.finish(), (e) => e === acc.error)
  }
})

test('bytes beyond the limit: 413 as they arrive, memory released, same error after', async () => {
  for (const limit of [10, FIRST_CHUNK_MAX * 2, JS_TIER_MAX * 2]) {
    const acc = new BodyAccumulator({ limit })
    assert.equal(acc.push(new Uint8Array(limit)), true)
    assert.equal(acc.push(new Uint8Array(1)), false)
    const error = acc.error
    assert.equal(error.status, 413)
    assert.equal(error.received, limit + 1)
    assert.equal(error.limit, limit)
    assert.equal(acc.capacity, 0)
    assert.equal(acc.push(new Uint8Array(1)), false, 'no work after the first error')
    assert.equal(acc.error, error, 'exactly once: the first error stays')
    assert.throws(() => acc.finish(), (e) => e === error)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('more bytes than content-length: 400 request.size.invalid', () => {
  for (const declared of [5, JS_TIER_MAX + 5]) {
    const acc = new BodyAccumulator({ contentLength: declared, limit: '2mb' })
    assert.equal(acc.push(new Uint8Array(declared - 1)), true)
    assert.equal(acc.push(new Uint8Array(2)), false)
    assert.equal(acc.error.status, 400)
    assert.equal(acc.error.type, 'request.size.invalid')
    assert.equal(acc.error.expected, declared)
    assert.equal(acc.error.received, declared + 1)
    assert.equal(acc.capacity, 0)
  }
})

test('fewer bytes than content-length at finish: 400, thrown again on retry', () => {
  for (const declared of [5, JS_TIER_MAX + 5]) {
    const acc = new BodyAccumulator({ contentLength: declared, limit: '2mb' })
    acc.push(new Uint8Array(3))
    let first
    assert.throws(() => acc.finish(), (e) => { first = e; return e.status === 400 && e.type === 'request.size.invalid' && e.received === 3 && e.expected === declared })
    assert.throws(() => acc.finish(), (e) => e === first)
    assert.equal(acc.capacity, 0)
  }
})

test('invalid content-length: 400 at construction', () => {
  for (const contentLength of ['abc', '-1', '1.5', '1e3', ' 5', '5, 5', '0x10', -1, 1.5, NaN, Infinity]) {
    const acc = new BodyAccumulator({ contentLength })
    assert.equal(acc.error?.status, 400, String(contentLength))
    assert.equal(acc.error.type, 'request.size.invalid')
    assert.equal(acc.push(new Uint8Array(1)), false)
  }
})

test('unsupported encoding: 415 before any byte is stored', () => {
  const acc = new BodyAccumulator({ contentEncoding: 'compress', contentLength: 10 })
  assert.equal(acc.error.status, 415)
  assert.equal(acc.error.type, 'encoding.unsupported')
  assert.equal(acc.error.encoding, 'compress')
  assert.equal(acc.capacity, 0)
  assert.equal(acc.push(new Uint8Array(10)), false)
  for (const contentEncoding of ['identity', 'IDENTITY', ' identity ', '']) {
    const ok = new BodyAccumulator({ contentEncoding, contentLength: 2 })
    ok.push(new Uint8Array(2))
    assert.equal(ok.finish().length, 2, contentEncoding)
  }
})

test('abort releases memory at once, is idempotent, and finish() then throws 400 request.aborted', async () => {
  const before = await bytesInUseAfterGc()
  for (const size of [100, MIB]) {
    const acc = new BodyAccumulator({ contentLength: size * 2, limit: '8mb' })
    acc.push(new Uint8Array(size))
    acc.abort()
    acc.abort()
    assert.equal(acc.capacity, 0)
    assert.equal(acc.error.type, 'request.aborted')
    assert.equal(acc.error.status, 400)
    assert.equal(acc.error.code, 'ECONNABORTED')
    assert.throws(() => acc.finish(), (e) => e.type === 'request.aborted')
    assert.throws(() => acc.push(new Uint8Array(1)), /push\(\) after abort\(\)/)
  }
  assert.equal(stats().bytesInUse, before, 'freed synchronously, without waiting for GC')
})

test('misuse: clear errors, never a crash', () => {
  const acc = new BodyAccumulator({ contentLength: 2 })
  for (const bad of [undefined, null, 'ab', 12, {}, [1, 2]]) {
    assert.throws(() => acc.push(bad), TypeError)
  }
  const big = new BodyAccumulator({ contentLength: MIB, limit: '2mb' })
  assert.throws(() => big.push('x'), TypeError)
  big.abort()

  const detached = new ArrayBuffer(8)
  structuredClone(detached, { transfer: [detached] })
  assert.throws(() => acc.push(detached), /detached/)
  assert.throws(() => new BodyAccumulator({ contentLength: MIB, limit: '2mb' }).push(detached), /detached/)

  for (const size of [2, MIB]) {
    const a = new BodyAccumulator({ contentLength: size, limit: '2mb' })
    a.push(new Uint8Array(size))
    a.finish()
    assert.throws(() => a.finish(), /finish\(\) after finish\(\)/)
    assert.throws(() => a.push(new Uint8Array(1)), /push\(\) after finish\(\)/)
    a.abort()
    assert.equal(a.error, null, 'abort after finish changes nothing')
  }
  for (const options of [{ limit: {} }, { limit: 'lots' }, { limit: -1 }, { maxPreallocated: '1mb' }, { contentLength: {} }, { contentEncoding: 5 }, 'x', 5]) {
    assert.throws(() => new BodyAccumulator(options), TypeError, JSON.stringify(options))
  }
})

test('limit accepts numbers and body-parser strings', () => {
  const acc = new BodyAccumulator({ limit: '1kb' })
  assert.equal(acc.push(new Uint8Array(1024)), true)
  assert.equal(acc.push(new Uint8Array(1)), false)
  assert.equal(new BodyAccumulator({ contentLength: 102401 }).error.limit, 102400, "default '100kb'")
  assert.equal(new BodyAccumulator({ limit: Infinity, contentLength: MIB }).error, null)
})

test('a dropped accumulator frees its native memory after GC', async () => {
  ;(() => {
    const acc = new BodyAccumulator({ contentLength: 2 * MIB, limit: '4mb' })
    acc.push(new Uint8Array(1000))
  })()
  assert.ok(stats().bytesInUse > 0)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a body read as UTF-8 text takes the native tier above 2 KiB before Node 24, and the string is the same from either tier', () => {
  const { AS_TEXT } = require('../lib/body/accumulator')
  const { TEXT_JS_TIER_MAX } = require('../lib/body/body-store')
  const below24 = Number(process.versions.node.split('.')[0]) < 24
  assert.equal(TEXT_JS_TIER_MAX, below24 ? 2048 : 192 * 1024)
  const line = Buffer.from('{"name":"caf\u00e9","n":12345,"tags":["a","b"]}\n')
  // ASCII, one-byte characters, wider ones, and invalid UTF-8 (replaced the same way).
  const contents = [Buffer.from('a'), line, Buffer.from('\u6f22\u5b57 \u20ac '), Buffer.from([0x61, 0xc3, 0x28, 0xe2, 0x82, 0xff, 0x62])]
  for (const unit of contents) {
    for (const size of [1, 2047, 2048, 2049, 4096, 65536, TEXT_JS_TIER_MAX, TEXT_JS_TIER_MAX + 1]) {
      const body = Buffer.alloc(size)
      for (let at = 0; at < size; at += unit.length) unit.copy(body, at)
      const expected = body.toString('utf8')
      for (const known of [true, false]) {
        const text = new BodyAccumulator({ contentLength: known ? size : undefined, limit: '1mb', [AS_TEXT]: true })
        const plain = new BodyAccumulator({ contentLength: known ? size : undefined, limit: '1mb' })
        assert.ok(feed(text, body, 65483) && feed(plain, body, 65483))
        const native = nativeTier(text)
        if (known) assert.equal(native, size > TEXT_JS_TIER_MAX, `${size} B: the tier of a text body of known length`)
        else if (below24) assert.equal(native, size > 2048, `${size} B: the tier of a text body of unknown length`)
        assert.equal(text.finishString('utf8'), expected, `${size} B as text`)
        assert.equal(plain.finishString('utf8'), expected, `${size} B`)
      }
    }
  }
})

// Node 24 reads UTF-8 text up to JS_TIER_MAX in JS (TEXT_JS_TIER_MAX), from Buffers
// lib/body/text-scratch.js reuses; earlier Nodes read text above 2 KiB natively.
const TEXT_IN_JS = Number(process.versions.node.split('.')[0]) >= 24 || 'before Node 24 text above 2 KiB is read natively (TEXT_JS_TIER_MAX): no scratch Buffer is used'
// A text body as the library's readers make one (a Body: its Buffer taken as it begins).
const textBody = (size, options = {}) => {
  const { Body } = require('../lib/body/accumulator')
  return new Body(MIB, MIB, true, options.contentLength === undefined ? size : options.contentLength, undefined, true)
}

test('text-scratch: classes from 1 KiB to the largest JS-tier text body, a bounded idle store', () => {
  const scratch = require('../lib/body/text-scratch')
  assert.ok(scratch.MAX >= JS_TIER_MAX, 'every JS-tier text body has a class')
  assert.equal(scratch.take(scratch.MIN - 1), null)
  assert.equal(scratch.take(scratch.MAX + 1), null)
  for (const n of [scratch.MIN, scratch.MIN + 1, 65536, 65537, JS_TIER_MAX, scratch.MAX]) {
    const buf = scratch.take(n)
    assert.ok(buf.length >= n && buf.length < 2 * n + scratch.MIN, `${n} B: a Buffer of ${buf.length}`)
    scratch.give(buf)
    assert.equal(scratch.take(n), buf, `${n} B: the Buffer given back is taken again`)
  }
  const held = []
  for (let i = 0; i < 2 * scratch.IDLE_MAX / scratch.MAX; i++) held.push(scratch.take(scratch.MAX))
  for (const buf of held) scratch.give(buf)
  assert.ok(scratch.idleSize() <= scratch.IDLE_MAX, `idle ${scratch.idleSize()} B, bound ${scratch.IDLE_MAX}`)
})

test('a text body of the JS tier reuses its Buffer: the next body of its size is read into the same memory', { skip: TEXT_IN_JS !== true && TEXT_IN_JS }, () => {
  const { TEXT_JS_TIER_MAX } = require('../lib/body/body-store')
  for (const size of [1024, 4096, 65536, TEXT_JS_TIER_MAX]) {
    const first = textBody(size)
    const memory = bufferOf(first)
    assert.ok(feed(first, Buffer.alloc(size, 'a'), 65483))
    assert.equal(first.finishString(), 'a'.repeat(size))
    const next = textBody(size)
    assert.equal(bufferOf(next), memory, `${size} B: the Buffer came back`)
    const beside = textBody(size)
    assert.notEqual(bufferOf(beside), memory, `${size} B: a body read at the same time has its own`)
    next.abort()
    beside.abort()
  }
})

test('a reused text Buffer shows no other body\'s bytes: as a string, as a Buffer, across tiers, after errors', { skip: TEXT_IN_JS !== true && TEXT_IN_JS }, () => {
  const long = () => {
    const acc = textBody(60000)
    assert.ok(feed(acc, Buffer.alloc(60000, 'x'), 65483))
    return acc.finishString()
  }
  // Shorter bodies in the class a 60000-byte one left its bytes in: known length, unknown
  // length in one chunk, and the unknown-length first chunk that a second sends native.
  long()
  const known = textBody(40000)
  assert.ok(feed(known, Buffer.alloc(40000, 'b'), 65483))
  assert.equal(known.finishString(), 'b'.repeat(40000))
  long()
  const unknown = textBody(0, { contentLength: null })
  assert.ok(unknown.push(Buffer.alloc(8000, 'c')))
  assert.equal(unknown.finishString(), 'c'.repeat(8000))
  long()
  const grown = textBody(0, { contentLength: null })
  assert.ok(grown.push(Buffer.alloc(8000, 'd')) && grown.push(Buffer.alloc(70000, 'e')))
  assert.equal(nativeTier(grown), true)
  assert.equal(grown.finishString(), 'd'.repeat(8000) + 'e'.repeat(70000), 'the first chunk went native without the bytes after it')
  long()
  // finish() on a text body: a Buffer of the body's length over memory of its own.
  const asBuffer = textBody(40000)
  assert.ok(feed(asBuffer, Buffer.alloc(40000, 'f'), 65483))
  const body = asBuffer.finish()
  assert.equal(body.length, 40000)
  assert.ok(body.every((b) => b === 0x66))
  assert.ok(!new Uint8Array(body.buffer).includes(0x78), 'the ArrayBuffer behind it holds none of the other body\'s bytes')
  assert.notEqual(bufferOf(textBody(40000)).buffer, body.buffer, 'and it is never handed out again')
  // A body that failed or was aborted gives its Buffer back once: two bodies after it
  // never share one.
  for (const end of ['fail', 'abort', 'finishString twice']) {
    const acc = textBody(50000)
    const memory = bufferOf(acc)
    if (end === 'fail') assert.equal(acc.push(Buffer.alloc(50001)), false)
    else if (end === 'abort') acc.abort()
    else {
      assert.ok(feed(acc, Buffer.alloc(50000, 'g'), 65483))
      acc.finishString()
      assert.throws(() => acc.finishString(), /after finish/)
    }
    acc.abort()
    const a = textBody(50000)
    const b = textBody(50000)
    assert.equal(bufferOf(a), memory, `${end}: the Buffer came back`)
    assert.notEqual(bufferOf(a), bufferOf(b), `${end}: given back once`)
    a.abort()
    b.abort()
  }
  // Fewer bytes than declared: the body's error, and the Buffer back.
  const short = textBody(30000)
  const memory = bufferOf(short)
  assert.ok(short.push(Buffer.alloc(100)))
  assert.throws(() => short.finishString(), (err) => err.code === 'ERR_BODY_LENGTH_MISMATCH')
  assert.equal(bufferOf(textBody(30000)), memory)
})

test('a body of unknown length keeps a first chunk of up to 16 KiB in JS and reads a larger one natively', () => {
  // A larger first chunk, kept in JS and then copied on when a second chunk came, cost
  // each body fresh memory (lib/body/accumulator.js, FIRST_CHUNK_MAX).
  assert.equal(FIRST_CHUNK_MAX, 16 * 1024)
  for (const size of [1, 16 * 1024, 16 * 1024 + 1, 48 * 1024, 65483]) {
    const acc = new BodyAccumulator({ limit: '1mb' })
    const first = Buffer.alloc(size, 7)
    assert.equal(acc.push(first), true)
    assert.equal(nativeTier(acc), size > 16 * 1024, `a first chunk of ${size} B: its tier`)
    assert.equal(acc.push(Buffer.alloc(65483, 9)), true)
    assert.equal(nativeTier(acc), true, 'a second chunk: native')
    const body = acc.finish()
    assert.equal(body.length, size + 65483)
    assert.ok(body.subarray(0, size).every((b) => b === 7) && body.subarray(size).every((b) => b === 9), `${size} B: every byte`)
  }
})
