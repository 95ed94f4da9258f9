'use strict'
// The stream functions of the addon as any JavaScript can call them: wrong handles, rooms
// that are not a writable Uint8Array of this thread, a room over the chunk it decodes,
// calls in the wrong state. Each is a TypeError or an Error with a code, never a crash,
// and nothing is held afterwards.
const test = require('node:test')
const assert = require('node:assert/strict')
const zlib = require('node:zlib')
const native = require('../lib/native/native')
const { bytesInUseAfterGc } = require('./helpers/memory')

const gzip = () => native.streamCreate(-1, 1e9, 'gzip', true)
const identity = () => native.streamCreate(-1, 1e9, null, true)

test('a body\'s handle is not a stream\'s, nor the other way round', () => {
  const body = native.create(-1, 1000, 1000, null, true)
  const stream = identity()
  for (const name of ['streamWrite', 'streamRead', 'streamEnd', 'streamAbort', 'streamError']) {
    assert.throws(() => native[name](body, Buffer.alloc(4), Buffer.alloc(4), 0), { name: 'TypeError', message: `${name}: not a body stream` })
  }
  for (const name of ['push', 'finish', 'abort', 'error', 'sizes']) {
    assert.throws(() => native[name](stream, Buffer.alloc(4)), { name: 'TypeError', message: `${name}: not a body` })
  }
  native.abort(body)
  native.streamAbort(stream)
})

test('the room must be a Uint8Array of unshared, attached memory, and the offset an index into it', () => {
  const stream = gzip()
  const chunk = Buffer.from([0x1f])
  const detached = new Uint8Array(new ArrayBuffer(8))
  structuredClone(detached.buffer, { transfer: [detached.buffer] })
  const rooms = [undefined, null, 1, 'room', {}, [], new ArrayBuffer(8), new Uint16Array(8), new DataView(new ArrayBuffer(8)),
    new Uint8Array(new SharedArrayBuffer(8)), detached, new Uint8Array(0)]
  if (typeof ArrayBuffer.prototype.resize === 'function') { // resizable ArrayBuffers: Node 20+
    const resizable = new ArrayBuffer(64, { maxByteLength: 128 })
    rooms.push(new Uint8Array(resizable, 32, 16))
    resizable.resize(16)
  }
  for (const room of rooms) {
    assert.throws(() => native.streamWrite(stream, chunk, room, 0), { name: 'TypeError' }, String(room && room.constructor.name))
    assert.throws(() => native.streamRead(stream, room, 0), { name: 'TypeError' })
  }
  for (const offset of [undefined, -1, 1.5, 9, NaN, Infinity, '0', 0n]) {
    assert.throws(() => native.streamRead(stream, Buffer.alloc(8), offset), { name: 'TypeError' }, String(offset))
  }
  // The end of the room is an index too: no room, nothing decoded.
  assert.equal(native.streamRead(stream, Buffer.alloc(8), 8), 0)
  assert.equal(native.streamError(stream), null, 'refused calls change nothing')
  native.streamAbort(stream)
})

test('a room over the chunk it decodes is refused: one is read while the other is written', () => {
  const stream = gzip()
  const memory = Buffer.from(zlib.gzipSync(Buffer.alloc(1000, 7)))
  assert.throws(() => native.streamWrite(stream, memory, memory, 0), { name: 'TypeError', message: /overlaps/ })
  assert.throws(() => native.streamWrite(stream, memory.subarray(0, 10), memory, 5), { name: 'TypeError', message: /overlaps/ })
  // Side by side in one ArrayBuffer is fine.
  const shared = new Uint8Array(memory.length + 2000)
  shared.set(memory)
  const n = native.streamWrite(stream, shared.subarray(0, memory.length), shared.subarray(memory.length), 0)
  assert.equal(n, 1000)
  assert.ok(shared.subarray(memory.length, memory.length + 1000).every((b) => b === 7))
  native.streamAbort(stream)
})

test('calls in the wrong state are ERR_BODY_STATE errors; a failed stream answers false', () => {
  const stream = identity()
  assert.equal(native.streamWrite(stream, Buffer.alloc(3)), true)
  native.streamEnd(stream)
  assert.throws(() => native.streamWrite(stream, Buffer.alloc(3)), { code: 'ERR_BODY_STATE' })
  assert.throws(() => native.streamEnd(stream), { code: 'ERR_BODY_STATE' })
  assert.equal(native.streamRead(stream), true)
  native.streamAbort(stream)

  const aborted = identity()
  native.streamAbort(aborted)
  native.streamAbort(aborted)
  assert.equal(native.streamError(aborted).code, 'ECONNABORTED')
  assert.throws(() => native.streamWrite(aborted, Buffer.alloc(3)), { code: 'ERR_BODY_STATE' })
  assert.throws(() => native.streamRead(aborted), { code: 'ERR_BODY_STATE' })

  const failed = native.streamCreate(-1, 2, null, true)
  assert.equal(native.streamWrite(failed, Buffer.alloc(3)), false)
  assert.equal(native.streamWrite(failed, Buffer.alloc(3)), false)
  assert.equal(native.streamRead(failed), false)
  assert.equal(native.streamError(failed).code, 'ERR_BODY_TOO_LARGE')
})

test('refused chunks are null (lib/body/chunk.js says why), for both kinds of stream', () => {
  const sab = new SharedArrayBuffer(4)
  for (const stream of [identity(), gzip()]) {
    for (const chunk of [undefined, 'x', {}, sab, new Uint8Array(sab)]) {
      assert.equal(native.streamWrite(stream, chunk, Buffer.alloc(16), 0), null)
    }
    native.streamAbort(stream)
  }
})

test('the stream functions take any JavaScript value without crashing', () => {
  const values = [undefined, null, 0, -1, NaN, Infinity, 2 ** 64, 'x', {}, [], () => {}, Symbol('s'), 10n, new ArrayBuffer(4), Buffer.alloc(4), new SharedArrayBuffer(4), new Proxy({}, {})]
  const handles = [identity(), gzip(), native.streamCreate(10, 5, 'br, gzip', false)]
  for (const name of ['streamCreate', 'streamWrite', 'streamRead', 'streamEnd', 'streamAbort', 'streamError']) {
    for (const a of values) {
      for (const h of [a, ...handles]) {
        try {
          native[name](h, a, a, a)
        } catch (err) {
          assert.ok(err instanceof Error, `${name} threw a non-error`)
        }
      }
    }
  }
  for (const h of handles) native.streamAbort(h)
})

test('after the hostile calls, nothing is held', async () => {
  assert.equal(await bytesInUseAfterGc(), 0)
})
