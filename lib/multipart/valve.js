'use strict'
// The form's source, paused while anything holds it: a file's stream over its mark, files
// waiting for their engine, too many bytes with engines. Each holder is an object with a
// `holding` flag, so holding twice counts once. The source resumes when the last lets go.
class Valve {
  constructor () {
    this.source = null
    this.holds = 0
    this.shut = false
  }

  /** `source`: { pause(), resume() }. */
  open (source) {
    this.source = source
  }

  hold (holder) {
    if (holder.holding || this.shut) return
    holder.holding = true
    if (this.holds++ === 0) this.source.pause()
  }

  release (holder) {
    if (!holder.holding) return
    holder.holding = false
    if (--this.holds === 0 && !this.shut) this.source.resume()
  }

  /** The form is over: the source reads on (and drops) whatever it still delivers. */
  shutOff () {
    this.shut = true
    this.resume()
    // The source's controls may hold the request (and so req.files) alive.
    this.source = null
  }

  resume () {
    if (this.holds !== 0 && this.source !== null) {
      this.holds = 0
      this.source.resume()
    }
  }
}

module.exports = { Valve }
