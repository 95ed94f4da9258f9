'use strict'
// The multipart engine behind readMultipart (bare uWS) and multipart() (multer's API):
// one request's form, from its bytes to its fields and stored files, or to one error
// with everything it stored removed. The engine reads the body (the parser, the part
// being read, the fields) and coordinates one object per lifecycle, each holding only
// its own state: the request's facts, frozen (./request-plan.js RequestPlan), the form's
// files (./form-files.js FormFiles; each file's states in ./file.js) and the form's
// ending (./form-ending.js FormEnding; the states in ./lifecycle.js). The adapters
// (lib/api/multipart.js, lib/frameworks/multer.js) wire the source of the bytes and
// shape the result.
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
const { MultipartUpload, SKIP, FIELD } = require('./upload')
const { unescapeName, decodeField, nestingOf, exceedsArrayIndex } = require('./names')
const { READING, ENDED, REFUSED, BODY_READ, FAILED } = require('./lifecycle')
const { RequestPlan } = require('./request-plan')
const { FormFiles } = require('./form-files')
const { FormEnding } = require('./form-ending')
const { FieldState } = require('./parts')
const errors = require('../native/errors')
const { keepShape } = require('./shapes')

/**
 * options (./options.js, frozen, shared by the requests of one configuration): {
 *   storage (an engine), arena (its files go to the arena), limit (bytes of the body as
 *   sent, and decoded), fieldsMax (total characters of all fields), timeout (ms, 0 none),
 *   decodeParam (./names.js paramDecoder), decodeDefault (fieldDecoder), preservePath,
 *   highWaterMark, maxPreallocated, busboyMessages (a malformed form's errors say what
 *   busboy says: multer's API)
 * }
 * request: {
 *   contentType, contentLength, contentEncoding (the headers, undefined or '' if absent),
 *   digests (lib/body/digest.js requestDigests: the digests declared and asked for, or null),
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
    this.plan = new RequestPlan(options, request) // the request's facts, frozen
    this.adapter = adapter
    this.upload = null // the parser, while it reads
    this.received = 0
    this.fieldChars = 0
    this.parts = 0
    this.current = null // the part being read: a FieldState or a FileState
    this.files = new FormFiles(this, request, options.highWaterMark)
    this.ending = new FormEnding(this)
  }

  /** ./upload.js's consumer: a field without a charset comes as its bytes. */
  get fieldBytes () {
    return this.plan.fieldBytes
  }

  /**
   * Begins reading: refuses up front what can be refused (an error, given to the adapter,
   * which then only has to drain the body), else returns true.
   */
  start (source) {
    const plan = this.plan
    const type = plan.contentType
    if (type === undefined || type === null || type === '') return this.refuse(errors.bodyError('ERR_MULTIPART_CONTENT_TYPE', {}))
    if (plan.lengthInvalid) return this.refuse(errors.bodyError('ERR_BODY_INVALID_LENGTH', {}))
    this.files.valve.open(source)
    const o = plan.options
    const expected = plan.contentLength
    if (expected > o.limit) return this.refuse(errors.tooLarge(o.limit, expected, 0))
    const encoded = plan.contentEncoding !== null
    const preallocate = o.arena && expected > 0 && !encoded ? Math.min(expected, o.maxPreallocated) : 0
    const upload = MultipartUpload.create(String(type), plan.limits, preallocate,
      encoded ? -1 : expected, plan.contentEncoding, o.limit, this, plan.digests)
    if (!(upload instanceof MultipartUpload)) return this.refuse(this.nativeError(upload))
    this.upload = upload
    this.ending.startTimer(o.timeout)
    return true
  }

  refuse (err) {
    this.ending.transition(REFUSED)
    return err
  }

  /** The bytes of the body still to come, or -1 if its length is unknown. */
  remaining () {
    const expected = this.plan.contentLength
    return expected >= 0 ? expected - this.received : -1
  }

  /** One chunk of the body as it arrived (uWS's ArrayBuffer or a stream's Buffer). */
  write (chunk, isLast) {
    if (this.upload === null) return
    this.received += chunk.byteLength
    const limit = this.plan.options.limit
    if (this.received > limit) return this.fail(errors.tooLarge(limit, this.plan.contentLength, this.received))
    this.ending.guarded(() => {
      this.upload.write(chunk)
      if (isLast && this.upload !== null) this.upload.end()
    })
    if (isLast && this.ending.state === READING) {
      // end() settles every well-formed or malformed body; this is only a safety net.
      this.fail(errors.multipartError({ code: 'ERR_MULTIPART_TRUNCATED', reason: 'body' }))
    }
  }

  /** The source went away before the end (a client abort). */
  abort () {
    if (this.ending.state === ENDED) return
    this.fail(errors.aborted(this.plan.contentLength, this.received))
  }

  // ---- MultipartUpload's consumer ----

  part (head) {
    this.current = null
    if (!this.ending.goesOn()) return SKIP
    if (!head.isFile) {
      // A field without a name is refused at its end, as multer does (so a limit its
      // value breaks meanwhile is the error): its value is not kept.
      this.current = new FieldState(head)
      return head.name === null ? SKIP : FIELD
    }
    return this.files.filePart(head)
  }

  field (value) {
    const state = this.current
    this.current = null
    if (!this.ending.goesOn()) return
    const head = state.head
    if (head.name === null) return this.fail(errors.multipartError({ code: 'MISSING_FIELD_NAME' }))
    const { limits, options } = this.plan
    // A name's length as sent: its bytes (the native side gives them one char each).
    if (head.name.length > limits.fieldNameSize) return this.fail(errors.multipartError({ code: 'LIMIT_FIELD_KEY', max: limits.fieldNameSize }))
    const name = unescapeName(options.decodeParam(head.name))
    if (limits.fieldNestingDepth !== Infinity && nestingOf(name) > limits.fieldNestingDepth) return this.fail(errors.multipartError({ code: 'LIMIT_FIELD_NESTING', max: limits.fieldNestingDepth }, name))
    if (limits.fieldArrayIndexLimit !== Infinity && exceedsArrayIndex(name, limits.fieldArrayIndexLimit)) {
      return this.fail(errors.multipartError({ code: 'LIMIT_FIELD_ARRAY_INDEX', max: limits.fieldArrayIndexLimit }, name))
    }
    // A Buffer: a charset the native side leaves to JS, or none and a defCharset given.
    if (typeof value !== 'string') value = head.charset === null ? options.decodeDefault(value) : decodeField(value, head.charset)
    this.fieldChars += value.length
    if (this.fieldChars > options.fieldsMax) {
      return this.fail(errors.tooLarge(options.fieldsMax, this.plan.contentLength, this.received))
    }
    const refused = this.adapter.field(name, value)
    if (refused) this.fail(refused)
  }

  data (buffer) {
    const state = this.current
    if (state !== null && !state.isField) this.files.data(state, buffer)
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
      if (this.plan.options.digest > 0) state.file.digests = this.upload.partDigests()
      this.files.partEnd(state, range)
    }
    const max = this.plan.limits.parts
    if (this.ending.goesOn() && ++this.parts > max) {
      this.fail(errors.multipartError({ code: 'LIMIT_PART_COUNT', max }))
    }
  }

  done (arena) {
    this.ending.transition(BODY_READ)
    this.upload = null
    this.files.bodyRead(arena)
  }

  /** The request's error (`fields`: the native parser's, when it refused the body). */
  fail (fields) {
    const err = fields instanceof Error ? fields : this.nativeError(fields)
    this.ending.transition(FAILED, err)
  }

  /**
   * The native error's fields as an error naming the part it broke in, when known; with
   * busboy's message for multipart() (busboyMessages), as multer gives it.
   */
  nativeError (fields) {
    const err = this.formError(fields)
    return this.plan.options.busboyMessages ? errors.withBusboyMessage(err, this.plan.contentType) : err
  }

  formError (fields) {
    const state = this.current
    if (state === null) return errors.multipartError(fields)
    if (state.isField) {
      const name = state.head.name === null ? undefined : unescapeName(this.plan.options.decodeParam(state.head.name))
      return errors.multipartError(fields, name)
    }
    return errors.multipartError(fields, state.file.fieldname, fields.code === 'LIMIT_FILE_SIZE' ? state.file.originalname : undefined)
  }

  /** The parser stops: none of its calls follows. */
  stopUpload () {
    if (this.upload !== null) {
      this.upload.abort()
      this.upload = null
    }
  }

  /** The form ended (./form-ending.js): lets go of everything; the source may keep calling write() and abort(). */
  letGo () {
    this.stopUpload()
    this.adapter = NO_ADAPTER
    this.current = null
    this.files.letGo()
    if (this.ending.error === null) keepShape('engine', this)
  }
}

const noop = () => {}
const NO_ADAPTER = { field: noop, fileBegin: noop, fileStored: noop, fileDropped: noop, done: noop, fail: noop }

module.exports = { MultipartEngine }
