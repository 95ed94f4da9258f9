'use strict'
// The memory budget after a burst: bodies the application has dropped never keep another
// from being admitted. A server in its own process, without --expose-gc and never asked
// to collect (helpers/budget-server.js), takes a storm of concurrent slow uploads far over
// its budget (some admitted, the rest 503), then five lone uploads at once: each must get
// its bytes back, and the storm's peak RSS stays under baseline + budget + pool bound +
// a margin for the rest of the process.
const test = require('node:test')
const assert = require('node:assert/strict')
const { startBudgetServer, storm, MIB } = require('./helpers/budget-storm')

const BUDGET = 48 * MIB
const POOL = 32 * MIB
// V8's heap, uWS's buffers, the three apps, and the Buffers handed out that V8 has not
// collected yet: V8 starts a collection for about every 64 MiB of ArrayBuffer bytes.
const MARGIN = 128 * MIB

test('after a storm over the budget, lone uploads are admitted without any forced GC', async () => {
  const server = await startBudgetServer({ budget: BUDGET, poolLimit: POOL })
  try {
    const before = await server.stats()
    assert.equal(before.gcExposed, false, 'the server must run without --expose-gc')

    const burst = await storm(server.ports.uws, { clients: 200, size: 4 * MIB, pieces: 16, pause: 20 })
    assert.deepEqual(burst.wrong, [], 'every storm answer is 200 with its sha256 or 503 ERR_BODY_BUDGET')
    assert.ok(burst.ok > 0, `some storm uploads are admitted (${burst.ok})`)
    assert.ok(burst.budget > 0, `the storm is over the budget (${burst.budget} refused)`)

    const lone = await storm(server.ports.uws, { clients: 5, size: 4 * MIB, pieces: 16, pause: 20, seed: 1000 })
    const after = await server.stats()
    assert.deepEqual(lone.wrong, [], 'the lone uploads get 200 with their bytes')
    assert.equal(lone.ok, 5, `5 lone uploads admitted (reserved after the storm: ${(after.budgetReserved / MIB).toFixed(1)} MiB)`)

    const grown = after.peakRss - before.rss
    assert.ok(grown <= BUDGET + POOL + MARGIN,
      `peak RSS ${(grown / MIB).toFixed(0)} MiB over baseline, bound ${((BUDGET + POOL + MARGIN) / MIB).toFixed(0)} MiB`)
  } finally {
    server.stop()
  }
})
