'use strict'
// What still arrives of a refused body: counted and dropped, never kept, within the
// `linger` bounds (lib/plan/linger.js); the Refusal (refusal.js) acts on its outcome.
const { performance } = require('node:perf_hooks')
const { MIB } = require('../plan/limits')

// Past a bound reading is paused, but uWS may deliver more: what it had already read and,
// on 20.57, as much as the socket's kernel queue holds (its uSockets reads again at once
// after a full 512 KiB read, paused or not: loop.c read_more), which a sender as fast as
// the server can keep refilling. Past this much more the connection is closed at once.
const OVERRUN = 64 * MIB
// Bytes handed to every drain in this process, also those that arrive after an outcome
// (what the server had read when it stopped): what the tests check the bounds against.
let droppedTotal = 0

// A Drain's outcome.
const ENDED = 'ended'
const BOUND = 'bound'
const ABORTED = 'aborted'

/**
 * Counts what still arrives of a refused body, holding none of it, until the body ends,
 * passes a bound or its client goes: then `onOutcome(outcome)` is called once (never
 * from the constructor: a bound passed at once is reported on the next tick). Past a
 * bound, `onOverrun()` is called once if more than OVERRUN bytes still come.
 */
class Drain {
  constructor (bounds, remaining, onOutcome, onOverrun) {
    this.outcome = null
    this.dropped = 0
    this._after = 0
    this._bytes = bounds.bytes
    this._idle = bounds.idle
    this._onOutcome = onOutcome
    this._onOverrun = onOverrun || null
    this._timer = null
    if (remaining > bounds.bytes || bounds.timeout === 0 || bounds.idle === 0) {
      // The rest is known to pass the bound, or none may be waited for.
      process.nextTick(() => this._finish(BOUND))
    } else {
      // One timer for both time bounds: it fires at the earlier, and is set again while
      // bytes keep coming before the deadline.
      this._lastAt = performance.now()
      this._deadline = this._lastAt + bounds.timeout
      this._arm(this._lastAt)
    }
  }

  _arm (now) {
    this._timer = setTimeout(() => this._tick(), Math.max(1, Math.min(this._deadline, this._lastAt + this._idle) - now))
    this._timer.unref()
  }

  _tick () {
    this._timer = null
    if (this.outcome !== null) return
    const now = performance.now()
    if (now >= this._deadline || now - this._lastAt >= this._idle) return this._finish(BOUND)
    this._arm(now)
  }

  /** A chunk of the rest (any value: only its byteLength is read); isLast at the end. */
  chunk (chunk, isLast) {
    const n = byteLengthOf(chunk)
    droppedTotal += n
    if (this.outcome !== null) {
      if (this.outcome === BOUND && this._onOverrun !== null && (this._after += n) > OVERRUN) {
        const onOverrun = this._onOverrun
        this._onOverrun = null
        onOverrun()
      }
      return
    }
    this.dropped += n
    if (this._timer !== null) this._lastAt = performance.now()
    if (isLast) this._finish(ENDED)
    else if (this.dropped > this._bytes) this._finish(BOUND)
  }

  /** The client went away. */
  abort () {
    this._finish(ABORTED)
  }

  _finish (outcome) {
    if (this.outcome !== null) return
    this.outcome = outcome
    if (this._timer !== null) {
      clearTimeout(this._timer)
      this._timer = null
    }
    const onOutcome = this._onOutcome
    this._onOutcome = null
    onOutcome(outcome)
  }
}

/**
 * A chunk's size in bytes, for any value onData may be given: 0 for what has none (a
 * detached DataView's getter throws; the readers report such chunks themselves).
 */
function byteLengthOf (chunk) {
  if (chunk instanceof ArrayBuffer) return chunk.byteLength
  if (chunk === null || typeof chunk !== 'object') return 0
  try {
    const n = chunk.byteLength
    return typeof n === 'number' ? n : 0
  } catch {
    return 0
  }
}

module.exports = { OVERRUN, ENDED, BOUND, ABORTED, Drain, droppedBytes: () => droppedTotal }
