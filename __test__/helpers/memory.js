'use strict'
const { setImmediate: tick } = require('node:timers/promises')
const { stats } = require('../..')

/**
 * Native bytes still held once every Buffer handed out is garbage: collects, lets Node
 * run the external-buffer finalizers (they run on a later turn), and reads stats().
 */
async function bytesInUseAfterGc () {
  if (typeof global.gc !== 'function') throw new Error('run the tests with node --expose-gc (npm test does)')
  for (let i = 0; i < 4; i++) {
    global.gc()
    await tick()
  }
  return stats().bytesInUse
}

module.exports = { bytesInUseAfterGc }
