'use strict'
// End to end: bare uWS servers (child processes, one per contender, bench/server.js) read
// POST bodies while bench/load.js drives them over 127.0.0.1. Rounds alternate the
// contenders' order; the figure to trust is the server's CPU time per request
// (process.cpuUsage), which the other jobs on a shared machine disturb less than req/s.
// The seed's reader (bench/seed.js, ultimate-express PR #369) is the one uws-body has to
// beat: uws-body / seed is paired by round, with the rounds uws-body used less CPU.
// (a)-(d) read raw bodies only. (e) is hyper-express 6.17's `await req.buffer()`, in a
// server process of its own (it owns its uWS app): a whole framework against a bare
// handler, so on small bodies the gap is mostly the framework's per-request cost
// (routing, its Request and Response objects), not the body reading.
// Every contender is checked on each row's request before it is timed (bench/answer.js).
const { fork } = require('node:child_process')
const path = require('node:path')
const { load, get, portOf } = require('./load')
const { median, paired, table } = require('./stats')
const { expected, check } = require('./answer')
const { cases } = require('./rows')

const MIB = 1024 * 1024
const NAMES = {
  a: '(a) copy+concat',
  b: '(b) JS prealloc',
  c: '(c) uws-body BodyAccumulator',
  d: '(d) count only',
  e: '(e) hyper-express req.buffer()',
  seed: "seed's reader",
  uws: 'uws-body readBody / readText'
}
const KEYS = Object.keys(NAMES)
// The routes each contender serves; (e) only its raw reader, as a reference framework.
const ROUTES = { a: ['/raw'], b: ['/raw'], c: ['/raw'], d: ['/raw'], e: ['/raw'], seed: ['/raw', '/json', '/text', '/urlencoded'], uws: ['/raw', '/json', '/text', '/urlencoded'] }

async function start (key) {
  const [file, args] = key === 'e' ? ['hyper-express-server.js', []] : ['server.js', [key]]
  const child = fork(path.join(__dirname, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  try {
    return { child, port: await portOf(child) }
  } catch (err) {
    child.kill()
    throw err
  }
}

/** What a contender answers: the raw readers the length as sent, the parsers the summary. */
function answerOf (key, route, headers, body) {
  return ['a', 'b', 'c', 'd'].includes(key) ? String(body.length) : expected(route, headers, body)
}

async function run ({ quick = false, rows = null, kinds = null, rounds = quick ? 3 : 5, seconds = quick ? 0.7 : 1.5 } = {}) {
  const keys = kinds || KEYS
  const all = cases()
  const unknown = [...keys.filter((k) => !NAMES[k]), ...(rows || []).filter((n) => !all.some(([name]) => name === n))]
  if (unknown.length) throw new Error(`bench: no such contender or row: ${unknown.join(', ')} (contenders: ${KEYS.join(', ')}; rows: ${all.map(([n]) => n).join(', ')})`)
  const servers = {}
  const results = []
  try {
    for (const key of keys) servers[key] = await start(key)
    for (const [name, route, headers, body] of all.filter(([name]) => rows === null || rows.includes(name))) {
      // hyper-express hands an encoded body on as sent, so it sits out the encoded rows.
      const here = keys.filter((k) => ROUTES[k].includes(route) && !(k === 'e' && headers['content-encoding']))
      if (here.length === 0) continue
      for (const key of here) await check(servers[key].port, NAMES[key], route, headers, body, answerOf(key, route, headers, body))
      // A short untimed load first: each server's first requests on a route pay its compilation.
      for (const key of here) await load(servers[key].port, { path: route, headers, body, connections: 2, seconds: seconds / 4 })
      const cpu = Object.fromEntries(here.map((k) => [k, []]))
      const rps = Object.fromEntries(here.map((k) => [k, []]))
      const peak = Object.fromEntries(here.map((k) => [k, 0]))
      const gc = Object.fromEntries(here.map((k) => [k, { scavenges: 0, markCompacts: 0, requests: 0 }]))
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? [...here].reverse() : here
        for (const key of order) {
          const { port } = servers[key]
          await get(port, '/reset')
          const { completed, seconds: took } = await load(port, { path: route, headers, body, connections: body.length >= 4 * MIB ? 2 : 4, seconds })
          const stats = JSON.parse(await get(port, '/stats'))
          cpu[key].push(stats.cpuMicros / Math.max(1, stats.requests))
          rps[key].push(completed / took)
          if (stats.hwm) peak[key] = Math.max(peak[key], stats.hwm)
          if (stats.gc) {
            gc[key].scavenges += stats.gc.scavenges
            gc[key].markCompacts += stats.gc.markCompacts
            gc[key].requests += stats.requests
          }
        }
      }
      // a / b paired by round, with the range of the ratios and the rounds a used less CPU.
      const pair = (a, b) => {
        if (!cpu[a] || !cpu[b]) return null
        const ratios = cpu[a].map((x, i) => x / cpu[b][i])
        return { ...paired(cpu[a], cpu[b]), min: Math.min(...ratios), max: Math.max(...ratios) }
      }
      const row = { name, rounds, seed: pair('uws', 'seed'), cb: pair('c', 'b'), ce: pair('c', 'e'), peak: {}, gc: {} }
      for (const k of here) {
        row[`cpu_${k}`] = median(cpu[k])
        row[`rps_${k}`] = median(rps[k])
        row.peak[k] = peak[k]
        row.gc[k] = gc[k].requests ? 1000 * gc[k].scavenges / gc[k].requests : NaN
      }
      results.push(row)
      if (require.main === module || process.env.BENCH_VERBOSE) {
        console.error(formatRow(row, KEYS.filter((k) => here.includes(k))).join(' | '))
        console.error(`  scavenges per 1000 requests: ${here.filter((k) => k !== 'e').map((k) => `${k} ${row.gc[k].toFixed(1)}`).join(', ')}`)
      }
    }
  } finally {
    for (const { child } of Object.values(servers)) child.kill()
  }
  return results
}

function formatRow (r, shown = KEYS) {
  const cell = (k) => r[`cpu_${k}`] === undefined ? 'n/a' : `${r[`cpu_${k}`].toFixed(0)} us / ${r[`rps_${k}`].toFixed(0)}`
  const ratio = (p) => p ? `${p.ratio.toFixed(2)} (${p.min.toFixed(2)}-${p.max.toFixed(2)})` : '-'
  const won = (p) => p ? `${p.won}/${p.rounds}` : '-'
  const mib = (k) => r.peak[k] ? (r.peak[k] / MIB).toFixed(0) : '?'
  return [r.name, ...shown.map(cell), ratio(r.seed), won(r.seed), r.seed ? `${mib('uws')} / ${mib('seed')}` : '-', ratio(r.cb), won(r.cb), ratio(r.ce), won(r.ce)]
}

function render (results) {
  const shown = KEYS.filter((k) => results.some((r) => r[`cpu_${k}`] !== undefined))
  return table(['request', ...shown.map((k) => `${NAMES[k]}: CPU/req / req/s`), 'CPU uws-body / seed (range)', 'uws-body won', 'peak RSS MiB: uws-body / seed', 'CPU c/b (range)', 'c won', 'CPU c/e (range)', 'c won vs e'],
    results.map((r) => formatRow(r, shown)))
}

module.exports = { run, render }

// node bench/e2e.js [--quick] [--rows 'raw 512 KiB,json 1 KiB'] [--kinds seed,uws,a,b,c,d,e]
//   [--rounds N] [--seconds S]   (S: seconds of load per contender per round)
if (require.main === module) {
  console.error(`Node ${process.version}, ${require('../scripts/test-env/loadable-uws').useLoadableUws()}`)
  run(require('./rows').benchOptions()).then((r) => console.log(render(r)), (err) => { console.error(err); process.exit(1) })
}
