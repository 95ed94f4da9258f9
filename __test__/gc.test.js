'use strict'
// Large bodies handed out as Buffers are collected by scavenges, not full mark-compacts:
// on Node 20 and 22 by the nudge alone (src/node/buffer.rs), on Node 24 once the
// application calls tuneGc() (lib/api/gc.js says why). Counted, not timed: the collections
// per 1000 bodies of 512 KiB, each dropped after a turn of the event loop.
const test = require('node:test')
const assert = require('node:assert/strict')
const { runChild, ending } = require('./helpers/child')

const NODE_MAJOR = Number(process.versions.node.split('.')[0])

const count = (tune) => `
  const { BodyAccumulator, tuneGc } = require(ROOT)
  const { PerformanceObserver, constants } = require('node:perf_hooks')
  const { setImmediate: tick } = require('node:timers/promises')
  const tuned = ${tune} ? tuneGc() : null
  const chunks = Array.from({ length: 8 }, () => new ArrayBuffer(64 * 1024))
  const seen = { minor: 0, major: 0 }
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) seen.minor++
      else if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) seen.major++
    }
  }).observe({ entryTypes: ['gc'] })
  const read = (known) => {
    const acc = new BodyAccumulator({ contentLength: known ? 512 * 1024 : null, limit: '1mb' })
    for (const chunk of chunks) acc.push(chunk)
    return acc.finish()
  }
  async function main () {
    for (let i = 0; i < 1500; i++) { read(i % 2); await tick() }
    await new Promise((resolve) => setTimeout(resolve, 20))
    seen.minor = seen.major = 0
    for (let i = 0; i < 2000; i++) { read(i % 2); await tick() }
    await new Promise((resolve) => setTimeout(resolve, 20))
    console.log(JSON.stringify({ tuned, minor: seen.minor / 2, major: seen.major / 2 }))
  }
  main()`

test('tuneGc() says what it did on this Node version', () => {
  const source = `
    const { tuneGc } = require(ROOT)
    console.log(JSON.stringify(tuneGc()))`
  const r = runChild(source)
  assert.equal(r.status, 0, ending(r))
  const out = JSON.parse(r.stdout)
  assert.equal(out.applied, NODE_MAJOR >= 22, out.reason)
  assert.equal(typeof out.reason, 'string')
})

test('512 KiB bodies dropped after a turn each: scavenges, not mark-compacts (Node 24: after tuneGc())', () => {
  const r = runChild(count(NODE_MAJOR >= 24), { gc: false })
  assert.equal(r.status, 0, ending(r))
  const per1000 = JSON.parse(r.stdout)
  // Collected by mark-compacts, these bodies cost 4 per 1000 (Node 24 without tuneGc())
  // to 8 (one per 64 MiB of external memory). Measured here, after the warm-up (the
  // heap's own growth is a mark-compact or two): 0-1 on Node 20, 0-0.5 on Node 24.
  assert.ok(per1000.major <= 2, `${per1000.major} mark-compacts per 1000 bodies (${per1000.minor} scavenges)`)
  assert.ok(per1000.minor >= 8, `${per1000.minor} scavenges per 1000 bodies: one every 64 bodies or more often`)
})
