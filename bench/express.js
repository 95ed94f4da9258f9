'use strict'
// ultimate-express with its built-in parsers, with uws-body's, Express + body-parser, and
// hyper-express 6.17's own readers (req.buffer(), req.json(), req.text(), req.urlencoded()),
// and the seed's reader (bench/seed.js, ultimate-express PR #369: the one uws-body has to
// beat): the same requests, alternating rounds, server CPU time per request and req/s.
// Every contender is checked on each row's request before it is timed (bench/answer.js).
// hyper-express ignores content-encoding (its readers hand on the bytes as sent), so it
// sits out the gzip row rather than be timed parsing nothing.
const { fork } = require('node:child_process')
const path = require('node:path')
const zlib = require('node:zlib')
const { load, get, portOf } = require('./load')
const querystring = require('node:querystring')
const { median, paired, table } = require('./stats')
const { expected, check } = require('./answer')
const { cases } = require('./rows')

const KIB = 1024
const MIB = 1024 * KIB
const KINDS = ['builtin', 'uws', 'seed', 'express', 'hyper', 'floor', 'memcpy']
const NAMES = { builtin: 'ultimate-express built-in', uws: 'ultimate-express + uws-body', seed: "ultimate-express + the seed's reader", express: 'Express + body-parser', hyper: 'hyper-express 6.17 built-in', floor: 'ultimate-express, bytes counted only', memcpy: 'bytes counted + one memcpy into cold memory', copy: 'bytes counted + Buffer.allocUnsafe and set' }
const SERVERS = { hyper: ['hyper-express-server.js', []] }

/** What a contender answers: the parsers the summary, the floors what they hand on. */
function answerOf (kind, route, headers, body) {
  if (kind === 'floor') return '0'
  if (kind === 'memcpy' || kind === 'copy') return String(body.length)
  return expected(route, headers, body)
}

/**
 * What a row's body costs beyond the framework that no reader avoids, timed alone in this
 * process on the same body, in us: the parse of its text (JSON.parse, querystring.parse),
 * the string of a text body, a gzip body's gunzip too. Raw rows have none here: their
 * floor is measured (the memcpy server).
 */
function unavoidableMicros (route, headers, body) {
  const text = (headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(body) : body).toString()
  const work = {
    '/json': () => JSON.parse((headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(body) : body).toString()),
    '/urlencoded': () => querystring.parse(text),
    '/text': () => body.toString()
  }[route]
  if (!work) return 0
  const times = []
  for (let round = 0; round < 7; round++) {
    const n = body.length > 64 * KIB ? 20 : 500
    const started = process.hrtime.bigint()
    for (let i = 0; i < n; i++) work()
    times.push(Number(process.hrtime.bigint() - started) / 1e3 / n)
  }
  return median(times)
}

async function run ({ quick = false, rows = null, kinds: only = null, rounds = quick ? 3 : 5, seconds = quick ? 0.5 : 1.2 } = {}) {
  const KINDS_RUN = only || KINDS
  const all = cases()
  const unknown = [...KINDS_RUN.filter((k) => !NAMES[k]), ...(rows || []).filter((n) => !all.some(([name]) => name === n))]
  if (unknown.length) throw new Error(`bench: no such contender or row: ${unknown.join(', ')} (contenders: ${Object.keys(NAMES).join(', ')}; rows: ${all.map(([n]) => n).join(', ')})`)
  const servers = {}
  const results = []
  try {
    for (const kind of KINDS_RUN) {
      const [file, args] = SERVERS[kind] || ['express-server.js', [kind]]
      const child = fork(path.join(__dirname, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      servers[kind] = { child }
      servers[kind].port = await portOf(child)
    }
    for (const [name, route, headers, body] of all.filter(([name]) => rows === null || rows.includes(name))) {
      const kinds = headers['content-encoding'] ? KINDS_RUN.filter((k) => k !== 'hyper') : KINDS_RUN
      const cpu = Object.fromEntries(kinds.map((k) => [k, []]))
      const rps = Object.fromEntries(kinds.map((k) => [k, []]))
      const collections = Object.fromEntries(kinds.map((k) => [k, { scavenges: 0, markCompacts: 0, requests: 0 }]))
      const peak = Object.fromEntries(kinds.map((k) => [k, 0]))
      for (const kind of kinds) await check(servers[kind].port, kind, route, headers, body, answerOf(kind, route, headers, body))
      // A short untimed load first: each server's first requests on a route pay its compilation.
      for (const kind of kinds) await load(servers[kind].port, { path: route, headers, body, connections: 2, seconds: seconds / 4 })
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? [...kinds].reverse() : kinds
        for (const kind of order) {
          const { port } = servers[kind]
          await get(port, '/reset')
          const { completed, seconds: took } = await load(port, { path: route, headers, body, connections: body.length >= 4 * MIB ? 2 : 4, seconds })
          const stats = JSON.parse(await get(port, '/stats'))
          cpu[kind].push(stats.cpuMicros / Math.max(1, stats.requests))
          if (stats.gc) {
            collections[kind].scavenges += stats.gc.scavenges
            collections[kind].markCompacts += stats.gc.markCompacts
            collections[kind].requests += stats.requests
          }
          rps[kind].push(completed / took)
          if (stats.hwm) peak[kind] = Math.max(peak[kind], stats.hwm)
        }
      }
      // With --kinds, a ratio whose contenders did not run is NaN.
      const pairedIf = (a, b) => a && b ? paired(a, b) : { ratio: NaN, won: 0, rounds }
      const speedup = pairedIf(cpu.builtin, cpu.uws) // builtin / uws: above 1, uws-body is faster
      // builtin / floor: the speed-up a body reader that cost nothing would have.
      const ceiling = pairedIf(cpu.builtin, cpu.floor)
      // The row's floor: the memcpy server for raw bodies; for parsed ones the count-only
      // server plus the parse timed alone.
      const extra = route === '/raw' ? 0 : unavoidableMicros(route, headers, body)
      const floor = route === '/raw' ? cpu.memcpy : cpu.floor && cpu.floor.map((x) => x + extra)
      const overFloor = pairedIf(cpu.uws, floor)
      const seedRatios = cpu.uws && cpu.seed ? cpu.uws.map((x, i) => x / cpu.seed[i]) : [NaN]
      const perThousand = (kind, n) => 1000 * collections[kind][n] / Math.max(1, collections[kind].requests)
      const row = {
        name,
        rounds,
        speedup: speedup.ratio,
        won: rounds - speedup.won,
        // uws / seed: below 1, uws-body used less CPU; won counts the rounds it did.
        seed: { ...pairedIf(cpu.uws, cpu.seed), min: Math.min(...seedRatios), max: Math.max(...seedRatios) },
        peak,
        ceiling: ceiling.ratio,
        floorMicros: floor && cpu.uws ? median(floor) : undefined,
        overFloor: overFloor.ratio,
        overFloorRange: floor && cpu.uws ? [Math.min(...cpu.uws.map((x, i) => x / floor[i])), Math.max(...cpu.uws.map((x, i) => x / floor[i]))] : [NaN, NaN],
        gc: Object.fromEntries(kinds.map((k) => [k, { scavenges: perThousand(k, 'scavenges'), markCompacts: perThousand(k, 'markCompacts') }]))
      }
      for (const k of kinds) { row[`cpu_${k}`] = median(cpu[k]); row[`rps_${k}`] = median(rps[k]) }
      if (cpu.hyper && cpu.uws) { // uws / hyper: below 1, uws-body used less CPU
        const ratios = cpu.uws.map((x, i) => x / cpu.hyper[i])
        row.hyper = { ...paired(cpu.uws, cpu.hyper), min: Math.min(...ratios), max: Math.max(...ratios) }
      }
      results.push(row)
      if (require.main === module || process.env.BENCH_VERBOSE) {
        console.error(formatRow(row, Object.keys(NAMES).filter((k) => kinds.includes(k))).join(' | '))
        console.error(`  collections per 1000 requests (scavenges / mark-compacts): ${kinds.map((k) => `${k} ${row.gc[k].scavenges.toFixed(1)} / ${row.gc[k].markCompacts.toFixed(1)}`).join(', ')}`)
      }
    }
  } finally {
    for (const { child } of Object.values(servers)) child.kill()
  }
  return results
}

const mib = (n) => n ? (n / MIB).toFixed(0) : '?'

function formatRow (r, shown = KINDS) {
  const cell = (k) => r[`cpu_${k}`] === undefined ? 'n/a' : `${r[`cpu_${k}`].toFixed(0)} us / ${r[`rps_${k}`].toFixed(0)}`
  const h = r.hyper
  const floor = r.floorMicros === undefined ? '-' : `${r.floorMicros.toFixed(0)} us: ${r.overFloor.toFixed(2)} (${r.overFloorRange[0].toFixed(2)}-${r.overFloorRange[1].toFixed(2)})`
  const gc = r.gc && r.gc.uws ? `${r.gc.uws.scavenges.toFixed(1)} / ${r.gc.uws.markCompacts.toFixed(1)}` : '-'
  const s = r.seed
  return [r.name, ...shown.map(cell), `${s.ratio.toFixed(2)} (${s.min.toFixed(2)}-${s.max.toFixed(2)})`, `${s.won}/${r.rounds}`,
    r.peak ? `${mib(r.peak.uws)} / ${mib(r.peak.seed)}` : '-', `${r.speedup.toFixed(2)}x`, `${r.won}/${r.rounds}`, `${r.ceiling.toFixed(2)}x`, floor, gc,
    h ? `${h.ratio.toFixed(2)} (${h.min.toFixed(2)}-${h.max.toFixed(2)}), ${h.won}/${h.rounds}` : '-']
}

function render (results) {
  const shown = Object.keys(NAMES).filter((k) => results.some((r) => r[`cpu_${k}`] !== undefined))
  return table(['request', ...shown.map((k) => `${NAMES[k]}: CPU/req / req/s`), 'CPU uws-body / seed (range)', 'uws-body won', 'peak RSS MiB: uws-body / seed', 'uws-body speed-up (CPU, vs built-in)', 'rounds won', 'ceiling: built-in / bytes counted only', "the row's floor: CPU/req: uws-body / floor (range)", 'uws-body scavenges / mark-compacts per 1000 requests', 'CPU uws-body / hyper-express (range), rounds won'], results.map((r) => formatRow(r, shown)))
}

module.exports = { run, render }

// node bench/express.js [--quick] [--rows 'raw 512 KiB,json 1 KiB'] [--kinds uws,seed,memcpy,copy]
//   [--rounds N] [--seconds S]   (S: seconds of load per contender per round)
if (require.main === module) {
  console.error(`Node ${process.version}, ${require('../scripts/test-env/loadable-uws').useLoadableUws()}`)
  run(require('./rows').benchOptions()).then((r) => console.log(render(r)), (err) => { console.error(err); process.exit(1) })
}
