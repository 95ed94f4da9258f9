'use strict'
// tuneGc(): an opt-in for Node 24 (V8 13), whose collector handles garbage Buffers far
// more expensively than Node 20's and 22's.
//
// A body handed out as a Buffer is the program's until V8 collects it, and V8 finds a
// dropped Buffer cheaply only in a scavenge of the young generation. For Buffers whose
// memory V8 did not allocate (uws-body's, and any addon's external Buffers), the one
// trigger is an ArrayBuffer allocation made while young ArrayBuffers hold at least 2 x
// 2 x scavenger_max_new_space_capacity_mb (src/node/buffer.rs nudges it after each body).
// That flag defaults to 8 up to Node 22 (a scavenge every 32 MiB of bodies) and to 32 on
// Node 24 (128 MiB): past 64 MiB, V8's external-memory limit starts a full mark-compact
// first, so on Node 24 bodies pay full mark-compacts where a scavenge would do
// (docs/performance.md, row 'tuneGc'; bench/micro.js counts the collections).
//
// Set at run time, the flag moves that one threshold back to 8: V8 sizes the main
// isolate's young generation when it starts (--scavenger-max-new-space-capacity-mb=8 on
// the command line would shrink that too), so only worker threads started later get a
// smaller one. It changes a process-wide V8 setting, so it is the application's call,
// never made by uws-body itself.
const v8 = require('node:v8')

const FLAG = 'scavenger-max-new-space-capacity-mb'
// No value is best for every body size (docs/performance.md, row 'tuneGc value').
const VALUE = 8

/** { applied, reason }: whether V8's flag was set, and why (not). */
function tuneGc () {
  const major = Number(process.versions.v8.split('.')[0])
  if (major < 12) {
    return { applied: false, reason: `V8 ${process.versions.v8} already scavenges garbage Buffers every 32 MiB` }
  }
  const given = process.execArgv.find((arg) => arg.replace(/_/g, '-').startsWith(`--${FLAG}`))
  if (given !== undefined) return { applied: false, reason: `${given} is on the command line` }
  v8.setFlagsFromString(`--${FLAG}=${VALUE}`)
  return { applied: true, reason: `--${FLAG}=${VALUE}: young ArrayBuffers of 32 MiB start a scavenge` }
}

module.exports = { tuneGc }
