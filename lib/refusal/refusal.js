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
// refuses a body through its intake (lib/body/intake.js), which hands the rest to one Refusal
// (refuseRest() below), which does this:
//
//   1. The body's memory goes at once. The rest is read and dropped (counted, never kept)
//      until the body ends, for at most `linger.bytes` more bytes and `linger.timeout` ms,
//      and while no pause in it lasts `linger.idle` ms (LINGER_BYTES, LINGER_TIMEOUT,
//      LINGER_IDLE in lib/plan/linger.js). A declared rest over the byte bound is past it
//      at once: nothing is read for nothing; so is a body whose deadline passed (its
//      client is the slow one the deadline is for).
//   2. The error reaches the application (the promise rejects, the stream errors,
//      next(err) runs) only then: when the body ended, or the bound passed, or the client
//      went away. With `linger: { errorAtOnce: true }` it reaches it at once instead.
//   3. Whatever answer the application writes on a uWS response before the body ended is
//      held (lib/refusal/held-answer.js) and written when it has: a keep-alive connection stays
//      in step, a `Connection: close` one is closed with nothing unread (FIN, not RST).
//   4. Past the bound: reading stops, the answer goes out as a closing answer
//      (`Connection: close`), and the connection is closed GRACE_MS later (a client that
//      reads while it sends, as node:http, fetch, curl and browsers do, has it by then).
//      On node:http (Express) the framework writes it: the middleware sets
//      `Connection: close`, and Node's close after it is made a FIN only (holdClose).
const { HeldAnswer } = require('./held-answer')
const { Drain, ENDED, BOUND, ABORTED } = require('./drain')
const { use, transportOf } = require('./transports')

// After a closing answer, how long the client has to read it before the connection
// closes: several round trips on any link, for ~200 bytes.
const GRACE_MS = 2000

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
    // The client went away: nothing of its answer is kept (at the end, release() restores).
    if (this.held !== null && this.drain.outcome === ABORTED) this.held.drop()
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
 * The Refusal of a body that has not ended; readers reach it through their intake
 * (lib/body/intake.js), which feeds it what still arrives.
 *   res        bare uWS's HttpResponse (controls null), or the framework's response
 *              (its setHeader is used past the bound, node:http)
 *   controls   null on bare uWS, else the middleware's source (lib/frameworks/source.js
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

/** The Refusal holding the answer of `res`, or undefined. */
const refusalOf = (res) => guarded.get(res)

module.exports = { GRACE_MS, refuseRest, refusalOf }
