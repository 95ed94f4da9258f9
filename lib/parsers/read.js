'use strict'
// One Express body parser: body-parser's request flow (which requests to parse, the
// charset, the encoding, verify, parse, and its errors' status and type), with the body
// read by uws-body (lib/parsers/source.js).
const { Buffer } = require('node:buffer')
const typeis = require('type-is')
const contentType = require('content-type')
const errors = require('../errors')
const { sourceOf, isUltimate, asExpressAnswers, readInto, discard } = require('./source')
const { AsyncResource } = require('node:async_hooks')

// charset parameter by content-type header; headers repeat, the parse does not need to.
const charsetCache = new Map()
const CHARSET_CACHE_MAX = 256

function charsetOf (req) {
  const header = req.headers['content-type']
  if (!header) return undefined
  let charset = charsetCache.get(header)
  if (charset === undefined) {
    const parsed = contentType.parse(header).parameters.charset
    charset = parsed === undefined ? null : parsed.toLowerCase()
    if (charsetCache.size < CHARSET_CACHE_MAX) charsetCache.set(header, charset)
  }
  return charset === null ? undefined : charset
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

/** body-parser's test: any content-encoding but identity (in any case) is encoded. */
const isIdentity = (encoding) => !encoding || encoding.toLowerCase() === 'identity'

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

    if (spec.charset !== false) {
      parsed.charset = charsetOf(req) || options.defaultCharset
      if ((typeof spec.charset === 'function' && !spec.charset(parsed.charset)) || !knownCharset(parsed.charset)) {
        return parsed.refuse(source, errors.bodyError('ERR_BODY_CHARSET_UNSUPPORTED', { charset: parsed.charset }))
      }
    }
    const encoding = req.headers['content-encoding']
    if (!options.inflate && !isIdentity(encoding)) return parsed.refuse(source, inflateRefused(encoding))
    // decode() below reads a UTF-8 body with finishString('utf8').
    const asText = !options.verify && parsed.charset !== null && isUtf8(parsed.charset)
    readInto(source, req, res, options, asText, parsed)
  }
}

/**
 * One request's parse: what the middleware needs once the body is read, and the async
 * context it was called in, which next() and verify/parse (a reviver) must run in, not that
 * of the uWS or socket callback the body ends in. One object, no closure, per request:
 * each closure a request makes is an allocation and a first call (docs/performance.md,
 * row 'per-request objects').
 */
class ParsedBody extends AsyncResource {
  constructor (req, res, next, options, spec, ultimate) {
    super('UWS_BODY', { requireManualDestroy: true })
    this.req = req
    this.res = res
    this.next = next
    this.options = options
    this.spec = spec
    this.ultimate = ultimate
    this.charset = null
  }

  /** The body read (lib/buffered-read.js): called once, error or not. */
  bodyRead (error, acc) {
    try {
      this.runInAsyncScope(this.parse, this, error, acc)
    } finally {
      this.emitDestroy()
    }
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

module.exports = { createParser }
