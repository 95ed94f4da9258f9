'use strict'
// multipart(options): multer's middleware (single, array, fields, none, any), its options,
// req.body / req.file / req.files and its errors, over the native multipart parser
// (./upload.js), reading straight from uWS under ultimate-express.
//
// Where each file's bytes go, chosen per part:
// - memory storage (the default) and a fileFilter that answers before it returns: ARENA,
//   copied once into the request's one shared native block; file.buffer is a view of it;
// - any storage engine (disk storage, multer's own engines, custom ones): STREAM, a
//   Readable `file.stream` fed the parser's Buffers (each byte copied once, from uWS),
//   with backpressure: when the stream holds more than its high-water mark the source is
//   paused (uWS's res.pause(), or the request stream's), and resumed when it is read;
// - a fileFilter that answers later: PENDING, the Buffers held until it answers (the
//   source paused past the high-water mark), then handed on as above. As in multer, such
//   a file is held to fileSize only if the filter accepts it: past fileSize its bytes are
//   dropped, and an acceptance then is LIMIT_FILE_SIZE.
// Everything reaches next() exactly once, in the async context the middleware ran in.
const { Buffer } = require('node:buffer')
const typeis = require('type-is')
const { MultipartUpload, SKIP, FIELD, ARENA, STREAM, PENDING } = require('./upload')
const { MemoryStorage, DiskStorage, memoryStorage, diskStorage } = require('./storage')
const { appendField } = require('./append-field')
const errors = require('../errors')
const { basename, unescapeName, decodeField } = require('./names')
const { sourceOf, isUltimate, readChunks, bodyGone, BODY_GONE } = require('../parsers/source')
const { bindOnce } = require('../async-context')
const { Readable } = require('node:stream')

const MESSAGES = {
  LIMIT_PART_COUNT: 'Too many parts',
  LIMIT_FILE_SIZE: 'File too large',
  LIMIT_FILE_COUNT: 'Too many files',
  LIMIT_FIELD_KEY: 'Field name too long',
  LIMIT_FIELD_VALUE: 'Field value too long',
  LIMIT_FIELD_COUNT: 'Too many fields',
  LIMIT_UNEXPECTED_FILE: 'Unexpected file field',
  MISSING_FIELD_NAME: 'Field name missing',
  LIMIT_FIELD_NESTING: 'Field name nesting too deep',
  LIMIT_FIELD_ARRAY_INDEX: 'Field name array index too large',
  STREAM_DESTROYED: 'File stream was destroyed',
  INVALID_FIELD_NAME: 'Invalid field name'
}

// Codes that describe what the client sent that is not too much but wrong: 400.
const BAD_REQUEST = new Set(['LIMIT_UNEXPECTED_FILE', 'MISSING_FIELD_NAME', 'INVALID_FIELD_NAME', 'LIMIT_FIELD_NESTING', 'LIMIT_FIELD_ARRAY_INDEX'])

/** multer's MulterError (code, field, filename, message), plus an HTTP status. */
class MulterError extends Error {
  constructor (code, field, filename) {
    super(MESSAGES[code] || `Unknown error: ${code}`)
    this.name = 'MulterError'
    this.code = code
    if (field) this.field = field
    if (filename) this.filename = filename
    // multer sets no status (Express answers 500); a client's mistake is a 4xx.
    const status = code === 'STREAM_DESTROYED' ? 500 : BAD_REQUEST.has(code) ? 400 : 413
    this.status = this.statusCode = status
  }
}

// busboy's default for limits.fieldSize (multer keeps it).
const DEFAULT_FIELD_SIZE = 1024 * 1024
const DEFAULT_HEADER_PAIRS = 2000
const HEADER_SIZE = 16 * 1024
// How much of a file's data may wait (for a fileFilter's answer, or in file.stream)
// before the source is paused.
const HIGH_WATER_MARK = 1024 * 1024
// The arena's first allocation: the declared length up to this. Above it the arena grows
// as data arrives, so a client that declares a huge body and sends none pins this much.
const DEFAULT_MAX_PREALLOCATED = 16 * 1024 * 1024

function validateLimits (limits) {
  for (const key of Object.keys(limits)) {
    const value = limits[key]
    if (value == null) continue
    if ((Number.isInteger(value) && value >= 0) || value === Infinity) continue
    throw new TypeError('Expected limits.' + key + ' to be a non-negative integer or Infinity')
  }
}

const has = (o, key) => o != null && Object.prototype.hasOwnProperty.call(o, key)
const number = (limits, key, fallback) => limits && typeof limits[key] === 'number' ? limits[key] : fallback

/** Re-reads a name the native side gave as latin1 (one char per byte) in `charset`. */
function paramDecoder (charset) {
  const c = String(charset).toLowerCase()
  if (c === 'latin1' || c === 'iso-8859-1' || c === 'binary' || c === 'ascii') return (s) => s
  if (c === 'utf8' || c === 'utf-8') return (s) => Buffer.from(s, 'latin1').toString('utf8')
  const decoder = new TextDecoder(c)
  return (s) => decoder.decode(Buffer.from(s, 'latin1'))
}

function exceedsArrayIndex (name, limit) {
  if (!/^[^[]+(?:\[[^\]]+\])*(?:\[\])?$/.test(name)) return false
  const pattern = /\[(\d+)\]/g
  let m
  while ((m = pattern.exec(name)) !== null) if (Number(m[1]) > limit) return true
  return false
}

// req.files' shape: multer's file strategies.
const NONE = 0
const VALUE = 1
const LIST = 2
const BY_NAME = 3

class Multipart {
  constructor (options) {
    if (options === undefined) options = {}
    if (options === null || typeof options !== 'object') throw new TypeError('Expected object for argument options')
    if (options.storage) this.storage = options.storage
    else if (options.dest) this.storage = diskStorage({ destination: options.dest })
    else this.storage = memoryStorage()
    if (options.limits && typeof options.limits !== 'function') validateLimits(options.limits)
    this.limits = options.limits
    this.preservePath = Boolean(options.preservePath)
    this.decodeParam = paramDecoder(options.defParamCharset || 'latin1')
    this.fileFilter = options.fileFilter || null
    const max = options.maxPreallocated === undefined ? DEFAULT_MAX_PREALLOCATED : options.maxPreallocated
    if (typeof max !== 'number' || !(max >= 0)) throw new TypeError('uws-body: maxPreallocated must be a non-negative number')
    this.maxPreallocated = max
  }

  single (name) { return this.middleware([{ name, maxCount: 1 }], VALUE) }
  array (name, maxCount) { return this.middleware([{ name, maxCount }], LIST) }
  fields (fields) { return this.middleware(fields, BY_NAME) }
  none () { return this.middleware([], NONE) }
  any () { return this.middleware(null, LIST) }

  middleware (fields, strategy) {
    const instance = this
    return function multipartMiddleware (req, res, next) {
      handle(instance, fields, strategy, req, res, next)
    }
  }
}

function handle (instance, fields, strategy, req, res, next) {
  const resume = bindOnce(next)
  if (!typeis(req, ['multipart'])) return resume()
  let limits = instance.limits
  if (typeof limits === 'function') {
    try {
      limits = limits(req)
      if (limits) validateLimits(limits)
    } catch (err) {
      return resume(err)
    }
  }
  let source
  try {
    source = sourceOf(req)
  } catch (err) {
    return resume(err)
  }
  const ultimate = isUltimate(source)
  if (source === BODY_GONE) {
    req.bodyRead = true
    return resume(bodyGone(req.method))
  }
  new Request(instance, fields, strategy, limits, source, ultimate, req, res, resume).start()
}

class Request {
  constructor (instance, fields, strategy, limits, source, ultimate, req, res, next) {
    this.storage = instance.storage
    this.memory = this.storage instanceof MemoryStorage
    this.instance = instance
    this.strategy = strategy
    this.limits = limits
    this.source = source
    this.ultimate = ultimate
    this.req = req
    this.res = res
    this.next = next
    // Files each field may still take (null: any field, any number: .any()).
    this.filesLeft = null
    if (fields !== null) {
      this.filesLeft = Object.create(null)
      for (const f of fields) this.filesLeft[f.name] = typeof f.maxCount === 'number' ? f.maxCount : Infinity
    }
    this.upload = null
    this.controls = null
    this.current = null // the part being read: { field } or a file's state
    this.parts = 0
    this.partsMax = number(limits, 'parts', Infinity)
    this.fileSizeMax = number(limits, 'fileSize', Infinity)
    this.readFinished = false
    this.pending = 0 // files not yet decided or stored
    this.stored = [] // files stored by the engine (removed on failure)
    this.arenaFiles = []
    this.active = new Set() // files whose data still flows (their stream, their pieces)
    this.holds = 0 // reasons the source is paused
    this.failed = null
    this.cleaning = false
    this.finished = false
  }

  start () {
    const { req, limits } = this
    req.body = Object.create(null)
    if (this.strategy === LIST) req.files = []
    else if (this.strategy === BY_NAME) req.files = Object.create(null)
    const declared = req.headers['content-length']
    const expected = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : -1
    const preallocate = this.memory && expected > 0 ? Math.min(expected, this.instance.maxPreallocated) : 0
    const native = [
      Infinity, // fieldNameSize: checked here, when multer checks it (see field())
      number(limits, 'fieldSize', DEFAULT_FIELD_SIZE),
      number(limits, 'fields', Infinity),
      number(limits, 'fileSize', Infinity),
      number(limits, 'files', Infinity),
      Infinity, // parts: counted here, at each part's end, as busboy counts them
      number(limits, 'headerPairs', DEFAULT_HEADER_PAIRS),
      HEADER_SIZE
    ]
    const consumer = {
      part: (head) => this.part(head),
      field: (value) => this.field(value),
      data: (buffer) => this.data(buffer),
      partEnd: (range) => this.partEnd(range),
      done: (arena) => this.done(arena),
      fail: (fields) => this.fail(this.nativeError(fields))
    }
    const upload = MultipartUpload.create(req.headers['content-type'], native, preallocate, expected, consumer)
    if (!(upload instanceof MultipartUpload)) {
      // No usable boundary: nothing is read; the body is dropped as it arrives.
      this.controls = readChunks(this.source, req, this.res, { chunk () {}, abort () {} })
      return this.finish(errors.multipartError(upload))
    }
    this.upload = upload
    this.controls = readChunks(this.source, req, this.res, {
      chunk: (chunk, isLast) => this.chunk(chunk, isLast),
      abort: () => this.abort()
    })
  }

  chunk (chunk, isLast) {
    if (this.upload === null) return
    try {
      this.upload.write(chunk)
      if (isLast) this.upload.end()
    } catch (err) {
      // A consumer callback (fileFilter, a storage engine) threw.
      this.fail(err)
    }
    if (isLast && !this.readFinished && this.failed === null) {
      // Not reached for a well-formed body: end() settles it. Defensive only.
      this.fail(errors.multipartError({ code: 'ERR_MULTIPART_TRUNCATED', reason: 'body' }))
    }
  }

  abort () {
    if (this.finished) return
    this.fail(errors.aborted(-1, 0))
  }

  // ---- the upload's consumer (./upload.js) ----

  part (head) {
    this.current = null
    if (this.failed !== null) return SKIP
    if (!head.isFile) {
      // A field without a name is refused at its end, as multer does (so a limit its
      // value breaks meanwhile is not the error): its value is not kept.
      this.current = { field: true, head }
      return head.name === null ? SKIP : FIELD
    }
    return this.filePart(head)
  }

  field (value) {
    const head = this.current.head
    this.current = null
    if (this.failed !== null) return
    if (head.name === null) return this.fail(new MulterError('MISSING_FIELD_NAME'))
    const raw = this.instance.decodeParam(head.name)
    const name = unescapeName(raw)
    const limits = this.limits
    if (has(limits, 'fieldNameSize') && raw.length > limits.fieldNameSize) return this.fail(new MulterError('LIMIT_FIELD_KEY'))
    if (has(limits, 'fieldNestingDepth') && name.split('[').length - 1 > limits.fieldNestingDepth) {
      return this.fail(new MulterError('LIMIT_FIELD_NESTING', name))
    }
    if (has(limits, 'fieldArrayIndexLimit') && exceedsArrayIndex(name, limits.fieldArrayIndexLimit)) {
      return this.fail(new MulterError('LIMIT_FIELD_ARRAY_INDEX', name))
    }
    if (typeof value !== 'string') value = decodeField(value, head.charset)
    try {
      appendField(this.req.body, name, value)
    } catch {
      this.fail(new MulterError('INVALID_FIELD_NAME', name))
    }
  }

  filePart (head) {
    if (head.name === null) {
      this.fail(new MulterError('MISSING_FIELD_NAME'))
      return SKIP
    }
    const raw = this.instance.decodeParam(head.name)
    const fieldname = unescapeName(raw)
    let filename = head.filename
    if (filename === null) return SKIP
    if (!head.filenameUtf8) filename = this.instance.decodeParam(filename)
    if (!this.instance.preservePath) filename = basename(filename)
    // A file without a name (an empty file input) is no file, as for multer.
    if (filename === '') return SKIP
    const originalname = unescapeName(filename)
    const limits = this.limits
    if (has(limits, 'fieldNameSize') && raw.length > limits.fieldNameSize) {
      this.fail(new MulterError('LIMIT_FIELD_KEY'))
      return SKIP
    }
    const file = { fieldname, originalname, encoding: head.encoding, mimetype: head.mimeType }
    const state = {
      file,
      placeholder: this.insertPlaceholder(file),
      decided: false, // the fileFilter answered
      accepted: false,
      ended: false, // the part's data is complete
      pieces: [], // data held until the answer (or, memory storage, until the end)
      held: 0,
      size: 0, // bytes seen before the answer
      over: false, // more than fileSize of them
      stream: null,
      holding: false,
      range: null
    }
    this.current = state
    this.pending++
    let sync = true
    this.filter(file, (err, include) => {
      if (state.decided) return
      state.decided = true
      if (sync) {
        state.accepted = !err && Boolean(include) && this.failed === null
        if (!state.accepted) this.skipFile(state)
        if (err) this.fail(err)
        return
      }
      this.decided(state, err, include)
    })
    sync = false
    if (!state.decided) {
      this.active.add(state)
      return PENDING
    }
    if (!state.accepted) return SKIP
    if (this.memory) {
      // Complete when the body is (done()): not a write to wait for.
      this.pending--
      return ARENA
    }
    this.startEngine(state)
    return STREAM
  }

  /** multer's wrapped fileFilter: the field's count first, then the application's. */
  filter (file, cb) {
    const left = this.filesLeft
    if (left !== null) {
      if ((left[file.fieldname] || 0) <= 0) return cb(new MulterError('LIMIT_UNEXPECTED_FILE', file.fieldname, file.originalname))
      // The slot is taken before an asynchronous filter answers, and given back if
      // the file is refused, so files read meanwhile cannot pass maxCount.
      left[file.fieldname] -= 1
    }
    const user = this.instance.fileFilter
    if (user === null) return cb(null, true)
    let answered = false
    const once = (err, include) => {
      if (answered) return
      answered = true
      if (left !== null && (err || !include)) left[file.fieldname] += 1
      cb(err, include)
    }
    try {
      user(this.req, file, once)
    } catch (err) {
      once(err)
    }
  }

  /** The fileFilter answered after its part began: its held data goes where it says. */
  decided (state, err, include) {
    if (this.failed !== null || this.finished) {
      this.dropFile(state)
      return this.settleOne()
    }
    if (err) {
      this.dropFile(state)
      this.skipFile(state)
      return this.fail(err)
    }
    const reading = this.current === state && !state.ended
    if (!include) {
      this.skipFile(state)
      this.dropFile(state)
      if (reading) this.upload.setSink(SKIP)
      return this.maybeDone()
    }
    if (state.over) {
      this.dropFile(state)
      this.skipFile(state)
      return this.fail(new MulterError('LIMIT_FILE_SIZE', state.file.fieldname, state.file.originalname))
    }
    state.accepted = true
    this.release(state)
    // From now on the parser holds the file to fileSize (its bytes so far count).
    if (reading) this.upload.setSink(STREAM)
    if (this.memory) {
      if (state.ended) this.storeMemory(state)
      return
    }
    this.startEngine(state)
  }

  data (buffer) {
    const state = this.current
    if (state === null || state.field) return
    if (state.stream !== null) {
      if (!state.stream.push(buffer)) this.hold(state)
      return
    }
    if (!state.decided) {
      if (state.over) return
      state.size += buffer.length
      if (state.size > this.fileSizeMax) {
        // Refused if accepted, dropped if not: nothing of it needs keeping.
        state.over = true
        state.pieces = []
        state.held = 0
        this.release(state)
        this.upload.setSink(SKIP)
        return
      }
    }
    if (!state.decided || (state.accepted && this.memory)) {
      state.pieces.push(buffer)
      state.held += buffer.length
      // Memory storage keeps the whole file anyway; only an undecided one pauses.
      if (!state.decided && state.held > HIGH_WATER_MARK) this.hold(state)
    }
  }

  partEnd (range) {
    const state = this.current
    this.current = null
    if (state !== null && state.field && state.head.name === null) return this.fail(new MulterError('MISSING_FIELD_NAME'))
    if (state !== null && !state.field) {
      state.ended = true
      if (range !== null) {
        state.range = range
        this.arenaFiles.push(state)
      } else if (state.stream !== null) {
        state.stream.push(null)
      } else if (state.decided && state.accepted && this.memory) {
        this.storeMemory(state)
      }
    }
    if (this.failed === null && ++this.parts > this.partsMax) this.fail(new MulterError('LIMIT_PART_COUNT'))
  }

  done (arena) {
    this.readFinished = true
    for (const state of this.arenaFiles) {
      const [start, end] = state.range
      const buffer = arena === null ? Buffer.alloc(0) : arena.subarray(start, end)
      this.replacePlaceholder(state, { ...state.file, buffer, size: end - start })
    }
    this.arenaFiles = []
    // The body may go on (an epilogue): it is read and dropped.
    this.releaseAll()
    this.maybeDone()
  }

  // ---- files ----

  /** Memory storage after an asynchronous answer: the held pieces become the file. */
  storeMemory (state) {
    // The pieces were held while the fileFilter had not answered, when it was not yet
    // known whether the bytes would be kept: joining them is a second copy, paid only
    // on this path (an answer given at once puts the file in the arena, one copy).
    const buffer = state.pieces.length === 1 ? state.pieces[0] : Buffer.concat(state.pieces, state.held)
    state.pieces = []
    state.held = 0
    this.active.delete(state)
    this.replacePlaceholder(state, { ...state.file, buffer, size: buffer.length })
    this.pending--
    this.maybeDone()
  }

  startEngine (state) {
    const file = state.file
    const stream = new Readable({
      highWaterMark: HIGH_WATER_MARK,
      read: () => this.release(state)
    })
    state.stream = stream
    // A stream ended with the request's error before its engine listens for one.
    stream.on('error', () => {})
    this.active.add(state)
    Object.defineProperty(file, 'stream', { configurable: true, enumerable: false, value: stream })
    for (const piece of state.pieces) if (!stream.push(piece)) this.hold(state)
    state.pieces = []
    state.held = 0
    if (state.ended) stream.push(null)
    let called = false
    const onStored = (err, info) => {
      if (called) return
      called = true
      this.active.delete(state)
      this.release(state)
      if (err) {
        this.removePlaceholder(state)
        // A file cut short by the request's failure may be on disk in part (multer's
        // rule: a pending file with a path is removed).
        if (this.failed !== null && file.path) this.stored.push(file)
        this.pending--
        if (this.failed !== null) return this.maybeCleanup()
        return this.fail(err)
      }
      const stored = { ...file, ...info }
      this.stored.push(stored)
      if (this.failed !== null) {
        this.pending--
        return this.maybeCleanup()
      }
      this.replacePlaceholder(state, stored)
      this.pending--
      this.maybeDone()
    }
    try {
      this.storage._handleFile(this.req, file, onStored)
    } catch (err) {
      onStored(err)
    }
  }

  skipFile (state) {
    this.removePlaceholder(state)
    this.pending--
  }

  dropFile (state) {
    state.pieces = []
    state.held = 0
    this.active.delete(state)
    this.release(state)
  }

  settleOne () {
    this.pending--
    this.maybeCleanup()
  }

  // ---- req.files ----

  insertPlaceholder (file) {
    const placeholder = { fieldname: file.fieldname }
    if (this.strategy === LIST) this.req.files.push(placeholder)
    else if (this.strategy === BY_NAME) {
      const files = this.req.files
      if (files[file.fieldname]) files[file.fieldname].push(placeholder)
      else files[file.fieldname] = [placeholder]
    }
    return placeholder
  }

  removePlaceholder (state) {
    const placeholder = state.placeholder
    if (this.strategy === LIST) {
      const i = this.req.files.indexOf(placeholder)
      if (i !== -1) this.req.files.splice(i, 1)
    } else if (this.strategy === BY_NAME) {
      const files = this.req.files[placeholder.fieldname]
      if (!files) return
      const i = files.indexOf(placeholder)
      if (i !== -1) files.splice(i, 1)
      if (files.length === 0) delete this.req.files[placeholder.fieldname]
    }
  }

  replacePlaceholder (state, file) {
    if (this.strategy === VALUE) {
      this.req.file = file
      return
    }
    const placeholder = state.placeholder
    delete placeholder.fieldname
    Object.assign(placeholder, file)
  }

  // ---- backpressure ----

  hold (state) {
    if (state.holding || this.finished) return
    state.holding = true
    if (this.holds++ === 0) this.controls.pause()
  }

  release (state) {
    if (!state.holding) return
    state.holding = false
    if (--this.holds === 0) this.controls.resume()
  }

  releaseAll () {
    for (const state of this.active) this.release(state)
    if (this.holds !== 0) {
      this.holds = 0
      this.controls.resume()
    }
  }

  // ---- the end ----

  maybeDone () {
    if (this.failed !== null) return this.maybeCleanup()
    if (this.readFinished && this.pending === 0) this.finish(null)
  }

  /**
   * The first error wins. The parser stops (its memory freed), files still flowing end
   * with the error, and once every file the engine was writing has called back, what it
   * stored is removed and next(err) runs.
   */
  fail (err) {
    if (this.failed !== null || this.finished) return
    this.failed = err
    if (this.upload !== null) this.upload.abort()
    this.arenaFiles = []
    for (const state of [...this.active]) {
      if (state.stream !== null) {
        // The engine's write fails and it calls back (then its file is removed).
        state.stream.destroy(err)
      } else {
        this.dropFile(state)
        if (!state.decided) continue // counted down when the filter answers
        this.pending--
      }
    }
    this.releaseAll()
    this.maybeCleanup()
  }

  maybeCleanup () {
    if (this.failed === null || this.finished || this.cleaning || this.pending > 0) return
    this.cleaning = true
    const err = this.failed
    const files = this.stored
    this.stored = []
    const storageErrors = []
    const removeNext = (i) => {
      if (i === files.length) {
        err.storageErrors = storageErrors
        return this.finish(err)
      }
      const file = files[i]
      let called = false
      const after = (removeErr) => {
        if (called) return
        called = true
        if (removeErr) {
          removeErr.file = file
          removeErr.field = file.fieldname
          storageErrors.push(removeErr)
        }
        setImmediate(removeNext, i + 1)
      }
      try {
        this.storage._removeFile(this.req, file, after)
      } catch (removeErr) {
        after(removeErr)
      }
    }
    removeNext(0)
  }

  finish (err) {
    if (this.finished) return
    this.finished = true
    if (this.holds !== 0) {
      this.holds = 0
      this.controls.resume()
    }
    if (err) {
      if (this.upload !== null) this.upload.abort()
      if (this.ultimate && this.res.statusCode === 200 && typeof err.status === 'number') this.res.statusCode = err.status
      if (!this.ultimate) {
        // As multer: the rest of the body is read (and dropped) before next(err), so
        // the client is not cut off mid-send (EPIPE) by an early answer.
        const req = this.req
        req.resume()
        if (req.readable && !req.destroyed && !req.readableEnded) {
          let called = false
          const once = () => { if (!called) { called = true; this.next(err) } }
          req.once('end', once)
          req.once('error', once)
          req.once('close', once)
          return
        }
      }
      return this.next(err)
    }
    if (!this.ultimate) this.req.resume()
    this.next()
  }
}

/** The native parser's refusal as multer's error (limits) or a BodyError (the rest). */
Request.prototype.nativeError = function nativeError (fields) {
  const code = fields.code
  const current = this.current
  if (code === 'LIMIT_FILE_SIZE') {
    const file = current && !current.field ? current.file : null
    return new MulterError(code, file ? file.fieldname : undefined, file ? file.originalname : undefined)
  }
  if (code === 'LIMIT_FIELD_VALUE') {
    const head = current && current.field ? current.head : null
    const name = head && head.name !== null ? unescapeName(this.instance.decodeParam(head.name)) : undefined
    return new MulterError(code, name)
  }
  if (code === 'LIMIT_PART_COUNT' || code === 'LIMIT_FILE_COUNT' || code === 'LIMIT_FIELD_COUNT' || code === 'LIMIT_FIELD_KEY') {
    return new MulterError(code)
  }
  if (code === 'ERR_BODY_OUT_OF_MEMORY') return errors.bodyError(code, {})
  return errors.multipartError(fields)
}

function multipart (options) {
  return new Multipart(options)
}

multipart.diskStorage = diskStorage
multipart.memoryStorage = memoryStorage
multipart.MulterError = MulterError

module.exports = { multipart, MulterError, Multipart, MemoryStorage, DiskStorage }
