'use strict'
// A body's way in, and the one place where a reader meets the drain of a refused body
// (lib/refusal/refusal.js). The source's events (uWS's onData and onAborted through attach(), a
// framework's request through lib/frameworks/source.js) reach the reader's handlers until
// the reader refuses the body; from then on they reach the Refusal, which drops the rest
// and delivers the error when it may. No reader routes a chunk to a drain itself.
const { refuseRest } = require('../refusal/refusal')
const { bindOnce } = require('./async-context')

class Intake {
  /**
   * onChunk(chunk, isLast), onAbort(): the reader's, until it refuses the body (null: a
   * subclass's methods of those names). bounds: parseLinger's. res, controls: where the
   * refusal's answer goes (lib/refusal/refusal.js refuseRest: controls null on bare uWS).
   */
  constructor (onChunk, onAbort, bounds, res, controls) {
    if (onChunk !== null) this.onChunk = onChunk
    if (onAbort !== null) this.onAbort = onAbort
    this.bounds = bounds
    this.res = res
    this.controls = controls
    this.refusal = null
    // The last chunk came, or the client went away: there is no rest to drop.
    this.ended = false
  }

  chunk (chunk, isLast) {
    if (this.refusal !== null) return this.refusal.chunk(chunk, isLast)
    if (isLast) this.ended = true
    this.onChunk(chunk, isLast)
  }

  abort () {
    this.ended = true
    if (this.refusal !== null) return this.refusal.abort()
    this.onAbort()
  }

  /**
   * The reader refuses the body (its memory already let go): `remaining` is what is still
   * to come of a declared length (else -1), `error` the reason. deliver() runs once, when
   * the error may reach the application: at once if the body ended or its client went
   * away, else once the rest is dropped. The reader must not pause its source after this
   * (and resumes it if it had).
   */
  refuse (remaining, error, deliver) {
    if (this.ended) return deliver()
    this.refusal = refuseRest(this.res, this.controls, remaining, this.bounds, error, deliver)
  }

  /**
   * The reader took the body and will not refuse it: what still arrives (an epilogue)
   * reaches its handlers, but the intake, which uWS's handlers keep until the body ends,
   * holds the request no more.
   */
  letGo () {
    this.res = null
    this.controls = null
  }
}

/**
 * A bare-uWS reader's intake: it takes res.onData and res.onAborted. On an abort
 * `res.aborted` is set first and `onAborted` (the caller's option, or undefined) runs
 * last, in the async context attach() was called in.
 */
function attach (res, bounds, onAborted, onChunk, onAbort) {
  return attachIntake(res, new Intake(onChunk, onAbort, bounds, res, null), onAborted)
}

/** attach() for an intake made by the reader (lib/body/buffered-read.js). */
function attachIntake (res, intake, onAborted) {
  const aborted = onAborted === undefined ? undefined : bindOnce(onAborted)
  res.onAborted(() => {
    res.aborted = true
    intake.abort()
    if (aborted !== undefined) aborted()
  })
  res.onData((chunk, isLast) => intake.chunk(chunk, isLast))
  return intake
}

module.exports = { Intake, attach, attachIntake }
