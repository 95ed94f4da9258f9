'use strict'
// Seeded random sequences of public API calls, with every kind of chunk a program could
// pass, checked against a model of the documented rules: no crash, the documented error
// for every misuse, exactly the bytes accepted, and nothing held afterwards. A failing
// case prints its seed and step; SEED=n replays it.
const test = require('node:test')
const assert = require('node:assert/strict')
const vm = require('node:vm')
const { BodyAccumulator, stats, setPoolLimit, JS_TIER_MAX } = require('..')
const { random } = require('./helpers/random')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { AS_TEXT } = require('../lib/body/accumulator')

const SEQUENCES = Number(process.env.HOSTILE_SEQUENCES || 400)
const FIRST_SEED = Number(process.env.SEED || 1)
const other = vm.createContext({})
const VIEWS = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array, DataView]

/** A chunk of a random kind: { value, bytes } to be read, or { value, refused: code }. */
function chunkOf (rand) {
  const int = (n) => Math.floor(rand() * n)
  const size = rand() < 0.1 ? 0 : rand() < 0.8 ? int(3000) : int(150000)
  const bytes = Buffer.allocUnsafe(size)
  for (let i = 0; i < size; i += 997) bytes[i] = int(256)
  const detach = (ab) => { structuredClone(ab, { transfer: [ab] }); return ab }
  switch (int(12)) {
    case 0: return { value: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + size), bytes }
    case 1: { // a view at an offset, of any element type that fits
      const View = VIEWS[int(VIEWS.length)]
      const unit = View.BYTES_PER_ELEMENT || 1
      const offset = unit * int(4)
      const n = Math.floor(size / unit)
      const ab = new ArrayBuffer(offset + n * unit + unit)
      new Uint8Array(ab, offset, n * unit).set(bytes.subarray(0, n * unit))
      const value = View === DataView ? new DataView(ab, offset, n * unit) : new View(ab, offset, n)
      return { value, bytes: bytes.subarray(0, n * unit) }
    }
    case 2: { // resizable, then resized: in bounds or not (Node 20+)
      if (typeof ArrayBuffer.prototype.resize !== 'function') return { value: bytes, bytes }
      const ab = new ArrayBuffer(size + 16, { maxByteLength: size + 64 })
      new Uint8Array(ab).set(bytes, 8)
      const view = rand() < 0.5 ? new DataView(ab, 8, size) : new Uint8Array(ab, 8, size)
      if (rand() < 0.5) return { value: view, bytes }
      ab.resize(int(size + 8)) // now shorter than the view's end: out of bounds
      return { value: view, refused: 'ERR_BODY_CHUNK_DETACHED' }
    }
    case 3: return { value: detach(new ArrayBuffer(size + 1)), refused: 'ERR_BODY_CHUNK_DETACHED' }
    case 4: { const ab = new ArrayBuffer(8 * (1 + (size >> 3))); const View = VIEWS[int(VIEWS.length)]; const v = new View(ab); detach(ab); return { value: v, refused: 'ERR_BODY_CHUNK_DETACHED' } }
    case 5: { const sab = new SharedArrayBuffer(size + 1); return { value: rand() < 0.5 ? sab : new Uint8Array(sab), refused: 'ERR_BODY_CHUNK_SHARED' } }
    case 6: { // another realm's ArrayBuffer or view
      const ab = vm.runInContext(`new ArrayBuffer(${size})`, other)
      new Uint8Array(ab).set(bytes)
      return { value: rand() < 0.5 ? ab : new (vm.runInContext('Uint8Array', other))(ab), bytes }
    }
    case 7: return { value: [undefined, null, 7, 'text', {}, [1, 2], () => {}, Symbol('x'), 5n, { byteLength: 3, buffer: new ArrayBuffer(3) }][int(10)], refused: 'ERR_INVALID_ARG_TYPE' }
    default: return { value: bytes, bytes }
  }
}

/** The documented rules, for one body. */
class Model {
  constructor (expected, limit) {
    this.expected = expected
    this.limit = limit
    this.bytes = []
    this.received = 0
    this.state = 'open'
    this.error = expected >= 0 && expected > limit ? 'ERR_BODY_TOO_LARGE' : null
    if (this.error) this.state = 'failed'
  }

  push (n) {
    if (this.state === 'failed') return false
    if (this.state !== 'open') return 'ERR_BODY_STATE'
    const received = this.received + n
    if (this.expected >= 0 && received > this.expected) return this.fail('ERR_BODY_LENGTH_MISMATCH')
    if (received > this.limit) return this.fail('ERR_BODY_TOO_LARGE')
    this.received = received
    return true
  }

  finish () {
    if (this.state === 'finished') return 'ERR_BODY_STATE'
    if (this.state !== 'open') return this.error
    if (this.expected >= 0 && this.received !== this.expected) {
      this.fail('ERR_BODY_LENGTH_MISMATCH')
      return this.error
    }
    this.state = 'finished'
    return Buffer.concat(this.bytes)
  }

  abort () {
    if (this.state === 'open' || this.state === 'failed') {
      if (this.error === null) this.error = 'ECONNABORTED'
      this.state = 'aborted'
    }
  }

  fail (code) {
    this.state = 'failed'
    this.error = code
    return false
  }
}

const outcome = (fn) => {
  try {
    return { value: fn() }
  } catch (err) {
    return { thrown: err }
  }
}

function runSequence (seed) {
  const rand = random(seed)
  const int = (n) => Math.floor(rand() * n)
  const known = rand() < 0.6
  const expected = known ? [0, 10, 4000, JS_TIER_MAX, JS_TIER_MAX + 1, 300000][int(6)] + (rand() < 0.3 ? int(50) : 0) : -1
  const limit = [0, 100, 5000, JS_TIER_MAX + 1, 400000, 1e6][int(6)]
  const model = new Model(expected, limit)
  // Read as text or not: a text body of the JS tier is read into reused Buffers
  // (lib/body/text-scratch.js), which must hold the same bytes, and none of an earlier body's.
  const asText = rand() < 0.4
  const acc = new BodyAccumulator({ contentLength: known ? expected : undefined, limit, maxPreallocated: [0, 1000, 1 << 20][int(3)], [AS_TEXT]: asText })
  const where = (step, what) => `seed ${seed} step ${step} (${what}; expected ${expected}, limit ${limit})`
  assert.equal(acc.error && acc.error.code, model.error, where(-1, 'construction'))
  const steps = 1 + int(25)
  for (let step = 0; step < steps; step++) {
    const r = rand()
    if (r < 0.75) {
      const chunk = chunkOf(rand)
      const got = outcome(() => acc.push(chunk.value))
      const what = `push ${chunk.value === null ? 'null' : typeof chunk.value === 'object' ? chunk.value.constructor.name : typeof chunk.value}`
      if (chunk.refused) {
        assert.ok(got.thrown instanceof TypeError, where(step, what) + `: ${got.thrown || got.value}`)
        assert.equal(got.thrown.code, chunk.refused, where(step, what))
        continue
      }
      const want = model.push(chunk.bytes.length)
      if (want === true) model.bytes.push(Buffer.from(chunk.bytes))
      if (typeof want === 'string' && want === 'ERR_BODY_STATE') assert.equal(got.thrown && got.thrown.code, want, where(step, what))
      else assert.equal(got.value, want !== false, where(step, what) + ` ${got.thrown}`)
    } else if (r < 0.8) {
      acc.abort()
      model.abort()
    } else if (r < 0.85) {
      const s = stats()
      assert.ok(Number.isSafeInteger(s.bytesInUse) && s.bytesInUse >= 0)
    } else if (r < 0.87) {
      assert.throws(() => setPoolLimit([-1, NaN, 'x', null][int(4)]), TypeError)
    } else {
      break
    }
    assert.equal(acc.error && acc.error.code, model.error, where(step, 'error'))
    if (model.state !== 'open') assert.equal(acc.length, 0, where(step, 'nothing held after an error or abort'))
  }
  const asString = rand() < 0.3
  const got = outcome(() => asString ? acc.finishString('latin1') : acc.finish())
  const want = model.finish()
  if (Buffer.isBuffer(want)) {
    assert.ok(!got.thrown, where(steps, `finish threw ${got.thrown}`))
    if (asString) assert.equal(got.value, want.toString('latin1'), where(steps, 'finishString'))
    else assert.ok(got.value.equals(want), where(steps, 'finish: the exact bytes'))
  } else {
    assert.equal(got.thrown && got.thrown.code, want, where(steps, 'finish error'))
  }
  acc.abort()
}

test('random sequences of API calls with every kind of chunk match the model, and hold nothing after', async () => {
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEQUENCES; seed++) runSequence(seed)
  setPoolLimit(256 * 1024 * 1024)
  assert.equal(await bytesInUseAfterGc(), 0)
})
