'use strict'
// End to end: a uWS server (child process) reads POST bodies with each contender while
// bench/load.js drives it over 127.0.0.1. Rounds alternate the contenders' order; the
// figure to trust is the server's CPU time per request (process.cpuUsage), which the
// other jobs on a shared machine disturb less than req/s.
const { fork } = require('node:child_process')
const path = require('node:path')
const { load, get } = require('./load')
const { median, paired, formatSize, table } = require('./stats')

const KIB = 1024
const MIB = 1024 * KIB
const NAMES = { a: '(a) copy+concat', b: '(b) JS prealloc', c: '(c) uws-body', d: '(d) count only' }

async function run ({ quick = false } = {}) {
  const server = fork(path.join(__dirname, 'server.js'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const { port } = await new Promise((resolve) => server.once('message', resolve))
  const rounds = quick ? 3 : 5
  const seconds = quick ? 0.7 : 1.5
  const results = []
  try {
    for (const size of [4 * KIB, 64 * KIB, 512 * KIB, 4 * MIB, 32 * MIB]) {
      const body = Buffer.alloc(size, 0x61)
      const cpu = { a: [], b: [], c: [], d: [] }
      const rps = { a: [], b: [], c: [], d: [] }
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? ['d', 'c', 'b', 'a'] : ['a', 'b', 'c', 'd']
        for (const name of order) {
          await get(port, '/reset')
          const { completed, seconds: took } = await load(port, { path: `/${name}`, body, connections: size >= 4 * MIB ? 2 : 4, seconds })
          const stats = JSON.parse(await get(port, '/stats'))
          cpu[name].push(stats.cpuMicros / Math.max(1, stats.requests))
          rps[name].push(completed / took)
        }
      }
      const cb = paired(cpu.c, cpu.b)
      const row = { size, rounds, cb: cb.ratio, cbWon: cb.won }
      for (const k of 'abcd') { row[`cpu_${k}`] = median(cpu[k]); row[`rps_${k}`] = median(rps[k]) }
      results.push(row)
      if (require.main === module || process.env.BENCH_VERBOSE) console.error(formatRow(row).join(' | '))
    }
  } finally {
    server.kill()
  }
  return results
}

function formatRow (r) {
  const us = (x) => `${x.toFixed(0)} us`
  return [formatSize(r.size), ...[...'abcd'].map((k) => `${us(r[`cpu_${k}`])} / ${r[`rps_${k}`].toFixed(0)}`), r.cb.toFixed(2), `${r.cbWon}/${r.rounds}`]
}

function render (results) {
  return table(['body', ...Object.values(NAMES).map((n) => `${n}: CPU/req / req/s`), 'CPU c/b', 'c won'], results.map(formatRow))
}

module.exports = { run, render }

if (require.main === module) {
  run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
}
