'use strict'
// The pool's idle decay (src/core/pool.rs states the rule): while the pool holds memory, or
// bodies hold blocks that will come back to it, this timer runs a decay step each time
// the native side asks (src/node/decay.rs arms it from a callback, and each step answers
// the ms until the next, 0 when nothing is held). Unref'd: it never keeps a process alive.
const native = require('../native/native')

function step () {
  const ms = native.poolDecay()
  if (ms > 0) setTimeout(step, ms).unref()
}

native.poolDecayHook((ms) => { setTimeout(step, ms).unref() })
