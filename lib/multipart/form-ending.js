'use strict'
// How a form ends: its lifecycle (./lifecycle.js) and what entering each state does
// (failing: the files are cut and storage engines waited for; removing what was stored;
// ended: the adapter told, everything let go), the form's two timers (its timeout, the
// grace for storage engines), and the calls into the application, after which the
// adapter is told. One per form, made with its engine (./engine.js).
const { READING, FAILING, REMOVING, ENDED, REFUSED, GRACE_OVER, REMOVED, next, goesOn } = require('./lifecycle')
const errors = require('../native/errors')
const { startTimer } = require('../body/deadlines')

// After a failure, how long the engine waits for storage engines to call back (each is
// told through its destroyed file.stream) before the error goes out without them: an
// engine that never calls back must not hold the request's answer forever. A file such
// an engine stores later is removed as soon as it says so.
const STORAGE_GRACE = 5000

class FormEnding {
  constructor (engine) {
    this.engine = engine
    this.state = READING // ./lifecycle.js; changed by transition() alone
    this.error = null // FAILING, REMOVING, ENDED: the request's one error
    this.grace = null // FAILING: the wait for storage engines
    this.clearTimer = null // the form's timeout, once it is read
    this.outcome = null // ENDED: what the adapter is told once the application's calls returned
    this.depth = 0 // calls into the application under way (guarded)
  }

  /** The one place the state changes: `event` in this state (./lifecycle.js), then its entry. */
  transition (event, err) {
    const to = next(this.state, event)
    if (to === null) return
    this.state = to
    switch (to) {
      case FAILING: return this.enterFailing(err)
      case REMOVING: return this.enterRemoving()
      case ENDED: return this.enterEnded(event === REFUSED ? null : { adapter: this.engine.adapter, err: this.error })
    }
  }

  /** Whether the form goes on (./lifecycle.js goesOn): parts are taken, files go on. */
  goesOn () {
    return goesOn(this.state)
  }

  /** The form fails if it is not over `timeout` ms from now (0: never). */
  startTimer (timeout) {
    const engine = this.engine
    this.clearTimer = startTimer(timeout, () => engine.fail(errors.timedOut(timeout, engine.received)))
  }

  /**
   * Runs `run`, what it throws failing the request (a consumer callback: fileFilter, a
   * storage engine, or a bad argument). The adapter hears of the end only after it, so
   * an exception thrown by what the adapter calls (Express's next) is not taken for
   * the request's: it surfaces to whoever called in.
   */
  guarded (run) {
    this.depth++
    try {
      run()
    } catch (err) {
      this.engine.fail(err)
    } finally {
      this.depth--
    }
    if (this.depth === 0 && this.outcome !== null) this.deliver()
  }

  /** A storage engine's or filter's callback, called later: guarded as write() is. */
  later (fn) {
    return (...args) => this.guarded(() => fn(...args))
  }

  /**
   * The parser stops, the form's files end with the error (./form-files.js cut); then
   * the wait for those with their engines, bounded by STORAGE_GRACE.
   */
  enterFailing (err) {
    this.error = err
    const engine = this.engine
    engine.stopUpload()
    engine.files.cut(err, engine.current)
    if (this.state === FAILING && engine.files.pending > 0) {
      this.grace = setTimeout(() => {
        this.grace = null
        this.transition(GRACE_OVER)
      }, STORAGE_GRACE)
      this.grace.unref()
    }
    engine.files.settle()
  }

  /** True once a failure's removals began: a file stored from now on is removed at once. */
  removalBegan () {
    return this.state === REMOVING || (this.state === ENDED && this.error !== null)
  }

  /** Each file an engine stored, or began to write, is removed; then the error goes out. */
  enterRemoving () {
    this.endGrace()
    this.engine.files.removeStored((storageErrors) => {
      this.error.storageErrors = storageErrors
      this.transition(REMOVED)
    })
  }

  /** `outcome` (null when refused: start()'s caller tells the adapter) goes out once the application's calls returned. */
  enterEnded (outcome) {
    this.outcome = outcome
    if (this.clearTimer !== null) {
      this.clearTimer()
      this.clearTimer = null
    }
    this.endGrace()
    this.engine.letGo()
    if (outcome !== null && this.depth === 0) this.deliver()
  }

  endGrace () {
    if (this.grace !== null) {
      clearTimeout(this.grace)
      this.grace = null
    }
  }

  deliver () {
    const { adapter, err } = this.outcome
    this.outcome = null
    if (err) adapter.fail(err)
    else adapter.done()
  }
}

module.exports = { FormEnding }
