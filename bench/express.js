'use strict'
// ultimate-express with its built-in parsers, with uws-body's, Express + body-parser, and
// hyper-express 6.17's own readers (req.buffer(), req.json(), req.text(), req.urlencoded()):
// the same requests, alternating rounds, server CPU time per request and req/s.
// hyper-express ignores content-encoding (its readers hand on the bytes as sent), so it
// sits out the gzip row rather than be timed parsing nothing.
const { fork } = require('node:child_process')
const path = require('node:path')
const zlib = require('node:zlib')
const { load, get, portOf } = require('./load')
const { median, paired, table } = require('./stats')

const KIB = 1024
const MIB = 1024 * KIB
const KINDS = ['builtin', 'uws', 'express', 'hyper', 'floor']
const NAMES = { builtin: 'ultimate-express built-in', uws: 'ultimate-express + uws-body', express: 'Express + body-parser', hyper: 'hyper-express 6.17 built-in', floor: 'ultimate-express, bytes counted only' }
const SERVERS = { hyper: ['hyper-express-server.js', []] }

/** A JSON document of about `size` bytes: an object holding an array of small records. */
function json (size) {
  const items = []
  let length = 12
  for (let i = 0; length < size; i++) {
    const item = { id: i, name: `user${i % 997}`, active: i % 2 === 0, tags: ['a', `b${i % 13}`] }
    items.push(item)
    length += JSON.stringify(item).length + 1
  }
  return Buffer.from(JSON.stringify({ items }))
}
const form = (size) => Buffer.from(Array.from({ length: Math.ceil(size / 20) }, (_, i) => `field${i}=value%20${i}`).join('&').slice(0, size).replace(/&[^&]*$/, ''))

function cases () {
  const json512 = json(512 * KIB)
  return [
    ['raw 512 KiB', '/raw', { 'content-type': 'application/octet-stream' }, Buffer.alloc(512 * KIB, 0x61)],
    ['raw 4 MiB', '/raw', { 'content-type': 'application/octet-stream' }, Buffer.alloc(4 * MIB, 0x61)],
    ['raw 32 MiB', '/raw', { 'content-type': 'application/octet-stream' }, Buffer.alloc(32 * MIB, 0x61)],
    ['json 1 KiB', '/json', { 'content-type': 'application/json' }, json(KIB)],
    ['json 512 KiB', '/json', { 'content-type': 'application/json' }, json512],
    ['json 512 KiB gzip', '/json', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, zlib.gzipSync(json512)],
    ['urlencoded 2 KiB', '/urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, form(2 * KIB)],
    ['text 64 KiB', '/text', { 'content-type': 'text/plain; charset=utf-8' }, Buffer.from('caf\u00e9 '.repeat(64 * KIB / 6)).subarray(0, 64 * KIB)]
  ]
}

async function run ({ quick = false } = {}) {
  const servers = {}
  const rounds = quick ? 3 : 5
  const seconds = quick ? 0.5 : 1.2
  const results = []
  try {
    for (const kind of KINDS) {
      const [file, args] = SERVERS[kind] || ['express-server.js', [kind]]
      const child = fork(path.join(__dirname, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      servers[kind] = { child }
      servers[kind].port = await portOf(child)
    }
    for (const [name, route, headers, body] of cases()) {
      const kinds = headers['content-encoding'] ? KINDS.filter((k) => k !== 'hyper') : KINDS
      const cpu = Object.fromEntries(kinds.map((k) => [k, []]))
      const rps = Object.fromEntries(kinds.map((k) => [k, []]))
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? [...kinds].reverse() : kinds
        for (const kind of order) {
          const { port } = servers[kind]
          await get(port, '/reset')
          const { completed, seconds: took } = await load(port, { path: route, headers, body, connections: body.length >= 4 * MIB ? 2 : 4, seconds })
          const stats = JSON.parse(await get(port, '/stats'))
          cpu[kind].push(stats.cpuMicros / Math.max(1, stats.requests))
          rps[kind].push(completed / took)
        }
      }
      const speedup = paired(cpu.builtin, cpu.uws) // builtin / uws: above 1, uws-body is faster
      // builtin / floor: the speed-up a body reader that cost nothing would have.
      const ceiling = paired(cpu.builtin, cpu.floor)
      const row = { name, rounds, speedup: speedup.ratio, won: rounds - speedup.won, ceiling: ceiling.ratio }
      for (const k of kinds) { row[`cpu_${k}`] = median(cpu[k]); row[`rps_${k}`] = median(rps[k]) }
      if (cpu.hyper) { // uws / hyper: below 1, uws-body used less CPU
        const ratios = cpu.uws.map((x, i) => x / cpu.hyper[i])
        row.hyper = { ...paired(cpu.uws, cpu.hyper), min: Math.min(...ratios), max: Math.max(...ratios) }
      }
      results.push(row)
      if (require.main === module || process.env.BENCH_VERBOSE) console.error(formatRow(row).join(' | '))
    }
  } finally {
    for (const { child } of Object.values(servers)) child.kill()
  }
  return results
}

function formatRow (r) {
  const cell = (k) => r[`cpu_${k}`] === undefined ? 'n/a (no content-encoding)' : `${r[`cpu_${k}`].toFixed(0)} us / ${r[`rps_${k}`].toFixed(0)}`
  const h = r.hyper
  return [r.name, ...KINDS.map(cell), `${r.speedup.toFixed(2)}x`, `${r.won}/${r.rounds}`, `${r.ceiling.toFixed(2)}x`,
    h ? `${h.ratio.toFixed(2)} (${h.min.toFixed(2)}-${h.max.toFixed(2)}), ${h.won}/${h.rounds}` : '-']
}

function render (results) {
  return table(['request', ...KINDS.map((k) => `${NAMES[k]}: CPU/req / req/s`), 'uws-body speed-up (CPU, vs built-in)', 'rounds won', 'ceiling: built-in / bytes counted only', 'CPU uws-body / hyper-express (range), rounds won'], results.map(formatRow))
}

module.exports = { run, render }

if (require.main === module) run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
