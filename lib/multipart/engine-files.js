'use strict'
// The multipart engine's (./engine.js) methods for one file's way through a form: its
// filter, its held bytes, its stream and its turn with its storage engine. Where the file
// is lives in its state (./file.js): these move it on, and act on where it is.
const { Buffer } = require('node:buffer')
const { SKIP, ARENA, STREAM, PENDING } = require('./upload')
const { basename, unescapeName } = require('./names')
const { goesOn } = require('./lifecycle')
const life = require('./file')
const { fileStream } = require('./file-stream')
const { FileState, fileEntry } = require('./parts')
const { removeLate } = require('./removal')
const errors = require('../errors')

// Never added to: stands for "no file flowing" until one does.
const NOT_FLOWING = new Set()

const fileMethods = {
  filePart (head) {
    if (head.name === null) {
      this.fail(errors.multipartError({ code: 'MISSING_FIELD_NAME' }))
      return SKIP
    }
    const fieldname = unescapeName(this.options.decodeParam(head.name))
    let filename = head.filename
    // A file without a name (an empty file input: browsers send `filename=""`) is no
    // file, as for multer; it still counted towards `files` and `parts`.
    if (filename === null) return SKIP
    if (!head.filenameUtf8) filename = this.options.decodeParam(filename)
    if (!this.options.preservePath) filename = basename(filename)
    if (filename === '') return SKIP
    const originalname = unescapeName(filename)
    if (head.name.length > this.limits.fieldNameSize) {
      this.fail(errors.multipartError({ code: 'LIMIT_FIELD_KEY', max: this.limits.fieldNameSize }))
      return SKIP
    }
    const state = new FileState(fileEntry(fieldname, originalname, head.encoding, head.mimeType))
    state.token = this.adapter.fileBegin(state.file)
    this.current = state
    this.pending++
    if (this.fileFilter === null) {
      // Every file is taken: decided now, with no callback to make per file.
      life.transition(state, life.ACCEPT)
      return this.accepted(state)
    }
    let sync = true
    this.filter(state.file, this.later((err, include) => {
      if (!life.undecided(state.at)) return
      if (!sync) return this.decided(state, err, include)
      if (!err && include && goesOn(this.state)) life.transition(state, life.ACCEPT)
      else this.dropFile(state, life.REJECT)
      if (err) this.fail(err)
    }))
    sync = false
    if (state.at === life.ASKING) {
      life.transition(state, life.LATER)
      this.flow(state)
      return PENDING
    }
    if (state.at === life.DROPPED) return SKIP
    return this.accepted(state)
  },

  /** Where a file accepted as its part begins goes. */
  accepted (state) {
    if (this.arena) {
      // Complete when the body is (done()): not a write to wait for.
      life.transition(state, life.KEEP)
      this.pending--
      return ARENA
    }
    this.toEngine(state)
    return STREAM
  },

  /** The application's filter; what it throws is its answer. */
  filter (file, cb) {
    const user = this.fileFilter
    try {
      user(file, cb)
    } catch (err) {
      cb(err)
    }
  },

  /** The filter answered after its part began: the held data goes where it says. */
  decided (state, err, include) {
    if (!goesOn(this.state)) {
      this.unhold(state)
      return this.settleOne(state, life.REJECT)
    }
    if (err) {
      this.unhold(state)
      this.dropFile(state, life.REJECT)
      return this.fail(err)
    }
    // Its part still arriving (partEnd() lets the part being read go).
    const reading = this.current === state
    if (!include) {
      this.unhold(state)
      this.dropFile(state, life.REJECT)
      if (reading) this.upload.setSink(SKIP)
      return this.settle()
    }
    if (state.at === life.OVER) {
      this.unhold(state)
      this.dropFile(state, life.REJECT)
      return this.fail(errors.multipartError({ code: 'LIMIT_FILE_SIZE', max: this.limits.fileSize }, state.file.fieldname, state.file.originalname))
    }
    this.valve.release(state)
    // From now on the parser holds the file to fileSize (its bytes so far count).
    if (reading) this.upload.setSink(STREAM)
    if (!this.arena) return this.toEngine(state)
    if (life.transition(state, life.KEEP) === life.STORED) this.storeHeld(state)
  },

  data (buffer) {
    const state = this.current
    if (state === null || state.isField) return
    state.size += buffer.length
    if (state.stream !== null) {
      if (!state.stream.push(buffer)) this.valve.hold(state)
      return
    }
    if (state.at === life.HELD && state.size > this.limits.fileSize) {
      // Refused if accepted, dropped if not: nothing of it needs keeping.
      life.transition(state, life.OVER_SIZE)
      state.pieces = []
      state.held = 0
      this.valve.release(state)
      this.upload.setSink(SKIP)
      return
    }
    if (state.at === life.HELD || state.at === life.GATHERING) {
      state.pieces.push(buffer)
      state.held += buffer.length
      // Memory storage keeps the whole file anyway; only an undecided one pauses.
      if (state.at === life.HELD && state.held > this.options.highWaterMark) this.valve.hold(state)
    }
  },

  /** Memory storage after a late answer: the held pieces become the file. */
  storeHeld (state) {
    // The pieces were held while the filter had not answered, when it was not yet known
    // whether the bytes would be kept: joining them is a second copy, paid only on this
    // path (an answer given at once puts the file in the arena, one copy).
    const buffer = state.pieces.length === 1 ? state.pieces[0] : Buffer.concat(state.pieces, state.held)
    state.pieces = []
    state.held = 0
    this.flowing.delete(state)
    this.adapter.fileStored(state.token, { ...state.file, buffer, size: buffer.length })
    this.pending--
    this.settle()
  },

  /** The file's data flows into `file.stream`; its engine reads it when its turn comes. */
  toEngine (state) {
    const stream = fileStream(this.options.highWaterMark, () => this.valve.release(state))
    state.stream = stream
    this.flow(state)
    Object.defineProperty(state.file, 'stream', { configurable: true, enumerable: false, value: stream })
    for (const piece of state.pieces) if (!stream.push(piece)) this.valve.hold(state)
    state.pieces = []
    state.held = 0
    if (state.at === life.HELD_WHOLE) stream.push(null)
    if (this.turns.free()) return this.store(state)
    life.transition(state, life.QUEUE)
    this.turns.wait(state)
  },

  /** Hands the file to its engine. */
  store (state) {
    this.turns.began()
    if (life.transition(state, life.BEGIN) === life.FINISHING) this.turns.finishing(state)
    let called = false
    const onStored = this.later((err, info) => {
      if (called) return
      called = true
      // A file the failure cut off keeps its { fieldname } placeholder, as multer leaves
      // it when next(err) runs, but past fileSize multer drops it.
      const cut = state.at === life.CUT_OFF
      this.turns.ended(state, state.at === life.FINISHING)
      life.transition(state, life.CALLED_BACK)
      this.flowing.delete(state)
      this.valve.release(state)
      const file = state.file
      // (Zero already when the grace after a failure ran out.)
      if (this.pending > 0) this.pending--
      if (err) {
        if (!cut || this.error.code === 'LIMIT_FILE_SIZE') this.adapter.fileDropped(state.token)
        // What a failing engine began to write is on disk in part (multer's rule: a
        // file with a path is removed).
        if (file.path && this.removalBegan()) removeLate(storage, req, file)
        else if (file.path) this.touched.push(file)
        if (goesOn(this.state)) this.fail(err)
        else this.settle()
      } else {
        const stored = { ...file, ...info }
        if (stored.size === undefined) stored.size = state.size
        if (this.removalBegan()) {
          // Stored after the failure's removals began (past the grace, say): removed now.
          return removeLate(storage, req, stored)
        }
        this.touched.push(stored)
        // A file the failure cut off is removed and never described.
        if (!cut) this.adapter.fileStored(state.token, stored)
        else if (this.error.code === 'LIMIT_FILE_SIZE') this.adapter.fileDropped(state.token)
        this.settle()
      }
      this.nextTurn()
    })
    const { storage, req } = this
    this.guarded(() => {
      try {
        storage._handleFile(req, state.file, onStored)
      } catch (err) {
        onStored(err)
      }
    })
  },

  nextTurn () {
    if (!goesOn(this.state)) return
    for (let state; (state = this.turns.next()) !== null;) this.store(state)
  },

  /** `state`'s data flows (into its stream, or held): it is tracked until it stops. */
  flow (state) {
    // Made on first use: a form whose files all go to the arena at once never needs it.
    if (this.flowing === NOT_FLOWING) this.flowing = new Set()
    this.flowing.add(state)
  },

  /** `state` is let go by `event` (./file.js), and counted down. */
  dropFile (state, event) {
    life.transition(state, event)
    this.adapter.fileDropped(state.token)
    this.pending--
  },

  unhold (state) {
    state.pieces = []
    state.held = 0
    this.flowing.delete(state)
    this.valve.release(state)
  },

  settleOne (state, event) {
    this.dropFile(state, event)
    this.settle()
  },

  /** Every holder lets go: the source reads on. */
  releaseAll () {
    for (const state of this.flowing) state.holding = false
    this.turns.letGoHolds()
    this.valve.resume()
  }
}

module.exports = { fileMethods, NOT_FLOWING }
