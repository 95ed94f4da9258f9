'use strict'
// End to end: a uWS server (child process) reads POST bodies with each contender while
// bench/load.js drives it over 127.0.0.1. Rounds alternate the contenders' order; the
// figure to trust is the server's CPU time per request (process.cpuUsage), which the
// other jobs on a shared machine disturb less than req/s. (e) is hyper-express 6.17's
// `await req.buffer()`, in a server process of its own (it owns its uWS app): a whole
// framework against a bare handler, so on small bodies the gap is mostly the framework's
// per-request cost (routing, its Request and Response objects), not the body reading.
const { fork } = require('node:child_process')
const path = require('node:path')
const { load, get, portOf } = require('./load')
const { median, paired, formatSize, table } = require('./stats')

const KIB = 1024
const MIB = 1024 * KIB
const NAMES = { a: '(a) copy+concat', b: '(b) JS prealloc', c: '(c) uws-body', d: '(d) count only', e: '(e) hyper-express req.buffer()' }
const KEYS = Object.keys(NAMES)

async function start (file) {
  const child = fork(path.join(__dirname, file), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  try {
    return { child, port: await portOf(child) }
  } catch (err) {
    child.kill()
    throw err
  }
}

async function run ({ quick = false } = {}) {
  const bare = await start('server.js')
  const hyper = await start('hyper-express-server.js').catch((err) => { bare.child.kill(); throw err })
  const where = { a: [bare, '/a'], b: [bare, '/b'], c: [bare, '/c'], d: [bare, '/d'], e: [hyper, '/raw'] }
  const rounds = quick ? 3 : 5
  const seconds = quick ? 0.7 : 1.5
  const results = []
  try {
    for (const size of [4 * KIB, 64 * KIB, 512 * KIB, 4 * MIB, 32 * MIB]) {
      const body = Buffer.alloc(size, 0x61)
      const cpu = Object.fromEntries(KEYS.map((k) => [k, []]))
      const rps = Object.fromEntries(KEYS.map((k) => [k, []]))
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? [...KEYS].reverse() : KEYS
        for (const name of order) {
          const [{ port }, route] = where[name]
          await get(port, '/reset')
          const { completed, seconds: took } = await load(port, { path: route, body, connections: size >= 4 * MIB ? 2 : 4, seconds })
          const stats = JSON.parse(await get(port, '/stats'))
          cpu[name].push(stats.cpuMicros / Math.max(1, stats.requests))
          rps[name].push(completed / took)
        }
      }
      const cb = paired(cpu.c, cpu.b)
      const ce = paired(cpu.c, cpu.e)
      const ceRatios = cpu.c.map((x, i) => x / cpu.e[i])
      const row = { size, rounds, cb: cb.ratio, cbWon: cb.won, ce: ce.ratio, ceWon: ce.won, ceMin: Math.min(...ceRatios), ceMax: Math.max(...ceRatios) }
      for (const k of KEYS) { row[`cpu_${k}`] = median(cpu[k]); row[`rps_${k}`] = median(rps[k]) }
      results.push(row)
      if (require.main === module || process.env.BENCH_VERBOSE) console.error(formatRow(row).join(' | '))
    }
  } finally {
    bare.child.kill()
    hyper.child.kill()
  }
  return results
}

function formatRow (r) {
  const us = (x) => `${x.toFixed(0)} us`
  return [formatSize(r.size), ...KEYS.map((k) => `${us(r[`cpu_${k}`])} / ${r[`rps_${k}`].toFixed(0)}`), r.cb.toFixed(2), `${r.cbWon}/${r.rounds}`,
    `${r.ce.toFixed(2)} (${r.ceMin.toFixed(2)}-${r.ceMax.toFixed(2)})`, `${r.ceWon}/${r.rounds}`]
}

function render (results) {
  return table(['body', ...Object.values(NAMES).map((n) => `${n}: CPU/req / req/s`), 'CPU c/b', 'c won', 'CPU c/e (range)', 'c won vs e'], results.map(formatRow))
}

module.exports = { run, render }

if (require.main === module) {
  run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
}
