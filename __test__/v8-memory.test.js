'use strict'
// The native memory V8 is told about (src/core/ledger.rs, src/node/accounting.rs): what a
// program drops without abort() is collected because V8 sees its size, and what is
// reported always comes back to zero: on Node 24 taking off more than was added aborts
// the process, so a drift either way would be a leak to V8 or a crash.
const test = require('node:test')
const assert = require('node:assert/strict')
const { runChild, ending } = require('./helpers/child')

const MIB = 1024 * 1024

for (const poolLimit of [256 * MIB, 0]) {
  test(`3000 bodies of 1 MiB dropped without abort(), no forced GC: memory stays under the pool limit + 128 MiB (pool limit ${poolLimit / MIB} MiB)`, () => {
    // Each turn of the event loop, as in a server, one body is read up to 1 MiB and dropped.
    // V8 sees the bytes each holds, so its collector frees them: without that, 3000 MiB were
    // held (nothing else made V8 collect). With no pool, the bound is 128 MiB alone.
    const source = `
      const { BodyAccumulator, stats, setPoolLimit } = require(ROOT)
      const { setImmediate: tick } = require('node:timers/promises')
      const chunks = Array.from({ length: 16 }, () => new ArrayBuffer(64 * 1024))
      async function run (poolLimit) {
        setPoolLimit(poolLimit)
        let peak = 0
        for (let i = 0; i < 3000; i++) {
          // Known and unknown lengths: one native body each, in 16 chunks.
          const acc = new BodyAccumulator({ limit: '2mb', contentLength: i % 2 ? 1024 * 1024 : null })
          for (const chunk of chunks) acc.push(chunk)
          await tick()
          const s = stats()
          peak = Math.max(peak, s.bytesInUse + s.bytesPooled)
        }
        return { poolLimit, peak }
      }
      run(${poolLimit}).then((out) => console.log(JSON.stringify(out)))`
    const r = runChild(source, { gc: false, timeout: 120000 })
    assert.equal(r.status, 0, ending(r))
    const { peak } = JSON.parse(r.stdout)
    assert.ok(peak <= poolLimit + 128 * MIB, `${peak / MIB} MiB held at the peak`)
  })
}

test('what a thread reports comes back to zero, across bodies, streams, Buffers kept and a worker sharing the pool', () => {
  const source = `
    const uwsBody = require(ROOT)
    const native = require(ROOT + '/lib/native/native')
    const zlib = require('node:zlib')
    const { Worker } = require('node:worker_threads')
    const { setImmediate: tick } = require('node:timers/promises')
    const collect = async () => { for (let i = 0; i < 4; i++) { globalThis.gc(); await tick() } }
    const reported = () => { uwsBody.stats(); return uwsBody.stats().bytesReported }
    const seen = []
    // Not async: its locals (the last body of the loop) must not outlive it in a suspended frame.
    function readMany (kept) {
      const gz = zlib.gzipSync(Buffer.alloc(3 * 1024 * 1024, 1))
      for (let i = 0; i < 40; i++) {
        const size = 200000 + i * 50000
        const acc = new uwsBody.BodyAccumulator({ contentLength: i % 3 ? size : null, limit: '64mb' })
        for (let at = 0; at < size; at += 65536) acc.push(Buffer.alloc(Math.min(65536, size - at), i))
        if (i % 4 === 0) acc.abort()
        else if (i % 4 === 1) acc.finishString('latin1')
        else if (i % 4 === 2) kept.push(acc.finish())
        const decoded = new uwsBody.BodyAccumulator({ contentEncoding: 'gzip', limit: '64mb' })
        decoded.push(gz)
        if (i % 2) decoded.finish()
        // A stream holding the part of an encoded chunk its reader has no room for yet.
        const stream = native.streamCreate(-1, 64 * 1024 * 1024, 'gzip', true)
        native.streamWrite(stream, gz, Buffer.alloc(1000), 0)
        if (i % 2) native.streamAbort(stream)
        if (reported() < 0) seen.push('negative')
      }
    }
    async function main () {
      const kept = []
      readMany(kept)
      seen.push(reported() > 0 ? 'held while reading' : 'nothing held')
      // Another thread takes blocks this one returned to the pool (they move to its ledger).
      await new Promise((resolve, reject) => {
        const w = new Worker(\`
          const uwsBody = require(\${JSON.stringify(ROOT)})
          for (let i = 0; i < 20; i++) {
            const acc = new uwsBody.BodyAccumulator({ contentLength: 1 << 20, limit: '2mb' })
            acc.push(Buffer.alloc(1 << 20))
            acc.finish()
          }\`, { eval: true })
        w.on('error', reject)
        w.on('exit', resolve)
      })
      if (reported() < 0) seen.push('negative after the worker')
      kept.length = 0
      await collect()
      uwsBody.setPoolLimit(0)
      await collect()
      seen.push(reported())
      console.log(JSON.stringify({ seen, inUse: uwsBody.stats().bytesInUse }))
    }
    main()`
  const r = runChild(source)
  assert.equal(r.status, 0, ending(r))
  const { seen, inUse } = JSON.parse(r.stdout)
  assert.deepEqual(seen, ['held while reading', 0], 'never below zero, and back to zero with nothing held')
  assert.equal(inUse, 0)
})
