'use strict'
const { Buffer } = require('node:buffer')
const { Body } = require('./accumulator')
const { describe, parseLimit, parseMaxPreallocated, parseInflate, checkKnown, checkResponse, objectOption, parseOnAborted } = require('./options')
const { DEFAULT_TIMEOUT, parseTimeout } = require('./timeout')
const { attachIntake } = require('./intake')
const { BufferedRead } = require('./buffered-read')
const linger = require('./linger')
const { parseDigest, parseOnDigest, requestDigests, OFF, CHECK } = require('./digest')

// Argument errors (a wrong res, req, option type or encoding) are the program's mistake:
// both functions throw them synchronously as TypeErrors, before touching `res`, so they
// surface at the call site. The returned promise rejects only with a BodyError: what
// the client sent or did.

/**
 * Reads the body of a uWS request. Call it synchronously inside the route handler:
 * uWS's `req` is only valid until the handler returns, and onData/onAborted must be
 * attached before then. It owns `res.onAborted`; when the client goes away it sets
 * `res.aborted = true`, calls `options.onAborted` and rejects with a 400
 * `request.aborted` BodyError, after which `res` must not be used.
 * A body refused before its end is read and dropped up to `options.linger`'s bounds
 * before the promise rejects (lib/linger.js), so any answer then reaches the client.
 */
function readBody (res, req, options) {
  checkResponse(res, 'readBody(res, req)', ['onData', 'onAborted'])
  return read(res, req, readOptions(options, READ_BODY), finishBuffer)
}

/**
 * readBody's twin for text: resolves with the body decoded as `options.encoding`
 * (default utf8), built without an intermediate Buffer where the native tier can.
 */
function readText (res, req, options) {
  checkResponse(res, 'readBody(res, req)', ['onData', 'onAborted'])
  return read(res, req, readOptions(options, READ_TEXT), finishText)
}

const finishBuffer = (accumulator) => accumulator.finish()
const finishText = (accumulator, options) => accumulator.finishString(options.encoding)

// The options of readBody and readText: an unknown name is a TypeError naming the closest.
const READ_BODY = { names: new Set(['limit', 'maxPreallocated', 'inflate', 'timeout', 'linger', 'onAborted', 'digest', 'onDigest']), what: 'readBody option', text: false }
const READ_TEXT = { names: new Set([...READ_BODY.names, 'encoding']), what: 'readText option', text: true }

/** The options of one call, read and checked once: the frozen value the rest reads. */
function readOptions (options, api) {
  if (options === undefined || options === null) return api.text ? TEXT_DEFAULTS : BODY_DEFAULTS
  objectOption(options, 'options')
  const encoding = api.text ? textEncoding(options.encoding) : null
  checkKnown(options, api.names, api.what)
  const onAborted = parseOnAborted(options.onAborted)
  const digest = parseDigest(options.digest)
  const onDigest = parseOnDigest(options.onDigest)
  if ((onDigest !== undefined) !== (digest !== OFF && digest !== CHECK)) {
    throw new TypeError('uws-body: options.onDigest and options.digest (a list of digests) go together: digest names what onDigest gets')
  }
  return Object.freeze({
    limit: parseLimit(options.limit),
    maxPreallocated: parseMaxPreallocated(options.maxPreallocated),
    inflate: parseInflate(options.inflate),
    timeout: parseTimeout(options.timeout, DEFAULT_TIMEOUT),
    linger: linger.parseLinger(options.linger),
    onAborted,
    digest,
    onDigest,
    encoding,
    // finishString reads UTF-8 text straight from the body's memory (lib/accumulator.js).
    asText: encoding === 'utf8' || encoding === 'utf-8'
  })
}

function textEncoding (encoding = 'utf8') {
  if (!Buffer.isEncoding(encoding)) throw new TypeError(`uws-body: unknown encoding ${JSON.stringify(encoding)}`)
  return encoding
}

const BODY_DEFAULTS = readOptions({}, READ_BODY)
const TEXT_DEFAULTS = readOptions({}, READ_TEXT)

function read (res, req, options, finish) {
  const { contentLength, contentEncoding } = headersOf(req)
  const accumulator = new Body(options.limit, options.maxPreallocated, options.inflate, contentLength, contentEncoding, options.asText,
    requestDigests(options.digest, req))
  return new Promise((resolve, reject) => {
    // A refused body's rest is dropped before the promise rejects (lib/buffered-read.js).
    const read = new BufferedRead(accumulator, options, contentLength, res, null, new Settle(resolve, reject, finish, options))
    attachIntake(res, read, options.onAborted)
    read.start()
  })
}

/** The promise's end, once the body is read (lib/buffered-read.js's owner). */
class Settle {
  constructor (resolve, reject, finish, options) {
    this.resolve = resolve
    this.reject = reject
    this.finish = finish
    this.options = options
  }

  bodyRead (error, acc) {
    if (error) return this.reject(error)
    let body
    try {
      body = this.finish(acc, this.options)
    } catch (err) {
      acc.abort()
      return this.reject(err)
    }
    if (this.options.onDigest !== undefined) {
      try {
        this.options.onDigest(acc.digests)
      } catch (err) {
        return this.reject(err)
      }
    }
    this.resolve(body)
  }
}

/** The content-length and content-encoding of a uWS HttpRequest or a headers object. */
function headersOf (req) {
  if (req !== null && typeof req === 'object' && typeof req.getHeader === 'function') {
    const contentEncoding = req.getHeader('content-encoding')
    // uWS's getHeader() gives '' for a header the request does not have.
    return { contentLength: req.getHeader('content-length'), contentEncoding: contentEncoding === '' ? null : contentEncoding }
  }
  if (req !== null && typeof req === 'object') {
    // A plain headers object, as frameworks keep them (lower-case names).
    const contentEncoding = req['content-encoding']
    return { contentLength: req['content-length'], contentEncoding: contentEncoding === '' ? null : contentEncoding }
  }
  throw new TypeError(`uws-body: readBody(res, req) needs a uWS HttpRequest or a headers object, got ${describe(req)}`)
}

module.exports = { readBody, readText, headersOf }
