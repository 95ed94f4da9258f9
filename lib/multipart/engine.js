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
const { MultipartUpload, SKIP, FIELD } = require('./upload')
const { unescapeName, decodeField, nestingOf, exceedsArrayIndex } = require('./names')
const { READING, FAILING, REMOVING, ENDED, REFUSED, BODY_READ, IDLE, FAILED, GRACE_OVER, REMOVED, next, goesOn } = require('./lifecycle')
const { Valve } = require('./valve')
const { Turns } = require('./turns')
const life = require('./file')
const { cutStream } = require('./file-stream')
const { fileMethods, NOT_FLOWING } = require('./engine-files')
const { FieldState, fileEntry, inArena } = require('./parts')
const { removeAll } = require('./removal')
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
 *   digests (lib/digest.js requestDigests: the digests declared and asked for, or null),
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
    this.digests = request.digests
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
    const upload = MultipartUpload.create(String(this.contentType), this.limits, preallocate,
      encoded ? -1 : expected, this.contentEncoding, o.limit, this, this.digests)
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

  /** A storage engine's or filter's callback, called later: guarded as write() is. */
  later (fn) {
    return (...args) => this.guarded(() => fn(...args))
  }

  partEnd (range) {
    const state = this.current
    this.current = null
    if (state !== null && state.isField && state.head.name === null) {
      return this.fail(errors.multipartError({ code: 'MISSING_FIELD_NAME' }))
    }
    if (state !== null && !state.isField) {
      // The file's digests, made as its bytes were parsed (`digest: [...]`), on the file
      // before its storage engine or the program sees it whole.
      if (this.options.digest > 0) state.file.digests = this.upload.partDigests()
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
// The options of an engine that let go: its source may still call write() and abort().
const LET_GO = Object.freeze({ limit: Infinity })
const NO_ADAPTER = { field: noop, fileBegin: noop, fileStored: noop, fileDropped: noop, done: noop, fail: noop }

// A file's way through the form (./engine-files.js).
Object.assign(MultipartEngine.prototype, fileMethods)

module.exports = { MultipartEngine }
