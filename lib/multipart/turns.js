'use strict'
// Files taking turns with their storage engines, and the client waiting with them.

// Files with their storage engine at once: each disk file is an open descriptor, each
// object-store file a connection; a form of 50 000 tiny files must not open them all,
// and a few in flight hide each engine's round trips.
const STORING_MAX = 8
// The most bytes of complete files still with their engines, in highWaterMarks, before
// the client waits: a few small files finish side by side, a large one before the next
// starts, and a slow object store is not handed a whole form to buffer.
const FINISHING_MAX = 8

class Turns {
  constructor (valve, highWaterMark) {
    this.valve = valve
    this.storing = 0 // files with their engine now
    this.waiting = [] // files waiting for a turn with their engine
    this.queue = { holding: false } // holds the source while files wait
    this.finishingMax = FINISHING_MAX * highWaterMark
    this.finishingBytes = 0 // bytes of the files with their engine, complete, not stored
    this.finishers = { holding: false } // holds the source while those are too many
  }

  /** True if a file may go to its engine now; else it waits (wait()). */
  free () {
    return this.storing < STORING_MAX
  }

  /** The file waits its turn, and the client with it: a form of many small files is not queued in memory. */
  wait (state) {
    this.waiting.push(state)
    this.valve.hold(this.queue)
  }

  /** The next file whose turn it is, or null (and then the client reads on). */
  next () {
    if (this.storing < STORING_MAX && this.waiting.length > 0) return this.waiting.shift()
    if (this.waiting.length === 0) this.valve.release(this.queue)
    return null
  }

  /** The files that will never get a turn (a failure): the client reads on. */
  drop () {
    const waiting = this.waiting
    this.waiting = []
    this.valve.release(this.queue)
    return waiting
  }

  began () {
    this.storing++
  }

  /**
   * A file whose data is all with its engine, not stored yet (an object store still
   * sending its last parts, a disk flushing): while such files hold more than
   * FINISHING_MAX highWaterMarks together, the client waits.
   */
  finishing (state) {
    this.finishingBytes += state.size
    if (this.finishingBytes > this.finishingMax) this.valve.hold(this.finishers)
  }

  /** Its engine called back; `finishing`: the file was counted by finishing(). */
  ended (state, finishing) {
    this.storing--
    if (!finishing) return
    this.finishingBytes -= state.size
    if (this.finishingBytes <= this.finishingMax) this.valve.release(this.finishers)
  }

  /** The holders, for a release of all at once. */
  letGoHolds () {
    this.queue.holding = false
    this.finishers.holding = false
  }
}

module.exports = { Turns, STORING_MAX }
