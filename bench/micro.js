'use strict'
// In-process time per body: push every chunk of a body, get the final Buffer. Contenders
// run in alternating order in each round; the event loop gets a turn between bodies, as
// in a server, so GC and external-buffer finalizers are paid inside the timings.
const { copyConcat, seedPrealloc, uwsBody } = require('./contenders')
const { median, paired, formatTime, formatSize, table, timePerCall } = require('./stats')

const KIB = 1024
const MIB = 1024 * KIB
const LIMIT = 128 * MIB

function rows (quick) {
  const sizes = quick ? [0, 100, 4 * KIB, 64 * KIB, 512 * KIB, 4 * MIB, 32 * MIB] : [0, 100, 4 * KIB, 64 * KIB, 512 * KIB, 4 * MIB, 32 * MIB, 64 * MIB]
  const chunkings = quick ? [Infinity, 65483] : [Infinity, 16 * KIB, 65483, 512 * KIB]
  const out = []
  // MICRO_SIZES=524288,4194304 runs those rows only.
  const only = process.env.MICRO_SIZES ? process.env.MICRO_SIZES.split(',').map(Number) : null
  for (const size of sizes) {
    if (only !== null && !only.includes(size)) continue
    for (const chunk of chunkings) {
      if (chunk !== Infinity && chunk >= size) continue
      for (const known of [true, false]) out.push({ size, chunk, known })
    }
  }
  return out
}

/** The chunks as uWS hands them: ArrayBuffers, reused (uWS reuses its receive buffer). */
function chunksOf (size, chunk) {
  const out = []
  for (let at = 0; at < size || (size === 0 && out.length === 0); at += chunk) {
    const n = Math.min(chunk, size - at)
    const ab = new ArrayBuffer(n)
    new Uint8Array(ab).fill(at & 0xff)
    out.push(ab)
    if (size === 0) break
  }
  return out
}

const contenders = {
  a: copyConcat,
  b: seedPrealloc,
  c: uwsBody,
  // (d) the floor: one warm memcpy of the same bytes into a buffer that already exists.
  d: (contentLength, limit, floor) => {
    let offset = 0
    return {
      push (ab) { floor.set(new Uint8Array(ab), offset); offset += ab.byteLength },
      finish () { return floor }
    }
  },
  // (f) the floor without release(): one memcpy into memory that was faulted in but is
  // not in cache, the next of buffers rotating through 64 MiB. A body handed out as a
  // Buffer stays the program's until V8 collects it (every ~32 MiB of young external
  // memory here), so consecutive bodies cannot share cache-resident memory as (d) does.
  f: (contentLength, limit, floor, cold) => {
    const target = cold.buffers[cold.next++ % cold.buffers.length]
    let offset = 0
    return {
      push (ab) { target.set(new Uint8Array(ab), offset); offset += ab.byteLength },
      finish () { return target }
    }
  }
}

const COLD_BYTES = 64 * MIB

/** (f)'s buffers for bodies of `size` bytes, written once so that their pages are faulted in. */
function coldBuffers (size) {
  const count = Math.min(1024, Math.max(2, Math.ceil(COLD_BYTES / Math.max(size, 1))))
  return { buffers: Array.from({ length: count }, () => Buffer.allocUnsafeSlow(size).fill(1)), next: 0 }
}

function timeOne (make, chunks, contentLength, floor, cold, budget) {
  return timePerCall(() => {
    const reader = make(contentLength, LIMIT, floor, cold)
    for (const ab of chunks) reader.push(ab)
    return reader.finish()
  }, budget)
}

async function run ({ quick = false } = {}) {
  const rounds = quick ? 3 : 7
  const budget = quick ? 0.02 : 0.04
  const results = []
  for (const { size, chunk, known } of rows(quick)) {
    const chunks = chunksOf(size, chunk === Infinity ? Math.max(size, 1) : chunk)
    const floor = Buffer.alloc(size)
    const cold = coldBuffers(size)
    const times = { a: [], b: [], c: [], d: [], f: [] }
    const order = Object.keys(contenders)
    for (let r = 0; r < rounds; r++) {
      const names = r % 2 ? [...order].reverse() : order
      for (const name of names) {
        times[name].push(await timeOne(contenders[name], chunks, known ? size : -1, floor, cold, budget))
      }
    }
    const cb = paired(times.c, times.b)
    const cd = paired(times.c, times.d)
    const cf = paired(times.c, times.f)
    const row = {
      size, chunks: chunks.length, known,
      a: median(times.a), b: median(times.b), c: median(times.c), d: median(times.d), f: median(times.f),
      cb: cb.ratio, cbWon: cb.won, rounds, cd: cd.ratio, cf: cf.ratio
    }
    results.push(row)
    if (!module.parent || process.env.BENCH_VERBOSE) console.error(formatRow(row).join(' | '))
  }
  return results
}

function formatRow (r) {
  return [formatSize(r.size), r.chunks, r.known ? 'yes' : 'no', formatTime(r.a), formatTime(r.b), formatTime(r.c), formatTime(r.d),
    formatTime(r.f), r.cb.toFixed(2), `${r.cbWon}/${r.rounds}`, r.cd.toFixed(2), r.cf.toFixed(2)]
}

function render (results) {
  return table(['body', 'chunks', 'length known', '(a) copy+concat', '(b) JS prealloc', '(c) uws-body', '(d) memcpy floor', '(f) cold floor', 'c/b', 'c won', 'c/d', 'c/f'],
    results.map(formatRow))
}

module.exports = { run, render }

if (require.main === module) {
  run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
}
