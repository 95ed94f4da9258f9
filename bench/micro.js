'use strict'
// Time per body: push every chunk of a body, get the final Buffer. The event loop gets a
// turn after every body, as in a server, so GC and external-buffer finalizers are paid
// inside the timings.
//
// Each contender runs in a process of its own, every row in turn, as a server runs one
// body reader: in one process, each paid for the garbage the others left, and V8's
// collector tuned itself to all of them ((b)'s JS Buffers started mark-compacts that ran
// during (c)'s turn). Rounds alternate the order of the processes; ratios are per round.
// uWS-body's collections are counted per 1000 bodies: scavenges are cheap, mark-compacts
// are what a large body must stay out of.
//   node bench/micro.js [--quick]   MICRO_SIZES=524288,4194304 runs those sizes only,
//   MICRO_CHUNKS=65483 those chunk sizes only (Infinity: one chunk);
//   UWS_BODY_BENCH_TUNE_GC=1 calls tuneGc() in every process first (Node 24's opt-in).
const { spawnSync } = require('node:child_process')
const { setImmediate: tick } = require('node:timers/promises')
const { PerformanceObserver, performance, constants: { NODE_PERFORMANCE_GC_MINOR, NODE_PERFORMANCE_GC_MAJOR } } = require('node:perf_hooks')
const { median, paired, formatTime, formatSize, table, timePerCall } = require('./stats')

const KIB = 1024
const MIB = 1024 * KIB
const LIMIT = 128 * MIB

function rows (quick) {
  const sizes = quick ? [0, 100, 4 * KIB, 64 * KIB, 512 * KIB, 4 * MIB, 32 * MIB] : [0, 100, 4 * KIB, 64 * KIB, 512 * KIB, 4 * MIB, 32 * MIB, 64 * MIB]
  const chunkings = quick ? [Infinity, 65483] : [Infinity, 16 * KIB, 65483, 512 * KIB]
  const out = []
  const only = process.env.MICRO_SIZES ? process.env.MICRO_SIZES.split(',').map(Number) : null
  const onlyChunks = process.env.MICRO_CHUNKS ? process.env.MICRO_CHUNKS.split(',').map(Number) : null
  for (const size of sizes) {
    if (only !== null && !only.includes(size)) continue
    for (const chunk of chunkings) {
      if (chunk !== Infinity && chunk >= size) continue
      if (onlyChunks !== null && !onlyChunks.includes(chunk)) continue
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

/** The readers, by letter; made in the contender's own process only. */
function contender (name) {
  const { copyConcat, jsPrealloc, uwsBody } = require('./contenders')
  return {
    a: copyConcat,
    b: jsPrealloc,
    c: uwsBody,
    // (d) the floor: one warm memcpy of the same bytes into a buffer that already exists.
    d: (contentLength, limit, floor) => {
      let offset = 0
      return {
        push (ab) { floor.set(new Uint8Array(ab), offset); offset += ab.byteLength },
        finish () { return floor }
      }
    },
    // (f) the floor for a body the program keeps until V8 collects it: one memcpy into
    // memory that was faulted in but is not in cache, the next of buffers rotating through
    // 128 MiB. Such a Buffer is the program's until a collection (every 32 MiB of young
    // Buffers at best), so consecutive bodies cannot share cache-resident memory as (d) does.
    f: (contentLength, limit, floor, cold) => {
      const target = cold.buffers[cold.next++ % cold.buffers.length]
      let offset = 0
      return {
        push (ab) { target.set(new Uint8Array(ab), offset); offset += ab.byteLength },
        finish () { return target }
      }
    },
    // (g) the kept-Buffer floor: (f)'s memcpy into a cold ring, then one external Buffer
    // over it per body with a finalizer that does nothing (./kept-floor): what any reader
    // that hands the program a Buffer of its own pays, V8's collections included.
    g: keptFloor()
  }[name]
}

function keptFloor () {
  let addon = null
  return (contentLength, limit, floor, cold) => {
    if (addon === null) addon = require('./kept-floor').load()
    addon.begin(cold.size)
    return {
      push (ab) { addon.push(ab) },
      finish () { return addon.finish() }
    }
  }
}

const NAMES = ['a', 'b', 'c', 'd', 'f', 'g']
// Seconds of warm-up at the first row of each body size (see measure()).
const SIZE_WARM_UP = 0.3
const COLD_BYTES = 128 * MIB

/** (f)'s buffers for bodies of `size` bytes, written once so that their pages are faulted in. */
function coldBuffers (size) {
  const count = Math.min(1024, Math.max(2, Math.ceil(COLD_BYTES / Math.max(size, 1))))
  return { buffers: Array.from({ length: count }, () => Buffer.allocUnsafeSlow(size).fill(1)), next: 0 }
}

/** In a contender's process: every row, warmed up then timed, with the collections seen. */
async function measure (name, rowList, budget) {
  require('./tune')
  const make = contender(name)
  const entries = []
  const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) entries.push(e) })
  observer.observe({ entryTypes: ['gc'] })
  const out = []
  for (const { size, chunk, known } of rowList) {
    const chunks = chunksOf(size, chunk === Infinity ? Math.max(size, 1) : chunk)
    const floor = name === 'd' ? Buffer.alloc(size) : null
    const cold = name === 'f' ? coldBuffers(size) : name === 'g' ? { size } : null
    const one = () => {
      const reader = make(known ? size : -1, LIMIT, floor, cold)
      for (const ab of chunks) reader.push(ab)
      return reader.finish()
    }
    // Warmed up first: the code, and the pool and V8's heap for this size. The first row
    // of each size pays the switch to it, whichever row that is: fresh blocks of its
    // class, and the collections their growth starts, until the pool holds that class
    // (Node 24 with tuneGc(), a process's 4 MiB rows after its 512 KiB ones: 1.6 ms a body
    // in the first, 0.3-0.6 ms in the next; after SIZE_WARM_UP, the first row is like the
    // rest, and "4 MiB, one chunk, known" went from 1.50 to 0.99 the cold floor).
    const switched = out.length === 0 || rowList[out.length - 1].size !== size
    await timePerCall(one, switched ? Math.max(SIZE_WARM_UP, 2 * budget) : budget / 4)
    const from = performance.now()
    const { seconds, calls } = await timePerCall(one, budget)
    const to = performance.now()
    await tick()
    for (const e of observer.takeRecords()) entries.push(e)
    const kind = (e) => (e.detail ? e.detail.kind : e.kind)
    const within = entries.filter((e) => e.startTime >= from && e.startTime <= to)
    entries.length = 0
    out.push({
      seconds,
      minor: (within.filter((e) => kind(e) === NODE_PERFORMANCE_GC_MINOR).length * 1000) / calls,
      major: (within.filter((e) => kind(e) === NODE_PERFORMANCE_GC_MAJOR).length * 1000) / calls
    })
  }
  observer.disconnect()
  return out
}

async function run ({ quick = false } = {}) {
  const rounds = quick ? 3 : 7
  const budget = quick ? 0.03 : 0.06
  const rowList = rows(quick)
  const seen = Object.fromEntries(NAMES.map((n) => [n, []])) // per round: per row
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 ? [...NAMES].reverse() : NAMES) {
      const child = spawnSync(process.execPath, [...process.execArgv, __filename, '--contender', name, '--budget', String(budget)], {
        input: JSON.stringify(rowList), encoding: 'utf8', maxBuffer: 64 * MIB, stdio: ['pipe', 'pipe', 'inherit']
      })
      if (child.status !== 0) throw new Error(`bench/micro.js: contender ${name} exited with ${child.status} ${child.signal || ''}`)
      seen[name].push(JSON.parse(child.stdout))
    }
    if (!module.parent || process.env.BENCH_VERBOSE) console.error(`micro: round ${r + 1}/${rounds}`)
  }
  return rowList.map(({ size, chunk, known }, i) => {
    const times = Object.fromEntries(NAMES.map((n) => [n, seen[n].map((round) => round[i].seconds)]))
    const cb = paired(times.c, times.b)
    const cd = paired(times.c, times.d)
    const cf = paired(times.c, times.f)
    const cg = paired(times.c, times.g)
    const gcs = seen.c.map((round) => round[i])
    const gGcs = seen.g.map((round) => round[i])
    return {
      size,
      chunks: chunksOf(size, chunk === Infinity ? Math.max(size, 1) : chunk).length,
      known,
      a: median(times.a),
      b: median(times.b),
      c: median(times.c),
      d: median(times.d),
      f: median(times.f),
      g: median(times.g),
      cg: cg.ratio,
      cgWon: cg.won,
      gMinor: median(gGcs.map((x) => x.minor)),
      gMajor: median(gGcs.map((x) => x.major)),
      cb: cb.ratio,
      cbWon: cb.won,
      rounds,
      cd: cd.ratio,
      cf: cf.ratio,
      cfWon: cf.won,
      cfLow: quartile(times.c, times.f, 1),
      cfHigh: quartile(times.c, times.f, 3),
      minor: median(gcs.map((g) => g.minor)),
      major: median(gcs.map((g) => g.major))
    }
  })
}

/** The first or third quartile of the per-round ratios a/b. */
function quartile (a, b, q) {
  const ratios = a.map((x, i) => x / b[i]).sort((x, y) => x - y)
  return ratios[Math.min(ratios.length - 1, Math.floor((q * (ratios.length - 1)) / 4))]
}

const perThousand = (n) => (n < 10 ? n.toFixed(1) : n.toFixed(0))

function formatRow (r) {
  return [formatSize(r.size), r.chunks, r.known ? 'yes' : 'no', formatTime(r.a), formatTime(r.b), formatTime(r.c), formatTime(r.d),
    formatTime(r.f), r.cb.toFixed(2), `${r.cbWon}/${r.rounds}`, r.cd.toFixed(2),
    `${r.cf.toFixed(2)} (${r.cfLow.toFixed(2)}-${r.cfHigh.toFixed(2)})`, formatTime(r.g), `${r.cg.toFixed(2)} (${r.cgWon}/${r.rounds})`,
    `${perThousand(r.minor)} / ${perThousand(r.major)}`, `${perThousand(r.gMinor)} / ${perThousand(r.gMajor)}`]
}

function render (results) {
  return table(['body', 'chunks', 'length known', '(a) copy+concat', '(b) JS prealloc', '(c) uws-body', '(d) memcpy floor', '(f) cold floor', 'c/b', 'c won', 'c/d', 'c/f (quartiles)', '(g) kept-Buffer floor', 'c/g (c won)', '(c) scavenges / mark-compacts per 1000', '(g) scavenges / mark-compacts per 1000'],
    results.map(formatRow))
}

module.exports = { run, render }

if (require.main === module) {
  const at = process.argv.indexOf('--contender')
  if (at >= 0) {
    const name = process.argv[at + 1]
    const budget = Number(process.argv[process.argv.indexOf('--budget') + 1])
    let input = ''
    process.stdin.on('data', (d) => { input += d })
    process.stdin.on('end', () => {
      const rowList = JSON.parse(input).map((r) => ({ ...r, chunk: r.chunk === null ? Infinity : r.chunk }))
      measure(name, rowList, budget).then((out) => process.stdout.write(JSON.stringify(out)))
    })
  } else {
    run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
  }
}
