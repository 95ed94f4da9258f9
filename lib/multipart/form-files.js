'use strict'
// A form's files: each one's way through the form (its filter, its held bytes, its
// stream, its turn with its storage engine), the source held back while they hold too
// much, and at a failure, the files cut and what was stored removed. Where a file is
// lives in its state (./file.js): these move it on, and act on where it is. One per form,
// made with its engine (./engine.js), which hands it each file part.
const { Buffer } = require('node:buffer')
const { SKIP, ARENA, STREAM, PENDING } = require('./upload')
const { basename, unescapeName } = require('./names')
const { IDLE } = require('./lifecycle')
const life = require('./file')
const { Valve } = require('./valve')
const { Turns } = require('./turns')
const { fileStream, cutStream } = require('./file-stream')
const { FileState, fileEntry, inArena } = require('./parts')
const { removeAll, removeLate } = require('./removal')
const errors = require('../native/errors')
const { keepShape } = require('./shapes')

// Never added to: stands for "no file flowing" until one does.
const NOT_FLOWING = new Set()
const EMPTY_BUFFER = Buffer.alloc(0)

class FormFiles {
  /** `request`: MultipartEngine's; its fileFilter and req are let go at the end. */
  constructor (engine, request, highWaterMark) {
    this.engine = engine
    this.fileFilter = request.fileFilter
    this.req = request.req // for the storage engine
    this.valve = new Valve()
    this.turns = new Turns(this.valve, highWaterMark)
    this.pending = 0 // files not yet stored or dropped
    this.touched = [] // files an engine stored or began to write: removed on failure
    this.arenaFiles = []
    this.flowing = NOT_FLOWING // files whose data still flows (their stream, their pieces)
  }

  /** A file part begins: where its data goes (./upload.js's sinks). */
  filePart (head) {
    const engine = this.engine
    const { options, limits } = engine.plan
    if (head.name === null) {
      engine.fail(errors.multipartError({ code: 'MISSING_FIELD_NAME' }))
      return SKIP
    }
    const fieldname = unescapeName(options.decodeParam(head.name))
    let filename = head.filename
    // A file without a name (an empty file input: browsers send `filename=""`) is no
    // file, as for multer; it still counted towards `files` and `parts`.
    if (filename === null) return SKIP
    if (!head.filenameUtf8) filename = options.decodeParam(filename)
    if (!options.preservePath) filename = basename(filename)
    if (filename === '') return SKIP
    const originalname = unescapeName(filename)
    if (head.name.length > limits.fieldNameSize) {
      engine.fail(errors.multipartError({ code: 'LIMIT_FIELD_KEY', max: limits.fieldNameSize }))
      return SKIP
    }
    const state = new FileState(fileEntry(fieldname, originalname, head.encoding, head.mimeType))
    state.token = engine.adapter.fileBegin(state.file)
    engine.current = state
    this.pending++
    if (this.fileFilter === null) {
      // Every file is taken: decided now, with no callback to make per file.
      life.transition(state, life.ACCEPT)
      return this.accepted(state)
    }
    let sync = true
    this.filter(state.file, engine.ending.later((err, include) => {
      if (!life.undecided(state.at)) return
      if (!sync) return this.decided(state, err, include)
      if (!err && include && engine.ending.goesOn()) life.transition(state, life.ACCEPT)
      else this.dropFile(state, life.REJECT)
      if (err) engine.fail(err)
    }))
    sync = false
    if (state.at === life.ASKING) {
      life.transition(state, life.LATER)
      this.flow(state)
      return PENDING
    }
    if (state.at === life.DROPPED) return SKIP
    return this.accepted(state)
  }

  /** Where a file accepted as its part begins goes. */
  accepted (state) {
    if (this.engine.plan.options.arena) {
      // Complete when the body is (bodyRead()): not a write to wait for.
      life.transition(state, life.KEEP)
      this.pending--
      return ARENA
    }
    this.toEngine(state)
    return STREAM
  }

  /** The application's filter; what it throws is its answer. */
  filter (file, cb) {
    const user = this.fileFilter
    try {
      user(file, cb)
    } catch (err) {
      cb(err)
    }
  }

  /** The filter answered after its part began: the held data goes where it says. */
  decided (state, err, include) {
    const engine = this.engine
    if (!engine.ending.goesOn()) {
      this.unhold(state)
      return this.settleOne(state, life.REJECT)
    }
    if (err) {
      this.unhold(state)
      this.dropFile(state, life.REJECT)
      return engine.fail(err)
    }
    // Its part still arriving (partEnd() lets the part being read go).
    const reading = engine.current === state
    if (!include) {
      this.unhold(state)
      this.dropFile(state, life.REJECT)
      if (reading) engine.upload.setSink(SKIP)
      return this.settle()
    }
    if (state.at === life.OVER) {
      this.unhold(state)
      this.dropFile(state, life.REJECT)
      return engine.fail(errors.multipartError({ code: 'LIMIT_FILE_SIZE', max: engine.plan.limits.fileSize }, state.file.fieldname, state.file.originalname))
    }
    this.valve.release(state)
    // From now on the parser holds the file to fileSize (its bytes so far count).
    if (reading) engine.upload.setSink(STREAM)
    if (!engine.plan.options.arena) return this.toEngine(state)
    if (life.transition(state, life.KEEP) === life.STORED) this.storeHeld(state)
  }

  /** Bytes of `state`, the file part being read. */
  data (state, buffer) {
    state.size += buffer.length
    if (state.stream !== null) {
      if (!state.stream.push(buffer)) this.valve.hold(state)
      return
    }
    if (state.at === life.HELD && state.size > this.engine.plan.limits.fileSize) {
      // Refused if accepted, dropped if not: nothing of it needs keeping.
      life.transition(state, life.OVER_SIZE)
      state.pieces = []
      state.held = 0
      this.valve.release(state)
      this.engine.upload.setSink(SKIP)
      return
    }
    if (state.at === life.HELD || state.at === life.GATHERING) {
      state.pieces.push(buffer)
      state.held += buffer.length
      // Memory storage keeps the whole file anyway; only an undecided one pauses.
      if (state.at === life.HELD && state.held > this.engine.plan.options.highWaterMark) this.valve.hold(state)
    }
  }

  /** `state`'s part ended; `range`: where its bytes are in the arena, or null. */
  partEnd (state, range) {
    const at = life.transition(state, life.PART_END)
    if (range !== null) {
      state.range = range
      this.arenaFiles.push(state)
    } else if (state.stream !== null) {
      state.stream.push(null)
      // With its engine, not stored yet: the rest waits to be stored. (An engine that
      // called back already has stored the file: nothing of it waits.)
      if (at === life.FINISHING) this.turns.finishing(state)
    } else if (at === life.STORED) {
      this.storeHeld(state)
    }
  }

  /** The body is read: the arena's files are described (`arena`: their bytes, or null). */
  bodyRead (arena) {
    const adapter = this.engine.adapter
    const empty = arena === null ? Buffer.alloc(0) : null
    let last = null
    for (const state of this.arenaFiles) {
      const [start, end] = state.range
      // The file object itself, completed (every arena file the same way, so they share
      // one shape): no copy made per file.
      const file = inArena(state.file, end - start, empty === null ? arena.subarray(start, end) : empty)
      adapter.fileStored(state.token, file)
      last = state
    }
    this.arenaFiles = []
    if (last !== null) {
      // Their hidden classes outlive the form (./shapes.js), not their data: a file made
      // as the form's were, of no names and no bytes, and the state without its file.
      keepShape('file', inArena(fileEntry('', '', '', ''), 0, EMPTY_BUFFER))
      last.file = null
      last.token = null
      keepShape('fileState', last)
    }
    // The body may go on (an epilogue): the source reads and drops it.
    this.releaseAll()
    this.settle()
  }

  /** Memory storage after a late answer: the held pieces become the file. */
  storeHeld (state) {
    // The pieces were held while the filter had not answered, when it was not yet known
    // whether the bytes would be kept: joining them is a second copy, paid only on this
    // path (an answer given at once puts the file in the arena, one copy).
    const buffer = state.pieces.length === 1 ? state.pieces[0] : Buffer.concat(state.pieces, state.held)
    state.pieces = []
    state.held = 0
    this.flowing.delete(state)
    this.engine.adapter.fileStored(state.token, { ...state.file, buffer, size: buffer.length })
    this.pending--
    this.settle()
  }

  /** The file's data flows into `file.stream`; its engine reads it when its turn comes. */
  toEngine (state) {
    const stream = fileStream(this.engine.plan.options.highWaterMark, () => this.valve.release(state))
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
  }

  /** Hands the file to its engine. */
  store (state) {
    const engine = this.engine
    const ending = engine.ending
    this.turns.began()
    if (life.transition(state, life.BEGIN) === life.FINISHING) this.turns.finishing(state)
    let called = false
    const onStored = ending.later((err, info) => {
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
        if (!cut || ending.error.code === 'LIMIT_FILE_SIZE') engine.adapter.fileDropped(state.token)
        // What a failing engine began to write is on disk in part (multer's rule: a
        // file with a path is removed).
        if (file.path && ending.removalBegan()) removeLate(storage, req, file)
        else if (file.path) this.touched.push(file)
        if (ending.goesOn()) engine.fail(err)
        else this.settle()
      } else {
        const stored = { ...file, ...info }
        if (stored.size === undefined) stored.size = state.size
        if (ending.removalBegan()) {
          // Stored after the failure's removals began (past the grace, say): removed now.
          return removeLate(storage, req, stored)
        }
        this.touched.push(stored)
        // A file the failure cut off is removed and never described.
        if (!cut) engine.adapter.fileStored(state.token, stored)
        else if (ending.error.code === 'LIMIT_FILE_SIZE') engine.adapter.fileDropped(state.token)
        this.settle()
      }
      this.nextTurn()
    })
    const { req } = this
    const storage = engine.plan.options.storage
    ending.guarded(() => {
      try {
        storage._handleFile(req, state.file, onStored)
      } catch (err) {
        onStored(err)
      }
    })
  }

  nextTurn () {
    if (!this.engine.ending.goesOn()) return
    for (let state; (state = this.turns.next()) !== null;) this.store(state)
  }

  /** `state`'s data flows (into its stream, or held): it is tracked until it stops. */
  flow (state) {
    // Made on first use: a form whose files all go to the arena at once never needs it.
    if (this.flowing === NOT_FLOWING) this.flowing = new Set()
    this.flowing.add(state)
  }

  /** `state` is let go by `event` (./file.js), and counted down. */
  dropFile (state, event) {
    life.transition(state, event)
    this.engine.adapter.fileDropped(state.token)
    this.pending--
  }

  unhold (state) {
    state.pieces = []
    state.held = 0
    this.flowing.delete(state)
    this.valve.release(state)
  }

  settleOne (state, event) {
    this.dropFile(state, event)
    this.settle()
  }

  /** No file left with an engine or its filter: that ends what waited for it. */
  settle () {
    if (this.pending <= 0) this.engine.ending.transition(IDLE)
  }

  /** Every holder lets go: the source reads on. */
  releaseAll () {
    for (const state of this.flowing) state.holding = false
    this.turns.letGoHolds()
    this.valve.resume()
  }

  /**
   * The form failed with `err` (`current`: the part being read): files still flowing end
   * with it, those that never reached their engine are dropped.
   */
  cut (err, current) {
    // Memory files whose data was all there stay described, as multer leaves them (their
    // bytes go with the arena). The one being read keeps its { fieldname } placeholder:
    // multer's memory storage never calls back for a file whose stream errors. Past
    // fileSize multer drops it.
    for (const state of this.arenaFiles) this.engine.adapter.fileStored(state.token, { ...state.file, size: state.range[1] - state.range[0] })
    this.arenaFiles = []
    const keepCut = err.code !== 'LIMIT_FILE_SIZE'
    if (current !== null && !current.isField && current.at === life.ARENA) {
      if (!keepCut) this.engine.adapter.fileDropped(current.token)
      life.transition(current, keepCut ? life.CUT : life.DROP)
    }
    for (const state of this.turns.drop()) {
      this.unhold(state)
      this.dropFile(state, life.DROP)
    }
    for (const state of [...this.flowing]) {
      // A file still arriving will not be whole: its stream is cut. One whose data is
      // all there is let finish, as multer does, and removed.
      if (state.at === life.STREAMING) {
        life.transition(state, life.CUT)
        cutStream(state.stream, err)
      }
      if (state.stream !== null) continue
      this.unhold(state)
      // An undecided file is counted down when its filter answers.
      if (state.at !== life.GATHERING) continue
      if (keepCut) {
        life.transition(state, life.CUT)
        this.pending--
        this.settle()
      } else {
        this.settleOne(state, life.DROP)
      }
    }
    this.releaseAll()
  }

  /** Each file an engine stored, or began to write, is removed; then `done(storageErrors)`. */
  removeStored (done) {
    // Nothing is waited for any more: an engine that calls back later is told nothing.
    this.pending = 0
    const files = this.touched
    this.touched = []
    removeAll(this.engine.plan.options.storage, this.req, files, done)
  }

  /** The form is over: the source reads on, and nothing of the form is held. */
  letGo () {
    this.valve.shutOff()
    this.req = null
    this.fileFilter = null
    this.turns.waiting.length = 0
    this.touched.length = 0
    this.arenaFiles.length = 0
    this.flowing = NOT_FLOWING
  }
}

module.exports = { FormFiles }
