'use strict'
// The rest of a refused body, and the answer that must reach a client still sending it.
//
// A body refused before its end (a limit, a bad encoding, a timeout, a consumer that
// stopped reading) leaves a client that is still sending. An answer written at once is
// lost more often than not (docs/early-answers.md has the measurements): uWS closes a
// `Connection: close` request's socket as soon as the answer is written, with the rest of
// the body unread in the kernel, so the close is a RST and the client's kernel drops the
// answer it had received; and node:http clients stop writing their body once a complete
// answer has arrived, so a keep-alive connection hangs until a timeout. So every reader
// refuses a body through its intake (lib/intake.js), which hands the rest to one Refusal
// (refuseRest() below), which does this:
//
//   1. The body's memory goes at once. The rest is read and dropped (counted, never kept)
//      until the body ends, for at most `linger.bytes` more bytes and `linger.timeout` ms,
//      and while no pause in it lasts `linger.idle` ms (LINGER_BYTES, LINGER_TIMEOUT,
//      LINGER_IDLE). A declared rest over the byte bound is past it
//      at once: nothing is read for nothing; so is a body whose deadline passed (its
//      client is the slow one the deadline is for).
//   2. The error reaches the application (the promise rejects, the stream errors,
//      next(err) runs) only then: when the body ended, or the bound passed, or the client
//      went away. With `linger: { errorAtOnce: true }` it reaches it at once instead.
//   3. Whatever answer the application writes on a uWS response before the body ended is
//      held (lib/held-answer.js) and written when it has: a keep-alive connection stays
//      in step, a `Connection: close` one is closed with nothing unread (FIN, not RST).
//   4. Past the bound: reading stops, the answer goes out as a closing answer
//      (`Connection: close`), and the connection is closed GRACE_MS later (a client that
//      reads while it sends, as node:http, fetch, curl and browsers do, has it by then).
//      On node:http (Express) the framework writes it: the middleware sets
//      `Connection: close`, and Node's close after it is made a FIN only (holdClose).
const { HeldAnswer } = require('./held-answer')
const { performance } = require('node:perf_hooks')
const { MIB, parseLimit, checkNames, describe } = require('./options')

// What the server reads of a refused body before giving up on it: dropping costs uWS less
// than reading a body of that size (docs/performance.md, row 'dropping a rest'), for a
// client that pays for every byte it sends. It covers an upload a few times over any
// usual limit, which then gets its answer cleanly.
const LINGER_BYTES = 64 * MIB
// How long after the refusal the rest may take: upstream uWS's own idle timeout (10 s;
// the 20.57 build tested here has 30 s), so a refused request holds its connection no
// longer than an idle one is kept. A client sending 6.4 MB/s finishes 64 MiB within it.
const LINGER_TIMEOUT = 10000
// How long the rest may pause: a client silent this long after the refusal, or after its
// last byte, is past the bound, and gets its answer as a closing answer at once instead
// of at `timeout`. A sender that has stalled protects nothing by being waited for
// (nginx answers at once); one still sending sends faster than this on any live link
// (docs/performance.md, row 'linger idle').
const LINGER_IDLE = 1000
// After a closing answer, how long the client has to read it before the connection
// closes: several round trips on any link, for ~200 bytes.
const GRACE_MS = 2000
// Past a bound reading is paused, but uWS may deliver more: what it had already read and,
// on 20.57, as much as the socket's kernel queue holds (its uSockets reads again at once
// after a full 512 KiB read, paused or not: loop.c read_more), which a sender as fast as
// the server can keep refilling. Past this much more the connection is closed at once.
const OVERRUN = 64 * MIB
// setTimeout's largest delay.
const MAX_TIMEOUT = 0x7fffffff

/**
 * The `linger` option: undefined/null for the defaults, false for none (nothing more is
 * read: the answer goes out at once with `Connection: close`), or { bytes, timeout,
 * errorAtOnce } (bytes: a number or a string like '64mb'; timeout: ms, 0 to wait for none
 * of it; errorAtOnce: deliver the error before the rest is dropped, default false).
 */
function parseLinger (value) {
  if (value === undefined || value === null) return DEFAULTS
  if (value === false) return NONE
  if (typeof value !== 'object') {
    throw new TypeError(`uws-body: linger must be false or { bytes, timeout, idle, errorAtOnce }, got ${describe(value)}`)
  }
  checkNames(value, ['bytes', 'timeout', 'idle', 'errorAtOnce'], 'linger option')
  // Each read once: a getter could answer differently the second time.
  const { bytes, timeout, idle, errorAtOnce } = value
  return Object.freeze({
    bytes: bytes === undefined || bytes === null ? LINGER_BYTES : parseLimit(bytes),
    timeout: milliseconds(timeout, LINGER_TIMEOUT, 'timeout', ' (a refused body\'s rest cannot be waited for forever)'),
    idle: milliseconds(idle, LINGER_IDLE, 'idle', ''),
    errorAtOnce: parseErrorAtOnce(errorAtOnce)
  })
}

function milliseconds (value, fallback, name, why) {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIMEOUT)) {
    throw new TypeError(`uws-body: linger.${name} must be a number of milliseconds from 0 to ${MAX_TIMEOUT}${why}, got ${typeof value === 'number' ? value : describe(value)}`)
  }
  return value
}

function parseErrorAtOnce (value) {
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean') throw new TypeError(`uws-body: linger.errorAtOnce must be a boolean, got ${describe(value)}`)
  return value
}

const DEFAULTS = Object.freeze({ bytes: LINGER_BYTES, timeout: LINGER_TIMEOUT, idle: LINGER_IDLE, errorAtOnce: false })
const NONE = Object.freeze({ bytes: 0, timeout: 0, idle: 0, errorAtOnce: false })

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

// ---- the refusal ----

/**
 * A body refused before its end: drains its rest, delivers the error when it may (see the
 * top of this file) and, on uWS, holds the application's answer until then.
 *   transport.uws       the uWS HttpResponse whose answer is held, or null (node:http)
 *   transport.pause()   stop reading the body
 *   transport.close()   end the connection now
 *   transport.closing() optional, past the bound before the error is delivered: make the
 *                       framework's answer a closing one (node:http)
 *   deliver()           called once: the error may reach the application
 */
class Refusal {
  constructor (transport, bounds, remaining, deliver, error) {
    if (error != null && error.code === 'ERR_BODY_TIMEOUT') remaining = Infinity
    this.transport = transport
    this.bounds = bounds
    this.deliver = once(deliver)
    this.timer = null
    this.closed = false
    this.held = null
    const res = transport.uws
    if (res !== null) {
      this.held = new HeldAnswer(res, () => this.answered())
      guarded.set(res, this)
    }
    this.drain = new Drain(bounds, remaining, (outcome) => this.outcome(outcome), () => this.close())
    if (bounds.errorAtOnce) this.deliver()
  }

  /** A chunk of the rest; isLast at the end. */
  chunk (chunk, isLast) {
    this.drain.chunk(chunk, isLast)
  }

  /** The client went away. */
  abort () {
    this.drain.abort()
  }

  outcome (outcome) {
    if (outcome === ABORTED) {
      this.unguard()
      this.clearTimer()
      return this.deliver()
    }
    if (outcome === ENDED) {
      // Nothing is unread: the answer goes out as any answer, now or when written.
      if (this.held !== null) {
        this.unguard()
        this.held.release()
        // An application that never answers holds the connection no longer than the bound.
        if (!this.held.complete) this.later(this.bounds.timeout || GRACE_MS)
      }
      return this.deliver()
    }
    // Past the bound.
    this.transport.pause()
    if (this.transport.closing) this.transport.closing()
    if (this.held !== null && this.held.complete) this.answered()
    else this.later(GRACE_MS)
    this.deliver()
  }

  /** Past the bound, the held answer is complete: one closing answer, then the close. */
  answered () {
    if (this.drain.outcome !== BOUND || this.closed) return
    const res = this.transport.uws
    const head = this.held.closingAnswer()
    // The whole answer goes out through writeStatus, so that uWS still sees the response
    // as pending and `res` stays usable for the close() that follows (an end() would
    // forbid it, and `end(body, true)` closes at once, with a RST). The methods stay
    // shadowed: nothing more may be written after it.
    if (!use(res, () => res.cork(() => this.held.writeStatusThrough(head)))) return this.close()
    this.later(GRACE_MS)
  }

  later (ms) {
    this.clearTimer()
    this.timer = setTimeout(() => this.close(), ms)
    this.timer.unref()
  }

  clearTimer () {
    if (this.timer !== null) {
      clearTimeout(this.timer)
      this.timer = null
    }
  }

  close () {
    if (this.closed) return
    this.closed = true
    this.clearTimer()
    this.transport.close()
    this.deliver()
  }

  unguard () {
    const res = this.transport.uws
    if (res !== null && guarded.get(res) === this) guarded.delete(res)
    if (this.held !== null && this.drain.outcome !== BOUND) this.held.restore()
  }
}

// uWS responses whose answer a Refusal holds.
const guarded = new WeakMap()

function once (fn) {
  let called = false
  return () => {
    if (called) return
    called = true
    fn()
  }
}

/**
 * Runs fn on `res`; false if `res` is gone: uWS.js throws on every use of a response
 * that was aborted or answered.
 */
function use (res, fn) {
  if (res.aborted === true) return false
  try {
    fn()
    return true
  } catch {
    return false
  }
}

/** A bare uWS response as a Refusal's transport. */
function uwsTransport (res) {
  return {
    uws: res,
    pause () { use(res, () => res.pause()) },
    close () { use(res, () => res.close()) }
  }
}

/**
 * The Refusal of a body that has not ended; readers reach it through their intake
 * (lib/intake.js), which feeds it what still arrives.
 *   res        bare uWS's HttpResponse (controls null), or the framework's response
 *              (its setHeader is used past the bound, node:http)
 *   controls   null on bare uWS, else the middleware's source (lib/parsers/source.js
 *              readChunks): { pause(), close(), uws?, holdClose? }: stop reading; close
 *              the connection now; the uWS response, under ultimate-express, whose answer
 *              is held; node:http, keep the framework from closing the connection as soon
 *              as its answer is written
 *   remaining  what is still to come of a declared length, else -1
 *   bounds     parseLinger's
 *   error      the reason, or null (a timeout is past the bound at once)
 *   deliver()  called once, when the error may reach the application
 */
function refuseRest (res, controls, remaining, bounds, error, deliver) {
  return new Refusal(transportOf(res, controls), bounds, remaining, deliver, error)
}

function transportOf (res, controls) {
  if (controls === null) return uwsTransport(res)
  // On uWS the Refusal pauses and closes the response itself: the framework's own checks
  // (ultimate-express's res.finished) say it is answered once its answer is held.
  if (controls.uws) return uwsTransport(controls.uws)
  return { uws: null, pause: () => controls.pause(), close: () => controls.close(), closing: () => closingOnNode(res, controls) }
}

// Past the bound on node:http: the client is told the connection ends with this answer,
// and its close is a FIN only; the Refusal's timer closes it GRACE_MS later, so a
// framework that waits for the request to end before answering (Express's finalhandler),
// or an application that never answers, cannot hold it longer.
function closingOnNode (res, controls) {
  if (typeof controls.holdClose === 'function') controls.holdClose()
  if (res !== null && typeof res === 'object' && !res.headersSent && typeof res.setHeader === 'function') {
    try {
      res.setHeader('Connection', 'close')
    } catch {}
  }
}

/** The Refusal holding the answer of `res`, or undefined. */
const refusalOf = (res) => guarded.get(res)

module.exports = {
  LINGER_BYTES,
  LINGER_TIMEOUT,
  LINGER_IDLE,
  GRACE_MS,
  OVERRUN,
  Drain,
  byteLengthOf,
  parseLinger,
  refuseRest,
  refusalOf,
  droppedBytes: () => droppedTotal
}
