'use strict'
// The multipart engine behind readMultipart (bare uWS) and multipart() (multer's API):
// one request's form, from its bytes to its fields and stored files, or to one error
// with everything it stored removed. Its states and what moves it between them are in
// ./lifecycle.js, each file's in ./file.js; the adapters (./read.js, ./multer.js) wire
// the source of the bytes and shape the result.
//
// Where each file's bytes go, chosen per part (./upload.js drives the native parser):
// - memory storage whose file filter answers before it returns: ARENA, copied once into
//   the request's one shared native block; file.buffer is a view of it;
// - any other storage engine: STREAM, a Readable `file.stream` fed the parser's Buffers
//   and read by the engine's `_handleFile`, taking turns (./turns.js);
// - a filter that answers later: PENDING, the Buffers held until it answers, then handed
//   on as above. As in multer, such a file is held to fileSize only if the filter accepts
//   it: past fileSize its bytes are dropped, and an acceptance then is LIMIT_FILE_SIZE.
// Backpressure (./valve.js): while a file's stream (or an undecided file's held Buffers)
// holds more than highWaterMark, the source is paused; what it still delivers (uWS hands
// over the socket's whole kernel queue) is kept, and it resumes once every such file is
// back under its mark. Whatever the application's callbacks (fileFilter, a storage
// engine) throw, or pass to their callbacks, is that request's error.
const { Buffer } = require('node:buffer')
const { MultipartUpload, SKIP, FIELD, ARENA, STREAM, PENDING } = require('./upload')
const { nativeLimits } = require('./limits')
const { basename, unescapeName, decodeField, nestingOf, exceedsArrayIndex } = require('./names')
const { READING, FAILING, REMOVING, ENDED, REFUSED, BODY_READ, IDLE, FAILED, GRACE_OVER, REMOVED, next, goesOn } = require('./lifecycle')
const { Valve } = require('./valve')
const { Turns } = require('./turns')
const life = require('./file')
const { fileStream, cutStream } = require('./file-stream')
const { FieldState, FileState, fileEntry, inArena } = require('./parts')
const { removeAll, removeLate } = require('./removal')
const errors = require('../errors')
const { parseContentLength, INVALID } = require('../options')
const { startTimer } = require('../timeout')
const { keepShape } = require('./shapes')

// After a failure, how long the engine waits for storage engines to call back (each is
// told through its destroyed file.stream) before the error goes out without them: an
// engine that never calls back must not hold the request's answer forever. A file such
// an engine stores later is removed as soon as it says so.
const STORAGE_GRACE = 5000

/**
 * options (./options.js, frozen, shared by the requests of one configuration): {
 *   storage (an engine), arena (its files go to the arena), limit (bytes of the body as
 *   sent, and decoded), fieldsMax (total characters of all fields), timeout (ms, 0 none),
 *   decodeParam (./names.js paramDecoder), preservePath, highWaterMark, maxPreallocated
 * }
 * request: {
 *   contentType, contentLength, contentEncoding (the headers, undefined or '' if absent),
 *   limits (./limits.js parseLimits), fileFilter ((file, cb) => void, or null), req (for
 *   the engine)
 * }
 * adapter: {
 *   field(name, value) -> an Error to fail with, or undefined
 *   fileBegin(file) -> a token for the file      fileStored(token, file)    fileDropped(token)
 *   done()    fail(err)        (exactly one of them, once)
 * }
 * source: { pause(), resume() }, given to start().
 */
class MultipartEngine {
  constructor (options, request, adapter) {
    this.options = options
    this.adapter = adapter
    const expected = parseContentLength(request.contentLength)
    const encoding = request.contentEncoding
    this.contentType = request.contentType
    this.contentLength = expected === INVALID ? -1 : expected
    this.lengthInvalid = expected === INVALID
    this.contentEncoding = encoding === undefined || encoding === null || encoding === '' ? null : String(encoding)
    this.fileFilter = request.fileFilter
    this.storage = options.storage
    this.arena = options.arena
    this.limits = request.limits
    this.req = request.req
    this.state = READING // ./lifecycle.js; changed by transition() alone
    this.valve = new Valve()
    this.upload = null
    this.clearTimer = null
    this.received = 0
    this.fieldChars = 0
    this.current = null // the part being read: a FieldState or a FileState
    this.parts = 0
    this.pending = 0 // files not yet stored or dropped
    this.turns = new Turns(this.valve, options.highWaterMark)
    this.touched = [] // files an engine stored or began to write: removed on failure
    this.arenaFiles = []
    this.flowing = NOT_FLOWING // files whose data still flows (their stream, their pieces)
    this.error = null // FAILING, REMOVING, ENDED: the request's one error
    this.grace = null // FAILING: the wait for storage engines
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
      case ENDED: return this.enterEnded(event === REFUSED ? null : { adapter: this.adapter, err: this.error })
    }
  }

  /** No file left with an engine or its filter: that ends what waited for it. */
  settle () {
    if (this.pending <= 0) this.transition(IDLE)
  }

  /**
   * Begins reading: refuses up front what can be refused (an error, given to the adapter,
   * which then only has to drain the body), else returns true.
   */
  start (source) {
    const type = this.contentType
    if (type === undefined || type === null || type === '') return this.refuse(errors.bodyError('ERR_MULTIPART_CONTENT_TYPE', {}))
    if (this.lengthInvalid) return this.refuse(errors.bodyError('ERR_BODY_INVALID_LENGTH', {}))
    this.valve.open(source)
    const o = this.options
    const expected = this.contentLength
    if (expected > o.limit) return this.refuse(errors.tooLarge(o.limit, expected, 0))
    const encoded = this.contentEncoding !== null
    const preallocate = this.arena && expected > 0 && !encoded ? Math.min(expected, o.maxPreallocated) : 0
    const upload = MultipartUpload.create(String(this.contentType), nativeLimits(this.limits), preallocate,
      encoded ? -1 : expected, this.contentEncoding, o.limit, this)
    if (!(upload instanceof MultipartUpload)) return this.refuse(errors.multipartError(upload))
    this.upload = upload
    this.clearTimer = startTimer(o.timeout, () => this.fail(errors.timedOut(o.timeout, this.received)))
    return true
  }

  refuse (err) {
    this.transition(REFUSED)
    return err
  }

  /** The bytes of the body still to come, or -1 if its length is unknown. */
  remaining () {
    return this.contentLength >= 0 ? this.contentLength - this.received : -1
  }

  /** One chunk of the body as it arrived (uWS's ArrayBuffer or a stream's Buffer). */
  write (chunk, isLast) {
    if (this.upload === null) return
    this.received += chunk.byteLength
    if (this.received > this.options.limit) return this.fail(errors.tooLarge(this.options.limit, this.contentLength, this.received))
    this.guarded(() => {
      this.upload.write(chunk)
      if (isLast && this.upload !== null) this.upload.end()
    })
    if (isLast && this.state === READING) {
      // end() settles every well-formed or malformed body; this is only a safety net.
      this.fail(errors.multipartError({ code: 'ERR_MULTIPART_TRUNCATED', reason: 'body' }))
    }
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
      this.fail(err)
    } finally {
      this.depth--
    }
    if (this.depth === 0 && this.outcome !== null) this.deliver()
  }

  /** The source went away before the end (a client abort). */
  abort () {
    if (this.state === ENDED) return
    this.fail(errors.aborted(this.contentLength, this.received))
  }

  // ---- MultipartUpload's consumer ----

  part (head) {
    this.current = null
    if (!goesOn(this.state)) return SKIP
    if (!head.isFile) {
      // A field without a name is refused at its end, as multer does (so a limit its
      // value breaks meanwhile is the error): its value is not kept.
      this.current = new FieldState(head)
      return head.name === null ? SKIP : FIELD
    }
    return this.filePart(head)
  }

  field (value) {
    const state = this.current
    this.current = null
    if (!goesOn(this.state)) return
    const head = state.head
    if (head.name === null) return this.fail(errors.multipartError({ code: 'MISSING_FIELD_NAME' }))
    const limits = this.limits
    // A name's length as sent: its bytes (the native side gives them one char each).
    if (head.name.length > limits.fieldNameSize) return this.fail(errors.multipartError({ code: 'LIMIT_FIELD_KEY', max: limits.fieldNameSize }))
    const name = unescapeName(this.options.decodeParam(head.name))
    if (nestingOf(name) > limits.fieldNestingDepth) return this.fail(errors.multipartError({ code: 'LIMIT_FIELD_NESTING', max: limits.fieldNestingDepth }, name))
    if (limits.fieldArrayIndexLimit !== Infinity && exceedsArrayIndex(name, limits.fieldArrayIndexLimit)) {
      return this.fail(errors.multipartError({ code: 'LIMIT_FIELD_ARRAY_INDEX', max: limits.fieldArrayIndexLimit }, name))
    }
    if (typeof value !== 'string') value = decodeField(value, head.charset)
    this.fieldChars += value.length
    if (this.fieldChars > this.options.fieldsMax) {
      return this.fail(errors.tooLarge(this.options.fieldsMax, this.contentLength, this.received))
    }
    const refused = this.adapter.field(name, value)
    if (refused) this.fail(refused)
  }

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
  }

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

  /** A storage engine's or filter's callback, called later: guarded as write() is. */
  later (fn) {
    return (...args) => this.guarded(() => fn(...args))
  }

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
  }

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
  }

  partEnd (range) {
    const state = this.current
    this.current = null
    if (state !== null && state.isField && state.head.name === null) {
      return this.fail(errors.multipartError({ code: 'MISSING_FIELD_NAME' }))
    }
    if (state !== null && !state.isField) {
      const at = life.transition(state, life.PART_END)
      if (range !== null) {
        state.range = range
        this.arenaFiles.push(state)
      } else if (state.stream !== null) {
        state.stream.push(null)
        // With its engine (which may have called back already): the rest waits to be stored.
        if (at === life.FINISHING || at === life.RETURNED) this.turns.finishing(state)
      } else if (at === life.STORED) {
        this.storeHeld(state)
      }
    }
    if (goesOn(this.state) && ++this.parts > this.limits.parts) {
      this.fail(errors.multipartError({ code: 'LIMIT_PART_COUNT', max: this.limits.parts }))
    }
  }

  done (arena) {
    this.transition(BODY_READ)
    this.upload = null
    const empty = arena === null ? Buffer.alloc(0) : null
    let last = null
    for (const state of this.arenaFiles) {
      const [start, end] = state.range
      // The file object itself, completed (every arena file the same way, so they share
      // one shape): no copy made per file.
      const file = inArena(state.file, end - start, empty === null ? arena.subarray(start, end) : empty)
      this.adapter.fileStored(state.token, file)
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

  /** The request's error (`fields`: the native parser's, when it refused the body). */
  fail (fields) {
    const err = fields instanceof Error ? fields : this.nativeError(fields)
    this.transition(FAILED, err)
  }

  /**
   * Files still flowing end with the error, those that never reached their engine are
   * dropped; then the wait for those with their engines, bounded by STORAGE_GRACE.
   */
  enterFailing (err) {
    this.error = err
    if (this.upload !== null) {
      this.upload.abort()
      this.upload = null
    }
    // Memory files whose data was all there stay described, as multer leaves them (their
    // bytes go with the arena). The one being read keeps its { fieldname } placeholder:
    // multer's memory storage never calls back for a file whose stream errors. Past
    // fileSize multer drops it.
    for (const state of this.arenaFiles) this.adapter.fileStored(state.token, { ...state.file, size: state.range[1] - state.range[0] })
    this.arenaFiles = []
    const current = this.current
    const keepCut = err.code !== 'LIMIT_FILE_SIZE'
    if (current !== null && !current.isField && current.at === life.ARENA) {
      if (!keepCut) this.adapter.fileDropped(current.token)
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
    if (this.state === FAILING && this.pending > 0) {
      this.grace = setTimeout(() => {
        this.grace = null
        this.transition(GRACE_OVER)
      }, STORAGE_GRACE)
      this.grace.unref()
    }
    this.settle()
  }

  /** The native error's fields as an error naming the part it broke in, when known. */
  nativeError (fields) {
    const state = this.current
    if (state === null) return errors.multipartError(fields)
    if (state.isField) {
      const name = state.head.name === null ? undefined : unescapeName(this.options.decodeParam(state.head.name))
      return errors.multipartError(fields, name)
    }
    return errors.multipartError(fields, state.file.fieldname, fields.code === 'LIMIT_FILE_SIZE' ? state.file.originalname : undefined)
  }

  // ---- files ----

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
  }

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
  }

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
  }

  nextTurn () {
    if (!goesOn(this.state)) return
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
    this.adapter.fileDropped(state.token)
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

  /** Every holder lets go: the source reads on. */
  releaseAll () {
    for (const state of this.flowing) state.holding = false
    this.turns.letGoHolds()
    this.valve.resume()
  }

  // ---- the end ----

  /** True once a failure's removals began: a file stored from now on is removed at once. */
  removalBegan () {
    return this.state === REMOVING || (this.state === ENDED && this.error !== null)
  }

  /** Each file an engine stored, or began to write, is removed; then the error goes out. */
  enterRemoving () {
    if (this.grace !== null) {
      clearTimeout(this.grace)
      this.grace = null
    }
    // Nothing is waited for any more: an engine that calls back later is told nothing.
    this.pending = 0
    const files = this.touched
    this.touched = []
    removeAll(this.storage, this.req, files, (storageErrors) => {
      this.error.storageErrors = storageErrors
      this.transition(REMOVED)
    })
  }

  /** `outcome` (null when refused: start()'s caller tells the adapter) goes out once the application's calls returned. */
  enterEnded (outcome) {
    this.outcome = outcome
    this.letGo()
    if (outcome !== null && this.depth === 0) this.deliver()
  }

  deliver () {
    const { adapter, err } = this.outcome
    this.outcome = null
    if (err) adapter.fail(err)
    else adapter.done()
  }

  /** Lets go of everything: the source may keep calling write() and abort(). */
  letGo () {
    if (this.clearTimer !== null) {
      this.clearTimer()
      this.clearTimer = null
    }
    if (this.grace !== null) {
      clearTimeout(this.grace)
      this.grace = null
    }
    if (this.upload !== null) {
      this.upload.abort()
      this.upload = null
    }
    this.valve.shutOff()
    this.adapter = NO_ADAPTER
    this.storage = null
    this.req = null
    this.fileFilter = null
    this.options = LET_GO
    this.current = null
    this.turns.waiting.length = 0
    this.touched.length = 0
    this.arenaFiles.length = 0
    this.flowing = NOT_FLOWING
    this.contentType = null
    if (this.error === null) keepShape('engine', this)
  }
}

const EMPTY_BUFFER = Buffer.alloc(0)
const noop = () => {}
// Never added to: stands for "no file flowing" until one does.
const NOT_FLOWING = new Set()
// The options of an engine that let go: its source may still call write() and abort().
const LET_GO = Object.freeze({ limit: Infinity })
const NO_ADAPTER = { field: noop, fileBegin: noop, fileStored: noop, fileDropped: noop, done: noop, fail: noop }

module.exports = { MultipartEngine }
