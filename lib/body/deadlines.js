'use strict'
// The deadlines of bodies (the `timeout` option, parsed by lib/plan/timeout.js): the
// timers that end a body still arriving when its deadline passes, and the per-chunk check
// of a buffered body's.
const errors = require('../native/errors')
const { describe } = require('../plan/check')
const { parseTimeout } = require('../plan/timeout')

// Deadlines of COARSE_FROM ms and more share one unref'd interval that checks them every
// SWEEP_EVERY ms (so they fire up to a second late: 0.3% of the 300 s default), as Node's
// http server checks its own requestTimeout. A setTimeout + clearTimeout per request cost
// small bodies much of their throughput (docs/performance.md, row 'shared deadline
// sweep'); the shared sweep costs a Set entry.
// Shorter deadlines are asked for on purpose: they get their own precise timer.
const COARSE_FROM = 10000
const SWEEP_EVERY = 1000
const pending = new Set()
let sweeper = null

/**
 * Calls `onTimeout()` in `ms` unless cleared; returns the clear function (0 ms: none, and
 * a no-op clear). Timers are unref'd: a pending body never keeps a process alive.
 */
function startTimer (ms, onTimeout) {
  if (ms === 0) return noop
  if (ms < COARSE_FROM) {
    const timer = setTimeout(onTimeout, ms)
    timer.unref()
    return () => clearTimeout(timer)
  }
  const entry = { deadline: Date.now() + ms, onTimeout }
  pending.add(entry)
  if (sweeper === null) {
    sweeper = setInterval(sweep, SWEEP_EVERY)
    sweeper.unref()
  }
  return () => { pending.delete(entry) }
}

/** Fires every shared deadline passed by `now`; stops the interval when none is left. */
function sweep (now = Date.now()) {
  const due = []
  for (const entry of pending) {
    if (entry.deadline <= now) due.push(entry)
  }
  for (const entry of due) pending.delete(entry)
  if (pending.size === 0 && sweeper !== null) {
    clearInterval(sweeper)
    sweeper = null
  }
  // After the bookkeeping: a callback runs user code (next(err)), which may throw.
  for (const entry of due) entry.onTimeout()
}

const noop = () => {}

/**
 * The moment a buffered body's deadline passes (Infinity for none), for a check as each
 * chunk arrives: a body still arriving after it fails at its next chunk, and one whose
 * client fell silent is closed by uWS's own idle timeout (~10 s). Buffered bodies never
 * pause, so nothing else can hold them open. Registered deadlines (startTimer) cost more
 * than that under load (docs/performance.md, row 'deadline per chunk'); a check per chunk
 * costs one Date.now().
 */
function deadlineOf (ms) {
  if (ms === 0) return Infinity
  // A short deadline, asked for on purpose, is kept to the ms: negative marks it.
  if (ms < COARSE_FROM) return -(Date.now() + ms)
  return coarseNow() + ms
}

/** Whether `deadline` (from deadlineOf) has passed. */
function passed (deadline) {
  if (deadline === Infinity) return false
  return deadline < 0 ? Date.now() > -deadline : clock > deadline
}

// The time for deadlines of COARSE_FROM ms and more, to the second, as the shared sweep
// keeps them: two Date.now() calls were a tenth of a small body's JS under a framework
// (docs/performance.md, row 'per-request objects'). Kept by an unref'd interval, started
// by the first such deadline.
let clock = 0
let ticking = null

function coarseNow () {
  if (ticking === null) {
    clock = Date.now()
    ticking = setInterval(() => { clock = Date.now() }, SWEEP_EVERY)
    ticking.unref()
  }
  return clock
}

/**
 * For code built on BodyAccumulator: if the body is not finished or aborted within `ms`,
 * aborts it (its memory goes at once) and calls `onTimeout(err)` with a 408
 * `request.timeout` BodyError. Returns a function that cancels the deadline: call it on
 * every end path (finish, error, abort).
 */
function bodyTimeout (accumulator, ms, onTimeout) {
  if (accumulator === null || typeof accumulator !== 'object' || typeof accumulator.abort !== 'function') {
    throw new TypeError(`uws-body: bodyTimeout(accumulator, ms, onTimeout) needs a BodyAccumulator, got ${describe(accumulator)}`)
  }
  if (typeof onTimeout !== 'function') throw new TypeError('uws-body: bodyTimeout: onTimeout must be a function')
  const timeout = parseTimeout(ms, 0)
  return startTimer(timeout, () => {
    const received = accumulator.received
    accumulator.abort()
    onTimeout(errors.timedOut(timeout, received))
  })
}

module.exports = { startTimer, deadlineOf, passed, bodyTimeout, sweep, pendingDeadlines: () => pending.size }
