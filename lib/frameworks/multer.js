'use strict'
// multipart(options): multer's middleware (single, array, fields, none, any), its options,
// req.body / req.file / req.files and its errors, over the multipart engine
// (./engine.js), reading straight from uWS under ultimate-express and from the request
// stream under Express. Everything reaches next() exactly once, in the async context the
// middleware ran in.
const typeis = require('type-is')
const { MultipartEngine } = require('../multipart/engine')
const { MemoryStorage, DiskStorage, memoryStorage, diskStorage } = require('../multipart/storage')
const { multerOptions, limitsOf } = require('../multipart/options')
const { appendField } = require('../multipart/append-field')
const errors = require('../native/errors')
const { MulterError } = errors
const { sourceOf, isUltimate, readChunks, handlerSink, sinkSource, bodyGone, BODY_GONE } = require('./source')
const { asExpressAnswers } = require('./answers')
const { bindOnce } = require('../body/async-context')
const { requestDigests } = require('../body/digest')

// req.files' shape: multer's file strategies.
const NONE = 0
const VALUE = 1
const LIST = 2
const BY_NAME = 3

class Multipart {
  constructor (options) {
    this.options = multerOptions(options)
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
  const config = instance.options
  let limits
  try {
    limits = limitsOf(config.limits, req)
  } catch (err) {
    return resume(err)
  }
  let source
  try {
    source = sourceOf(req)
  } catch (err) {
    return resume(err)
  }
  const handler = config.streamHandler
  if (source === BODY_GONE && handler === null) {
    req.bodyRead = true
    return resume(bodyGone(req.method))
  }
  const request = new MulterRequest(strategy, isUltimate(source), req, res, resume)
  const filesLeft = fields === null ? null : maxCounts(fields)
  const engine = new MultipartEngine(config, {
    contentType: req.headers['content-type'],
    contentLength: req.headers['content-length'],
    contentEncoding: req.headers['content-encoding'],
    digests: requestDigests(config.digest, req.headers),
    limits,
    fileFilter: filter(config.fileFilter, filesLeft, req),
    req
  }, request)
  request.engine = engine
  const sink = handler === null ? null : handlerSink(req, source)
  request.intake = readChunks(sink === null ? source : sinkSource(source), sink === null ? req : sink, res, config.linger,
    (chunk, isLast) => engine.write(chunk, isLast), () => engine.abort())
  const started = engine.start(request.intake.controls)
  if (started !== true) request.fail(started)
  // Fed even when refused: the refusal reads the rest of what it writes.
  if (sink !== null) {
    try {
      handler(req, sink)
    } catch (err) {
      // The request's error; what the handler would have written never comes.
      engine.fail(err)
      sink.destroy()
    }
  }
}

/** The files each field may still take (multer's maxCount). */
function maxCounts (fields) {
  const left = Object.create(null)
  for (const f of fields) left[f.name] = typeof f.maxCount === 'number' ? f.maxCount : Infinity
  return left
}

/** multer's wrapped fileFilter: the field's count first, then the application's. */
function filter (user, left, req) {
  if (left === null && user === null) return null
  return (file, cb) => {
    if (left !== null) {
      if ((left[file.fieldname] || 0) <= 0) return cb(new MulterError('LIMIT_UNEXPECTED_FILE', file.fieldname, file.originalname))
      // The slot is taken before an asynchronous filter answers, and given back if the
      // file is refused, so files read meanwhile cannot pass maxCount.
      left[file.fieldname] -= 1
    }
    if (user === null) return cb(null, true)
    let answered = false
    user(req, file, (err, include) => {
      if (answered) return
      answered = true
      if (left !== null && (err || !include)) left[file.fieldname] += 1
      cb(err, include)
    })
  }
}

/** The engine's adapter for multer's API: req.body, and req.file(s) as multer fills them. */
class MulterRequest {
  constructor (strategy, ultimate, req, res, next) {
    this.strategy = strategy
    this.ultimate = ultimate
    this.req = req
    this.res = res
    this.next = next
    this.engine = null
    this.intake = null
    req.body = Object.create(null)
    if (strategy === LIST) req.files = []
    else if (strategy === BY_NAME) req.files = Object.create(null)
  }

  field (name, value) {
    try {
      appendField(this.req.body, name, value)
    } catch {
      return new MulterError('INVALID_FIELD_NAME', name)
    }
  }

  fileBegin (file) {
    const placeholder = { fieldname: file.fieldname }
    if (this.strategy === LIST) this.req.files.push(placeholder)
    else if (this.strategy === BY_NAME) {
      const files = this.req.files
      if (files[file.fieldname]) files[file.fieldname].push(placeholder)
      else files[file.fieldname] = [placeholder]
    }
    return placeholder
  }

  fileStored (placeholder, file) {
    if (this.strategy === VALUE) {
      this.req.file = file
      return
    }
    delete placeholder.fieldname
    Object.assign(placeholder, file)
  }

  fileDropped (placeholder) {
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

  done () {
    if (!this.ultimate) this.req.resume()
    const next = this.next
    // uWS's handler (alive until the body ends: an epilogue may trickle) reaches this
    // object and the intake: nothing of the request may stay reachable from them.
    this.intake.letGo()
    this.req = this.res = this.next = this.engine = this.intake = null
    next()
  }

  fail (err) {
    if (this.ultimate) asExpressAnswers(this.res, err)
    // As multer (and body-parser), the rest of the body is read and dropped before
    // next(err), so the framework's answer reaches a client still sending; unlike them,
    // within linger's bounds (past them: Connection: close, and closed).
    // (The engine resumed the source if it had paused it. Never resume otherwise: uWS's
    // resume() without a pause() before it restores no events, and the socket goes deaf.)
    this.intake.refuse(this.engine.remaining(), err, () => this.next(err))
  }
}

function multipart (options) {
  return new Multipart(options)
}

multipart.diskStorage = diskStorage
multipart.memoryStorage = memoryStorage
multipart.MulterError = MulterError

module.exports = { multipart, MulterError, Multipart, MemoryStorage, DiskStorage }
