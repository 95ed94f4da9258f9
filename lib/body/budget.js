'use strict'
// The JS tier's share of the process's memory budget (src/core/budget.rs): bodies read
// in JS (lib/body/body-store.js) reserve their bytes from a credit this thread leases from the
// budget ahead of need (src/node/lease.rs), so a small body costs two integer
// operations, not a call to the addon (docs/performance.md, row 'budget per body'). The
// credit idle on a thread is at most two leases ahead (a 64th of the budget, at most 1
// MiB each); the lease is the thread's reservation in the addon and goes back when the
// thread ends.
const os = require('node:os')
const native = require('../native/native')

let credit = 0
// Credit past this goes back to the budget: the lease ahead, twice.
let spare = 0

/** Reserves `n` bytes for a JS-tier body: false when the budget has no room. */
function take (n) {
  if (n <= credit) {
    credit -= n
    return true
  }
  return lease(n)
}

function lease (n) {
  const need = n - credit
  const granted = native.budgetLease(need)
  if (granted === 0) return false
  credit = granted - need
  if (granted > need) spare = 2 * (granted - need)
  return true
}

/** Returns `n` bytes a JS-tier body reserved: its Buffer was handed out or dropped. */
function give (n) {
  credit += n
  if (credit > spare) giveBack()
}

function giveBack () {
  const keep = spare / 2
  spare = 2 * native.budgetReturn(credit - keep)
  credit = keep
}

/** This thread's idle credit: reserved in the budget, held by no body. */
function idle () {
  return credit
}

/**
 * The default budget: a quarter of the memory this process may use, the cgroup's limit
 * (process.constrainedMemory()) when there is one, else physical memory. Bodies beyond
 * it get 503s; the rest is for the application, V8's heap, the pool's idle blocks (256
 * MiB by default), JS-tier bodies already handed out and whatever else shares the
 * machine (docs/api.md, setMemoryBudget).
 */
function defaultBudget () {
  return Math.floor(processMemory() / DEFAULT_SHARE)
}
const DEFAULT_SHARE = 4

/**
 * The pool's default bound on idle blocks: 256 MiB (src/core/pool.rs DEFAULT_POOL_BYTES),
 * or an eighth of the memory the process may use where that is less (a container under
 * 2 GiB), so that idle blocks and the budget together stay under half of it.
 */
function defaultPoolLimit () {
  return Math.floor(processMemory() / POOL_SHARE)
}
const POOL_SHARE = 8

/** The memory this process may use: its cgroup's limit when there is one, else physical memory. */
function processMemory () {
  const total = os.totalmem()
  const constrained = typeof process.constrainedMemory === 'function' ? process.constrainedMemory() : 0
  return constrained > 0 && constrained < total ? constrained : total
}

native.budgetDefault(defaultBudget())
native.poolDefault(defaultPoolLimit())

module.exports = { take, give, idle, defaultBudget }
