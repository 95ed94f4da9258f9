'use strict'
// Idle memory after a load: a bare uWS server per reader, in its own process (no
// --expose-gc), takes mixed bodies of 4 KiB to 32 MiB from 8 keep-alive connections for
// LOAD_MS, then no request but GET /stats for 30 s. The table gives its RSS and
// stats().bytesPooled over those 30 s: uws-body's readBody against the seed's reader
// (res.onData copies, then Buffer.concat: __test__/helpers/idle-server.js). The pool's
// idle decay (src/core/pool.rs IDLE_AFTER) is what brings uws-body's down.
// Prints figures; asserts nothing.
require('./tune')
const { useLoadableUws } = require('../scripts/test-env/loadable-uws')
const { startIdleServer, mixedLoad, sleep, MIB } = require('../__test__/helpers/idle-load')
const { table } = require('./stats')

const LOAD_MS = Number(process.env.IDLE_LOAD_MS) || 5000
const AT = [0, 2, 5, 10, 15, 20, 25, 30] // seconds after the load
const READERS = { uws: 'uws-body', seed: 'seed' }

async function measure (kind) {
  const server = await startIdleServer(kind)
  try {
    const base = await server.stats()
    const load = await mixedLoad(server.port, { clients: 8, ms: LOAD_MS })
    const end = Date.now()
    const samples = []
    for (const s of AT) {
      await sleep(Math.max(0, end + s * 1000 - Date.now()))
      samples.push(await server.stats())
    }
    return { kind, base, load, samples }
  } finally {
    server.stop()
  }
}

async function main () {
  const build = useLoadableUws()
  console.log(`bench/idle.js: Node ${process.version}, ${build}, load ${LOAD_MS} ms of 8 keep-alive clients, bodies 4 KiB-32 MiB`)
  const results = []
  for (const kind of Object.keys(READERS)) results.push(await measure(kind))
  const mib = (b) => (b / MIB).toFixed(0)
  const rows = []
  for (const r of results) {
    rows.push([`${READERS[r.kind]} RSS MiB`, mib(r.base.rss), ...r.samples.map((s) => mib(s.rss))])
    if (r.kind === 'uws') rows.push([`${READERS[r.kind]} pooled MiB`, mib(r.base.bytesPooled), ...r.samples.map((s) => mib(s.bytesPooled))])
  }
  console.log(table(['after the load (s)', 'before', ...AT.map(String)], rows))
  for (const r of results) console.log(`${READERS[r.kind]}: ${r.load.requests} requests, ${mib(r.load.bytes)} MiB in ${LOAD_MS} ms`)
  const [uws, seed] = results.map((r) => r.samples[r.samples.length - 1].rss)
  console.log(`RSS ${AT[AT.length - 1]} s after the load: uws-body ${mib(uws)} MiB, seed ${mib(seed)} MiB (${uws >= seed ? '+' : ''}${mib(uws - seed)} MiB)`)
}

main().catch((err) => { console.error(err); process.exit(1) })
