'use strict'
// readMultipart(res, req, options): a multipart/form-data body of a bare uWS request, as
// { fields, files }. The engine (./engine.js) does the work; this gives it uWS's body
// (lib/body/intake.js) and shapes the result.
//
// Where files go (`storage`):
//   'memory' (default)  file.buffer: a range of the one native block holding every file
//   { dest }            file.path: a new file in `dest` (created if missing) named by 32
//                       random hex digits, never by the client
//   (file) => Writable  the caller's stream for each file, piped: its 'finish' is awaited
//   an engine           any multer storage engine (`_handleFile`/`_removeFile`)
const { AsyncResource } = require('node:async_hooks')
const { MultipartEngine } = require('../multipart/engine')
const { readOptions, limitsOf } = require('../multipart/options')
const { DEFAULTS } = require('../multipart/limits')
const { describe, PAUSABLE_METHODS } = require('../plan/check')
const { readerForms } = require('../plan/reader')
const { attach } = require('../body/intake')
const { keepShape } = require('../multipart/shapes')
const { requestDigests } = require('../body/digest')
const { CONTENT_TYPE, CONTENT_LENGTH, CONTENT_ENCODING } = require('../body/header-keys')

/** A header of a uWS HttpRequest (by `key`, lib/body/header-keys.js) or a headers object (by `name`). */
function headerOf (req, name, key) {
  if (req !== null && typeof req === 'object' && typeof req.getHeader === 'function') return req.getHeader(key)
  if (req !== null && typeof req === 'object') return req[name]
  throw new TypeError(`uws-body: readMultipart(res, req) needs a uWS HttpRequest or a headers object, got ${describe(req)}`)
}

/**
 * Reads a multipart/form-data body of a uWS request. Call it synchronously in the route
 * handler: it reads the headers from `req` and owns res.onData and res.onAborted.
 * Resolves with `{ fields, files }`; rejects once with a BodyError (a MulterError for
 * multer's codes) for what the client sent or did, or with the storage's own error.
 */
const CALL = 'readMultipart(res, req)'
const FORM = readerForms('readMultipart', 'multipartReader', CALL, PAUSABLE_METHODS, readOptions, (res, req, config) => readForm(res, req, config))
const readMultipart = FORM.perCall
/** readMultipart compiled for a route: the options read once, `read(res, req)` per request. */
const multipartReader = FORM.compiled

function readForm (res, req, config) {
  const contentType = headerOf(req, 'content-type', CONTENT_TYPE)
  const contentLength = headerOf(req, 'content-length', CONTENT_LENGTH)
  const contentEncoding = headerOf(req, 'content-encoding', CONTENT_ENCODING)

  return new Promise((resolve, reject) => {
    // The promise's functions go to the adapter as values: no closure reachable from
    // uWS's handlers (which live until the body ends) may hold them, or the promise's
    // result (the files) would live as long.
    const result = new Result(resolve, reject)
    // A function's limits are this request's (of its headers, read now, as the rest);
    // what it throws is the request's error, given once the body is dropped.
    let limits = config.limits
    let refused = null
    if (typeof limits === 'function') {
      try {
        limits = limitsOf(limits, req)
      } catch (err) {
        limits = DEFAULTS
        refused = err
      }
    }
    const engine = new MultipartEngine(config, {
      contentType,
      contentLength,
      contentEncoding,
      digests: requestDigests(config.digest, req),
      limits,
      fileFilter: null,
      req: null
    }, result)
    // uWS's callbacks belong to no request: the caller's handlers (storage functions,
    // the promise's reactions) must see the async context readMultipart was called in.
    const scope = new AsyncResource('UWS_BODY_MULTIPART', { requireManualDestroy: true })
    result.scope = scope
    result.engine = engine
    // Attached whatever happens next: bytes of a refused body are dropped without work,
    // which keeps the connection in step, and the handler may answer at once.
    result.intake = attachEngine(res, config, engine, scope)
    const started = refused === null ? engine.start(new Source(res)) : engine.refuse(refused)
    if (started !== true) result.fail(started)
  })
}

/** uWS's handlers, to the engine in the request's async scope (holding nothing else). */
function attachEngine (res, config, engine, scope) {
  return attach(res, config.linger, config.onAborted,
    (chunk, isLast) => scope.runInAsyncScope(engine.write, engine, chunk, isLast),
    () => scope.runInAsyncScope(engine.abort, engine))
}

/** The engine's source: uWS's pause and resume, for a response still there. */
class Source {
  constructor (res) {
    this.res = res
  }

  pause () { if (!this.res.aborted) this.res.pause() }
  resume () { if (!this.res.aborted) this.res.resume() }
}

/** The engine's adapter for readMultipart: fields by name, files in the order sent. */
class Result {
  constructor (resolve, reject) {
    this.resolve = resolve
    this.reject = reject
    this.engine = null
    this.intake = null
    this.scope = null
    this.fields = Object.create(null)
    this.files = []
  }

  field (name, value) {
    const held = this.fields[name]
    if (held === undefined) this.fields[name] = value
    else if (typeof held === 'string') this.fields[name] = [held, value]
    else held.push(value)
  }

  fileBegin (file) {
    this.files.push(file)
    return this.files.length - 1
  }

  fileStored (index, file) {
    this.files[index] = file
  }

  fileDropped (index) {
    this.files[index] = null
  }

  done () {
    const fields = this.fields
    const files = this.files.filter((f) => f !== null)
    const resolve = this.resolve
    this.end()
    resolve({ fields, files })
  }

  fail (err) {
    const reject = this.reject
    const intake = this.intake
    const remaining = this.engine.remaining()
    this.end()
    // The rest of the body, if it has not ended, is dropped before the promise rejects.
    intake.refuse(remaining, err, () => reject(err))
  }

  end () {
    this.resolve = this.reject = null
    this.engine = null
    this.intake = null
    this.fields = null
    this.files = null
    if (this.scope !== null) {
      this.scope.emitDestroy()
      this.scope = null
    }
    // Holding nothing now: its hidden class outlives the form (./shapes.js).
    keepShape('adapter', this)
  }
}

module.exports = { readMultipart, multipartReader }
