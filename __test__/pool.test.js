'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const { BodyAccumulator, setPoolLimit, stats, JS_TIER_MAX } = require('..')
const { bodyOf } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const MIB = 1024 * 1024

function read (body, contentLength = body.length) {
  const acc = new BodyAccumulator({ contentLength, limit: '64mb' })
  for (let i = 0; i < body.length; i += 65483) acc.push(body.subarray(i, i + 65483))
  return acc
}

test('no reuse while a Buffer is alive: a later body never overwrites an earlier one', async () => {
  const first = read(bodyOf(MIB, 1)).finish()
  const kept = Buffer.from(first)
  for (let i = 0; i < 20; i++) {
    const other = read(bodyOf(MIB, 100 + i)).finish()
    assert.ok(!other.equals(first))
    global.gc()
    await new Promise(setImmediate)
  }
  assert.ok(first.equals(kept), 'the live Buffer kept its bytes')
})

// In a plain function: an async test's frame may keep its last Buffer alive across the GC.
function readAndDrop (size, seed) {
  return read(bodyOf(size, seed)).finish().length
}

test('a body\'s memory goes back to the pool when its Buffer is collected, and no sooner', async () => {
  const before = await bytesInUseAfterGc()
  const pooled = stats().bytesPooled
  const body = read(bodyOf(2 * MIB)).finish()
  assert.ok(stats().bytesInUse >= before + 2 * MIB, 'held while the Buffer lives')
  global.gc()
  await new Promise(setImmediate)
  assert.ok(stats().bytesInUse >= before + 2 * MIB, 'a live Buffer is never recycled')
  assert.ok(body.equals(bodyOf(2 * MIB)))
  assert.equal(readAndDrop(2 * MIB, 9), 2 * MIB)
  assert.equal(await bytesInUseAfterGc(), before + body.length, 'the dropped one is freed')
  assert.ok(stats().bytesPooled > pooled, 'into the pool')
  assert.equal(require('..').release, undefined, 'no API hands memory back early')
})

test('the pool is bounded, and setPoolLimit(0) empties it', async () => {
  try {
    setPoolLimit(4 * MIB)
    for (let i = 0; i < 10; i++) readAndDrop(MIB + 4096, i)
    await bytesInUseAfterGc()
    assert.ok(stats().bytesPooled <= 4 * MIB, `${stats().bytesPooled}`)
    assert.equal(stats().poolLimit, 4 * MIB)
    setPoolLimit(0)
    assert.equal(stats().bytesPooled, 0)
    readAndDrop(MIB)
    await bytesInUseAfterGc()
    assert.equal(stats().bytesPooled, 0)
    assert.throws(() => setPoolLimit(-1), TypeError)
    assert.throws(() => setPoolLimit('1mb'), TypeError)
  } finally {
    setPoolLimit(64 * MIB)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('finishString decodes utf8, latin1 and utf16le on both tiers, across chunk boundaries', () => {
  const text = 'héllo wörld ✓ 😀 '.repeat(20000) // multi-byte sequences cut by the chunking
  for (const encoding of ['utf8', 'latin1', 'utf16le', 'hex', 'base64', 'ascii']) {
    for (const size of [100, JS_TIER_MAX + 100, 2 * MIB]) {
      const body = Buffer.from(text, encoding === 'hex' || encoding === 'base64' ? 'utf8' : encoding).subarray(0, size)
      for (const contentLength of [body.length, undefined]) {
        const acc = new BodyAccumulator({ contentLength, limit: '8mb' })
        for (let i = 0; i < body.length; i += 1001) acc.push(body.subarray(i, i + 1001))
        assert.equal(acc.finishString(encoding), body.toString(encoding), `${encoding} ${size}`)
      }
    }
  }
  const odd = new BodyAccumulator({ contentLength: 3 * MIB + 1, limit: '8mb' })
  odd.push(Buffer.alloc(3 * MIB + 1, 0x41))
  assert.equal(odd.finishString('utf16le').length, (3 * MIB) / 2, 'odd trailing byte dropped like Buffer')
  assert.equal(new BodyAccumulator({ contentLength: 0 }).finishString(), '')
  assert.equal(new BodyAccumulator({ contentLength: 0 }).finishString('utf16le'), '')
})

test('finishString utf8 makes the string Buffer.toString makes: ASCII, Latin-1 range, other text, invalid bytes', () => {
  // The native tier makes one-byte text from its Latin-1 form and leaves everything else
  // to V8's UTF-8 decoder: the result must not depend on which.
  const random = (n, seed) => { const b = Buffer.alloc(n); let x = seed; for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) >>> 0; b[i] = x >>> 24 } return b }
  const bodies = [
    Buffer.from('{"a":"plain ascii"}'.repeat(20000)),
    Buffer.from('caf\u00e9 na\u00efve \u00ff\u0080 '.repeat(20000)),
    Buffer.concat([Buffer.from('x'.repeat(300000)), Buffer.from('\u0100')]), // one character over U+00FF, at the end
    Buffer.concat([Buffer.from('caf\u00e9'.repeat(60000)), Buffer.from([0xc3])]), // truncated at the end
    Buffer.concat([Buffer.from('x'.repeat(300000)), Buffer.from([0xc0, 0x80, 0xc3, 0x28, 0x80])]), // overlong, bad continuation, lone continuation
    random(JS_TIER_MAX + 5000, 7),
    Buffer.from('\u6f22\u5b57 \ud83d\ude00 '.repeat(30000))
  ]
  for (const body of bodies) {
    for (const contentLength of [body.length, undefined]) {
      const acc = new BodyAccumulator({ contentLength, limit: '8mb' })
      for (let i = 0; i < body.length; i += 65483) acc.push(body.subarray(i, i + 65483))
      assert.equal(acc.finishString('utf8'), body.toString('utf8'), `${body.length} bytes, ${body.subarray(-8).toString('hex')}`)
    }
  }
})

test('finishString throws the body error and rejects unknown encodings', () => {
  for (const size of [10, MIB]) {
    const acc = new BodyAccumulator({ contentLength: size, limit: '2mb' })
    acc.push(new Uint8Array(size - 1))
    assert.throws(() => acc.finishString(), (e) => e.type === 'request.size.invalid')
    const ok = new BodyAccumulator({ contentLength: size, limit: '2mb' })
    ok.push(new Uint8Array(size))
    assert.throws(() => ok.finishString('klingon'), TypeError)
    assert.equal(ok.finishString().length, size)
    assert.throws(() => ok.finishString(), /after finish/)
  }
})

test('past the cap, a declared length takes an idle pooled block whole, never fresh memory', async () => {
  try {
    setPoolLimit(0) // empty pool: the cap rules
    setPoolLimit(256 * MIB)
    const declared = 6 * MIB
    const capped = new BodyAccumulator({ contentLength: declared, limit: '64mb' })
    assert.ok(capped.capacity <= 1.25 * MIB, `capped at maxPreallocated: ${capped.capacity}`)
    capped.abort()
    // Growth leftovers (1.25, 2.5, 5 MiB blocks) go back to the pool only up to a quarter
    // of its bound; the whole body's block, once released, is idle in the pool.
    readAndDrop(declared, 4)
    assert.ok(stats().bytesPooled <= 64 * MIB)
    await bytesInUseAfterGc()
    const whole = new BodyAccumulator({ contentLength: declared, limit: '64mb' })
    assert.ok(whole.capacity >= declared, `took the idle block: ${whole.capacity}`)
    whole.push(bodyOf(declared, 5))
    assert.ok(whole.finish().equals(bodyOf(declared, 5)))
    // A client that declares a length and sends nothing holds that idle block, not new
    // memory: bytesInUse grows by what the pool gave, the pool shrinks by as much.
    const before = stats()
    const idle = new BodyAccumulator({ contentLength: 8 * MIB, limit: '64mb' })
    const after = stats()
    assert.equal(after.bytesInUse - before.bytesInUse, idle.capacity)
    assert.ok(idle.capacity <= 1.25 * MIB || before.bytesPooled - after.bytesPooled === idle.capacity)
    idle.abort()
  } finally {
    setPoolLimit(256 * MIB)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('the pool follows the workload: a returned block displaces the least recently returned ones', async () => {
  try {
    setPoolLimit(0) // start empty
    setPoolLimit(8 * MIB)
    for (let i = 0; i < 6; i++) readAndDrop(MIB, i) // six 1 MiB blocks come back
    await bytesInUseAfterGc()
    assert.equal(stats().bytesPooled, 6 * MIB)
    readAndDrop(4 * MIB, 7) // a 4 MiB block comes back to a pool with 2 MiB of room
    await bytesInUseAfterGc()
    assert.equal(stats().bytesPooled, 8 * MIB, 'the two oldest 1 MiB blocks made room')
    const before = stats().bytesPooled
    const next = new BodyAccumulator({ contentLength: 4 * MIB, limit: '8mb', maxPreallocated: 8 * MIB })
    assert.equal(next.capacity, 4 * MIB)
    assert.equal(stats().bytesPooled, before - 4 * MIB, 'the 4 MiB body took the returned block: warm, not fresh')
    next.abort()
  } finally {
    setPoolLimit(256 * MIB)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

function readUnknownAndDrop (size) {
  const acc = new BodyAccumulator({ limit: '64mb' })
  const body = bodyOf(size, 3)
  for (let i = 0; i < size; i += 65483) acc.push(body.subarray(i, i + 65483))
  return acc.finish().length
}

function growIntoRecentBlock () {
  const acc = new BodyAccumulator({ limit: '64mb' })
  acc.push(bodyOf(100 * 1024, 1))
  acc.push(bodyOf(100 * 1024, 2)) // needs growth: takes the recent 4 MiB-class block
  assert.ok(acc.capacity >= 4 * MIB, `capacity ${acc.capacity}`)
  assert.ok(acc.finish().equals(Buffer.concat([bodyOf(100 * 1024, 1), bodyOf(100 * 1024, 2)])))
}

test('a body of unknown length grows straight into the block a recent body ended with', async () => {
  try {
    setPoolLimit(0)
    setPoolLimit(256 * MIB)
    readUnknownAndDrop(4 * MIB)
    await bytesInUseAfterGc()
    growIntoRecentBlock()
  } finally {
    setPoolLimit(256 * MIB)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})
