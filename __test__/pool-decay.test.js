'use strict'
// The pool gives idle memory back. A bare uWS server in its own process (no --expose-gc,
// never asked to collect) reads mixed bodies of 4 KiB to 32 MiB from 8 keep-alive
// connections for 3 s, then no request comes but GET /stats: every block the pool holds
// must be freed within 1.5 x IDLE_AFTER of its return (src/core/pool.rs: idle for
// IDLE_AFTER, checked every IDLE_AFTER / 2), and the server's RSS must fall with it.
const test = require('node:test')
const assert = require('node:assert/strict')
const { startIdleServer, mixedLoad, sleep, MIB } = require('./helpers/idle-load')

const IDLE_AFTER = 4000 // src/core/pool.rs IDLE_AFTER
// A block returned at t is freed by t + 1.5 x IDLE_AFTER; a second for the timer and
// the sampling.
const FREED_WITHIN = 1.5 * IDLE_AFTER + 1000
// Blocks also come back when V8 collects their Buffers, which an idle process does on its
// own some seconds after the load (V8's memory reducer), at a time of V8's choosing: the
// test follows each return rather than waiting for the last, and stops at this.
const WATCH = 12000
// What the pool may hold beyond the blocks returned in the last FREED_WITHIN ms.
const BOUND = 0

test('idle blocks go back to the system once the load stops, with no request arriving', async () => {
  const server = await startIdleServer('uws')
  try {
    const load = await mixedLoad(server.port, { clients: 8, ms: 3000 })
    assert.ok(load.requests > 20, `the load ran (${load.requests} requests)`)
    const end = Date.now()
    const first = await server.stats()
    // [ms after the load, stats]; the pool's bytes only rise (a Buffer collected, its
    // block returned) or fall (a decay step) while no body is read.
    const samples = [[0, first]]
    while (Date.now() - end < WATCH) {
      await sleep(250)
      samples.push([Date.now() - end, await server.stats()])
    }
    const mib = (b) => (b / MIB).toFixed(1)
    const last = samples[samples.length - 1][1]
    let returned = first.bytesPooled
    let freed = 0
    const rises = [[0, first.bytesPooled]]
    for (let i = 1; i < samples.length; i++) {
      const change = samples[i][1].bytesPooled - samples[i - 1][1].bytesPooled
      if (change > 0) rises.push([samples[i][0], change])
      if (change > 0) returned += change
      else freed -= change
    }
    const story = `pooled at the load's end ${mib(first.bytesPooled)} MiB, returned since ${mib(returned - first.bytesPooled)} MiB, freed ${mib(freed)} MiB; ` +
      `RSS ${mib(first.rss)} MiB then, ${mib(last.rss)} MiB ${samples[samples.length - 1][0]} ms later; pooled then ${mib(last.bytesPooled)} MiB, in use ${mib(last.bytesInUse)} MiB`
    assert.ok(first.bytesPooled > 32 * MIB, `the load filled the pool (${story})`)
    for (const [at, s] of samples) {
      if (at < FREED_WITHIN) continue
      const recent = rises.filter(([t]) => t > at - FREED_WITHIN).reduce((sum, [, bytes]) => sum + bytes, 0)
      assert.ok(s.bytesPooled <= BOUND + recent,
        `${at} ms after the load the pool holds ${mib(s.bytesPooled)} MiB, of which only ${mib(recent)} MiB came back in the last ${FREED_WITHIN} ms (${story})`)
    }
    assert.ok(last.rss <= first.rss - freed / 2, `RSS fell by at least half of what the pool freed (${story})`)
  } finally {
    server.stop()
  }
})
