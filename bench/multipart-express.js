'use strict'
// multipart/form-data uploads under Express-style frameworks: uws-body's multipart()
// under ultimate-express, multer under ultimate-express, multer under Express 5. The same
// requests, contenders alternating within each round, server CPU time per request
// (process.cpuUsage in each server's own process) and req/s; medians, the spread over
// rounds, and paired ratios (multer's CPU / uws-body's in the same round).
// `node bench/multipart-express.js [--quick]`: tables only, nothing asserted.
const { fork } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { load, get, portOf } = require('./load')
const { median, paired, table } = require('./stats')
const { useLoadableUws } = require('../scripts/test-env/loadable-uws')

const KIB = 1024
const MIB = 1024 * KIB
const KINDS = ['uws', 'multer-uex', 'multer-express']
const NAMES = { uws: 'uEx + uws-body multipart()', 'multer-uex': 'uEx + multer', 'multer-express': 'Express 5 + multer' }
const BOUNDARY = '----uwsBodyBench7MA4YWxkTrZu0gW'

/** Bytes that look like a file: not compressible, with CRLFs and dashes here and there. */
function content (size, seed) {
  const out = Buffer.allocUnsafe(size)
  let x = seed >>> 0 || 1
  for (let i = 0; i < size; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    out[i] = x & 0xff
  }
  for (let i = 1000; i + 4 < size; i += 4099) out.write('\r\n--', i, 'latin1')
  return out
}

function form (fields, files) {
  const out = []
  for (const [name, value] of fields) {
    out.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
  }
  for (const [name, filename, data] of files) {
    out.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), data, Buffer.from('\r\n'))
  }
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  return Buffer.concat(out)
}

function cases () {
  const fields = Array.from({ length: 10 }, (_, i) => [`field${i}`, `value ${i} `.repeat(8)])
  const big = form(fields, [['file', 'big.bin', content(32 * MIB, 7)]])
  const many = form([], Array.from({ length: 100 }, (_, i) => ['files', `f${i}.bin`, content(10 * KIB, i + 1)]))
  return [
    ['(a) 32 MiB file + 10 fields, memory', '/memory', big],
    ['(b) 100 files of 10 KiB, memory', '/memory', many],
    ['(c) 32 MiB file + 10 fields, disk', '/disk', big]
  ]
}

const spread = (xs) => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}`

async function run ({ quick = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-bench-multipart-'))
  const servers = {}
  const rounds = quick ? 3 : 5
  const seconds = quick ? 0.6 : 1.5
  const results = []
  try {
    for (const kind of KINDS) {
      const child = fork(path.join(__dirname, 'multipart-express-server.js'), [kind, dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      servers[kind] = { child }
      servers[kind].port = await portOf(child)
    }
    const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }
    for (const [name, route, body] of cases()) {
      const cpu = Object.fromEntries(KINDS.map((k) => [k, []]))
      const rps = Object.fromEntries(KINDS.map((k) => [k, []]))
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? [...KINDS].reverse() : KINDS
        for (const kind of order) {
          const { port } = servers[kind]
          await get(port, '/reset')
          const { completed, seconds: took } = await load(port, { path: route, headers, body, connections: 2, seconds })
          const stats = JSON.parse(await get(port, '/stats'))
          cpu[kind].push(stats.cpuMicros / Math.max(1, stats.requests))
          rps[kind].push(completed / took)
        }
      }
      const row = { name, rounds, cpu, rps }
      row.vsUex = paired(cpu['multer-uex'], cpu.uws)
      row.vsExpress = paired(cpu['multer-express'], cpu.uws)
      results.push(row)
      if (require.main === module) console.error(formatRow(row).join(' | '))
    }
  } finally {
    for (const { child } of Object.values(servers)) child.kill()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return results
}

function formatRow (r) {
  const cell = (k) => `${median(r.cpu[k]).toFixed(0)} us (${spread(r.cpu[k])}) / ${median(r.rps[k]).toFixed(1)}`
  // paired() counts the rounds its first argument won; uws-body won the others.
  const ratio = (p) => `${p.ratio.toFixed(2)}x (${p.rounds - p.won}/${p.rounds})`
  return [r.name, ...KINDS.map(cell), ratio(r.vsUex), ratio(r.vsExpress)]
}

function render (results) {
  return table([
    'request',
    ...KINDS.map((k) => `${NAMES[k]}: CPU/req median (min-max) / req/s`),
    'multer uEx / uws-body CPU (rounds uws-body won)',
    'multer Express / uws-body CPU (rounds won)'
  ], results.map(formatRow))
}

module.exports = { run, render }

if (require.main === module) {
  console.log(`Node ${process.version}, ${useLoadableUws()}`)
  run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
}
