'use strict'
// One buffered body's read, for every reader that hands out a whole body (readBody,
// readText, the parsers): the one loop that takes its chunks into a Body
// (lib/body/accumulator.js), checks the deadline as each arrives, refuses the body on the
// first rule it breaks and ends once. It is the body's intake (lib/body/intake.js), so a
// refused body's rest goes to its Refusal with no object in between, and it calls its
// owner's method rather than a callback: the objects and closures a request makes are
// most of what a small body costs beyond its copy (docs/performance.md, row
// 'per-request objects').
const errors = require('../native/errors')
const { Intake } = require('./intake')
const { deadlineOf, passed } = require('./deadlines')
const { remainingOf } = require('./headers')

class BufferedRead extends Intake {
  /**
   * acc: the Body; options: the reader's { timeout, linger }; contentLength: the request's
   * header, for what is left of a refused body; res, controls: Intake's (where a refusal's
   * answer goes); owner.bodyRead(error, acc): called once, with null when every byte is in
   * `acc`, which the owner then finishes, or with the body's error (its memory already
   * gone). An object, not a callback: no closure per request.
   */
  constructor (acc, options, contentLength, res, controls, owner) {
    super(null, null, options.linger, res, controls)
    this.acc = acc
    this.timeout = options.timeout
    this.deadline = deadlineOf(options.timeout)
    this.contentLength = contentLength
    this.owner = owner
    this.settled = false
  }

  /**
   * Refuses a body the Body refused before its first byte (a length, an encoding), or else
   * with `refusal`, the reader's own (null for none).
   */
  start (refusal = null) {
    const error = this.acc.error !== null ? this.acc.error : refusal
    if (error !== null) this.refuseBody(error)
  }

  onChunk (chunk, isLast) {
    if (this.settled) return
    const acc = this.acc
    if (passed(this.deadline)) return this.refuseBody(errors.timedOut(this.timeout, acc.received))
    if (!acc.push(chunk)) return this.refuseBody(acc.error)
    if (isLast) this.settle(null)
  }

  onAbort () {
    if (this.settled) return
    this.acc.abort()
    this.settle(this.acc.error)
  }

  /** The body's memory goes now; bodyRead(error) once its rest is dropped (lib/body/intake.js). */
  refuseBody (error) {
    const remaining = remainingOf(this.contentLength, this.acc.received)
    this.acc.abort()
    this.refuse(remaining, error, () => this.settle(error))
  }

  settle (error) {
    if (this.settled) return
    this.settled = true
    this.owner.bodyRead(error, this.acc)
  }
}

module.exports = { BufferedRead }
