'use strict'
const { Buffer } = require('node:buffer')
const { Body } = require('../body/accumulator')
const { checkKnown, objectOption, parseOnAborted, READER_METHODS } = require('../plan/check')
const { readerForms } = require('../plan/reader')
const { parseLimit, parseMaxPreallocated, parseInflate } = require('../plan/limits')
const { DEFAULT_TIMEOUT, parseTimeout } = require('../plan/timeout')
const { attachIntake } = require('../body/intake')
const { BufferedRead } = require('../body/buffered-read')
const { headersOf } = require('../body/headers')
const { parseLinger } = require('../plan/linger')
const { parseDigest, parseOnDigest, OFF, CHECK } = require('../plan/digest')
const { requestDigests } = require('../body/digest')

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
 * before the promise rejects (lib/refusal/refusal.js), so any answer then reaches the client.
 */
const BODY = readerForms('readBody', 'bodyReader', 'readBody(res, req)', READER_METHODS,
  (options) => readOptions(options, READ_BODY), (res, req, plan) => read(res, req, plan, finishBuffer, READ_BODY.call))
const readBody = BODY.perCall
/**
 * readBody compiled for a route: the options are read and checked once, here, and each
 * `read(res, req)` does only what its request needs. The form for a hot route.
 */
const bodyReader = BODY.compiled

/**
 * readBody's twin for text: resolves with the body decoded as `options.encoding`
 * (default utf8), built without an intermediate Buffer where the native tier can.
 */
const TEXT = readerForms('readText', 'textReader', 'readText(res, req)', READER_METHODS,
  (options) => readOptions(options, READ_TEXT), (res, req, plan) => read(res, req, plan, finishText, READ_TEXT.call))
const readText = TEXT.perCall
/** readText compiled for a route, as bodyReader is readBody. */
const textReader = TEXT.compiled

const finishBuffer = (accumulator) => accumulator.finish()
const finishText = (accumulator, options) => accumulator.finishString(options.encoding)

// The options of readBody and readText: an unknown name is a TypeError naming the closest.
// Each argument error names the function called (call, what, object).
const READ_BODY = { names: new Set(['limit', 'maxPreallocated', 'inflate', 'timeout', 'linger', 'onAborted', 'digest', 'onDigest']), call: 'readBody(res, req)', what: 'readBody option', object: 'readBody options', text: false }
const READ_TEXT = { names: new Set([...READ_BODY.names, 'encoding']), call: 'readText(res, req)', what: 'readText option', object: 'readText options', text: true }

/** The options of one call, read and checked once: the frozen value the rest reads. */
function readOptions (options, api) {
  if (options === undefined || options === null) return api.text ? TEXT_DEFAULTS : BODY_DEFAULTS
  objectOption(options, api.object)
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
    linger: parseLinger(options.linger),
    onAborted,
    digest,
    onDigest,
    encoding,
    // finishString reads UTF-8 text straight from the body's memory (lib/body/accumulator.js).
    asText: encoding === 'utf8' || encoding === 'utf-8'
  })
}

function textEncoding (encoding = 'utf8') {
  if (!Buffer.isEncoding(encoding)) throw new TypeError(`uws-body: unknown encoding ${JSON.stringify(encoding)}`)
  return encoding
}

const BODY_DEFAULTS = readOptions({}, READ_BODY)
const TEXT_DEFAULTS = readOptions({}, READ_TEXT)

function read (res, req, options, finish, call) {
  const { contentLength, contentEncoding } = headersOf(req, call)
  const accumulator = new Body(options.limit, options.maxPreallocated, options.inflate, contentLength, contentEncoding, options.asText,
    requestDigests(options.digest, req))
  return new Promise((resolve, reject) => {
    // A refused body's rest is dropped before the promise rejects (lib/body/buffered-read.js).
    const read = new PromisedRead(accumulator, options, contentLength, res, resolve, reject, finish)
    attachIntake(res, read, options.onAborted)
    read.start()
  })
}

/** A body read for a promise: its own owner (lib/body/buffered-read.js), one object a request. */
class PromisedRead extends BufferedRead {
  constructor (acc, options, contentLength, res, resolve, reject, finish) {
    super(acc, options, contentLength, res, null, null)
    this.owner = this
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

module.exports = { readBody, readText, bodyReader, textReader }
