'use strict'
// One Express body parser: body-parser's request flow (which requests to parse, the
// charset, the encoding, verify, parse, and its errors' status and type), with the body
// read by uws-body (lib/frameworks/source.js).
const { Buffer } = require('node:buffer')
const typeis = require('type-is')
const contentType = require('content-type')
const errors = require('../../native/errors')
const { sourceOf, isUltimate, readInto, discard } = require('../source')
const { asExpressAnswers } = require('../answers')
const { isBodyParserIdentity } = require('../../body/headers')

// charset parameter by content-type header; headers repeat, the parse does not need to.
const charsetCache = new Map()
const CHARSET_CACHE_MAX = 256

// The last header's charset first, as lib/frameworks/body-parser/options.js's type match does.
let lastHeader = null
let lastCharset = null

function charsetOf (req) {
  const header = req.headers['content-type']
  if (!header) return undefined
  if (header !== lastHeader) {
    let charset = charsetCache.get(header)
    if (charset === undefined) {
      const parsed = contentType.parse(header).parameters.charset
      charset = parsed === undefined ? null : parsed.toLowerCase()
      if (charsetCache.size < CHARSET_CACHE_MAX) charsetCache.set(header, charset)
    }
    lastHeader = header
    lastCharset = charset
  }
  return lastCharset === null ? undefined : lastCharset
}

let iconv = null
const iconvLite = () => iconv || (iconv = require('iconv-lite'))

const isUtf8 = (charset) => charset === 'utf-8' || charset === 'utf8'

function knownCharset (charset) {
  return isUtf8(charset) || iconvLite().encodingExists(charset)
}

/**
 * The body as a string in `charset`, without its byte order mark (iconv-lite's rule, which
 * body-parser follows). UTF-8 from an accumulator is decoded natively, with no Buffer.
 */
function decode (source, charset) {
  if (isUtf8(charset)) {
    const str = Buffer.isBuffer(source) ? source.toString('utf8') : source.finishString('utf8')
    return str.charCodeAt(0) === 0xfeff ? str.slice(1) : str
  }
  return iconvLite().decode(Buffer.isBuffer(source) ? source : source.finish(), charset)
}

/**
 * http-errors' rule, which body-parser applies to verify and parse failures: the thrown
 * error keeps its own status if it has one, else gets `status`; it gains `type` and `body`.
 */
function asHttpError (thrown, status, type, body) {
  const err = thrown instanceof Error ? thrown : new Error(String(thrown))
  let s = err.status || err.statusCode || status
  if (typeof s !== 'number' || s < 400 || s >= 600) s = 500
  err.status = err.statusCode = s
  err.expose = s < 500
  if (err.type === undefined) err.type = type
  err.body = body
  return err
}

/** `inflate: false` and an encoded body: body-parser's 415, with its message. */
function inflateRefused (encoding) {
  return new errors.BodyError('content encoding unsupported', {
    code: 'ERR_BODY_ENCODING_UNSUPPORTED',
    status: 415,
    type: 'encoding.unsupported',
    encoding: encoding.toLowerCase()
  })
}

/**
 * spec: { charset: false (raw) or a function (charset) -> boolean for the parsers that
 *         restrict it, or true; parse(body, charset): the value of req.body, where body is
 *         a string (or a Buffer for raw) }.
 */
function createParser (options, spec) {
  // The verdicts on the last charset seen (a route's requests mostly repeat one): whether
  // iconv-lite knows it, whether this kind of parser takes it. Both depend on it alone.
  let lastCharset = null
  let lastKnown = false
  let lastTaken = false
  return function uwsBodyParser (req, res, next) {
    if (req.bodyRead === true || req._body === true || req.readableEnded === true) return next()
    if (!('body' in req)) req.body = undefined
    if (!typeis.hasBody(req) || !options.shouldParse(req)) return next()
    let source
    try {
      source = sourceOf(req)
    } catch (err) {
      return next(err)
    }
    const parsed = new ParsedBody(req, res, next, options, spec, isUltimate(source))

    // body-parser's order: the charset its kind refuses, and (for verify, which is handed
    // the raw bytes) one iconv-lite does not know; then the encoding; then what the body
    // refuses by its headers (an encoding it cannot decode, the declared length); last a
    // charset iconv-lite does not know, which raw-body finds when it starts reading.
    let unknownCharset = null
    if (spec.charset !== false) {
      const charset = parsed.charset = charsetOf(req) || options.defaultCharset
      if (charset !== lastCharset) {
        lastKnown = knownCharset(charset)
        lastTaken = typeof spec.charset !== 'function' || spec.charset(charset)
        lastCharset = charset
      }
      if (!lastTaken || (options.verify && !lastKnown)) return parsed.refuse(source, charsetRefused(charset))
      if (!lastKnown) unknownCharset = charsetRefused(charset)
    }
    const encoding = req.headers['content-encoding']
    if (!options.inflate && !isBodyParserIdentity(encoding)) return parsed.refuse(source, inflateRefused(encoding))
    // decode() below reads a UTF-8 body with finishString('utf8').
    const asText = !options.verify && parsed.charset !== null && isUtf8(parsed.charset)
    readInto(source, req, res, options, asText, parsed, unknownCharset)
  }
}

const charsetRefused = (charset) => errors.bodyError('ERR_BODY_CHARSET_UNSUPPORTED', { charset })

/**
 * One request's parse: what the middleware needs once the body is read. next() and
 * verify/parse (a reviver) must run in the async context the middleware was called in,
 * not that of the uWS or socket callback the body ends in: a promise reaction registered
 * now runs in the context current now, as code after an `await` does. An AsyncResource's
 * runInAsyncScope inside uWS's callback cost more (docs/performance.md, row 'parse
 * continuation'). One object and its promise, no closure, per request.
 */
class ParsedBody {
  constructor (req, res, next, options, spec, ultimate) {
    this.req = req
    this.res = res
    this.next = next
    this.options = options
    this.spec = spec
    this.ultimate = ultimate
    this.charset = null
    this.error = null
    this.acc = null
    const read = new Promise(keepResolve)
    this.resolveRead = resolveKept
    // Not kept past this request: the slot would hold its promise, and so its body.
    resolveKept = null
    read.then(parseRead)
  }

  /** The body read (lib/body/buffered-read.js): called once, error or not. */
  bodyRead (error, acc) {
    this.error = error
    this.acc = acc
    this.resolveRead(this)
  }

  /** A body refused before reading (charset, encoding): its rest is dropped, then next(err). */
  refuse (source, error) {
    discard(source, this.req, this.res, this.options.linger, () => this.bodyRead(error, null))
  }

  fail (err) {
    if (this.ultimate) asExpressAnswers(this.res, err)
    this.next(err)
  }

  parse (error, acc) {
    if (error) return this.fail(error)
    const { req, res, options, charset } = this
    // The body as read: the accumulator itself (so UTF-8 is decoded natively, with no
    // Buffer), or its Buffer when verify or raw needs one.
    let read = acc
    let body
    try {
      if (options.verify || charset === null) read = acc.finish()
      if (options.verify) {
        try {
          options.verify(req, res, read, charset)
        } catch (thrown) {
          return this.fail(asHttpError(thrown, 403, 'entity.verify.failed', read))
        }
      }
      body = charset === null ? read : decode(read, charset)
      // The digests `digest: [names]` asked for, of the bytes read (null otherwise).
      if (options.digest > 0) req.digests = acc.digests
    } catch (err) {
      // finish() throws the body's own BodyError (e.g. fewer bytes than declared).
      return this.fail(err)
    }
    try {
      req.body = this.spec.parse(body, charset)
    } catch (thrown) {
      const err = asHttpError(thrown, 400, 'entity.parse.failed', body)
      // body-parser's error as it makes it (V8's SyntaxError, its message), with the
      // stable code every other client error has.
      if (err.code === undefined) err.code = 'ERR_BODY_PARSE'
      return this.fail(err)
    }
    this.next()
  }
}

// new Promise's executor hands its resolve out through this slot: no closure a request.
let resolveKept = null
function keepResolve (resolve) {
  resolveKept = resolve
}

/** The reaction that resumes a request once its body is read, in the middleware's context. */
function parseRead (parsed) {
  try {
    parsed.parse(parsed.error, parsed.acc)
  } catch (err) {
    // As a throw from the body's callback was: an uncaught exception, not a rejection.
    process.nextTick(rethrow, err)
  }
}

function rethrow (err) {
  throw err
}

module.exports = { createParser }
