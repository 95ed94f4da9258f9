'use strict'
const { setImmediate: tick, setTimeout: sleep } = require('node:timers/promises')
const { stats } = require('../..')

/**
 * Native bytes still held once every Buffer handed out is garbage: collects, lets Node
 * run the external-buffer finalizers (they run on a later turn), and reads stats(). A
 * finalizer can come a round or two late (seen on Node 22: a 4 MiB body freed one 10 ms
 * round after four immediate ones), so a figure above zero is read again until it has not
 * moved for three rounds (at most 500 ms): what is still held then is held.
 */
async function bytesInUseAfterGc () {
  if (typeof global.gc !== 'function') throw new Error('run the tests with node --expose-gc (npm test does)')
  for (let i = 0; i < 4; i++) {
    global.gc()
    await tick()
  }
  let held = stats().bytesInUse
  const deadline = Date.now() + 500
  for (let still = 0; held !== 0 && still < 3 && Date.now() < deadline;) {
    global.gc()
    await sleep(10)
    const now = stats().bytesInUse
    still = now === held ? still + 1 : 0
    held = now
  }
  return held
}

module.exports = { bytesInUseAfterGc }
