'use strict'
const { Buffer } = require('node:buffer')
const { BodyAccumulator, AS_TEXT } = require('./accumulator')
const { describe, parseContentLength, checkKnown, checkResponse } = require('./options')
const { bindOnce } = require('./async-context')
const errors = require('./errors')
const { DEFAULT_TIMEOUT, parseTimeout, deadlineOf, passed } = require('./timeout')
const linger = require('./linger')

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
  return read(res, req, options, finishBuffer, READ_BODY)
}

// The options of readBody and readText: an unknown name is a TypeError naming the closest.
const READ_BODY = new Set(['limit', 'maxPreallocated', 'inflate', 'timeout', 'linger', 'onAborted'])
const READ_TEXT = new Set([...READ_BODY, 'encoding'])

/**
 * readBody's twin for text: resolves with the body decoded as `options.encoding`
 * (default utf8), built without an intermediate Buffer where the native tier can.
 */
function readText (res, req, options) {
  const encoding = options != null && options.encoding !== undefined ? options.encoding : 'utf8'
  if (!Buffer.isEncoding(encoding)) throw new TypeError(`uws-body: unknown encoding ${JSON.stringify(encoding)}`)
  return read(res, req, options, (accumulator) => accumulator.finishString(encoding), READ_TEXT, encoding === 'utf8' || encoding === 'utf-8')
}

const finishBuffer = (accumulator) => accumulator.finish()

function read (res, req, options, finish, known, asText = false) {
  checkResponse(res, 'readBody(res, req)', ['onData', 'onAborted'])
  if (options !== null && typeof options === 'object') checkKnown(options, known, known === READ_TEXT ? 'readText option' : 'readBody option')
  let onAborted = options !== null && typeof options === 'object' ? options.onAborted : undefined
  if (onAborted !== undefined && typeof onAborted !== 'function') {
    throw new TypeError('uws-body: options.onAborted must be a function')
  }
  const timeout = parseTimeout(options != null ? options.timeout : undefined, DEFAULT_TIMEOUT)
  const bounds = linger.parseLinger(options != null ? options.linger : undefined)
  const bodyOpts = bodyOptions(req, options)
  if (asText) bodyOpts[AS_TEXT] = true
  const accumulator = new BodyAccumulator(bodyOpts)
  // Called from uWS's abort callback: run it in the caller's async context.
  if (onAborted !== undefined) onAborted = bindOnce(onAborted)

  return new Promise((resolve, reject) => {
    let settled = false
    // Once the body is refused before its end: where the rest of it goes (lib/linger.js).
    let refusal = null
    const deadline = deadlineOf(timeout)
    const settle = (error, body) => {
      if (settled) return
      settled = true
      if (error) reject(error)
      else resolve(body)
    }
    res.onAborted(() => {
      res.aborted = true
      accumulator.abort()
      if (refusal !== null) refusal.abort()
      settle(accumulator.error)
      if (onAborted) onAborted()
    })
    // A body rejected up front (length over the limit, bad length, unsupported encoding)
    // still gets its onData handler: the rest is dropped there.
    if (accumulator.error !== null) {
      const error = accumulator.error
      refusal = refuse(res, accumulator, bodyOpts, bounds, false, error, () => settle(error))
    }
    res.onData((chunk, isLast) => {
      if (refusal !== null) return refusal.chunk(chunk, isLast)
      if (settled) return
      if (passed(deadline)) {
        const error = errors.timedOut(timeout, accumulator.received)
        refusal = refuse(res, accumulator, bodyOpts, bounds, isLast, error, () => settle(error))
        return
      }
      if (!accumulator.push(chunk)) {
        const error = accumulator.error
        refusal = refuse(res, accumulator, bodyOpts, bounds, isLast, error, () => settle(error))
        return
      }
      if (isLast) {
        let body
        try {
          body = finish(accumulator)
        } catch (error) {
          refuse(res, accumulator, bodyOpts, bounds, true, error, () => settle(error))
          return
        }
        settle(null, body)
      }
    })
  })
}

/**
 * Refuses a body: its memory goes now; the rest, if the body has not ended, goes to the
 * returned refusal (lib/linger.js), which drops it as it comes and calls deliver() when
 * the error may reach the application.
 */
function refuse (res, accumulator, bodyOpts, bounds, ended, error, deliver) {
  // What is left of a declared length (parsed again only here, off the path of bodies that
  // are read): a rest known to pass the bound is not waited for.
  const expected = ended ? -1 : parseContentLength(bodyOpts.contentLength)
  const remaining = expected >= 0 ? expected - accumulator.received : -1
  accumulator.abort()
  return linger.refuse(res, { ended, remaining, linger: bounds, error }, deliver)
}

function bodyOptions (req, options) {
  if (options !== undefined && options !== null && typeof options !== 'object') {
    throw new TypeError(`uws-body: options must be an object, got ${describe(options)}`)
  }
  const { limit, maxPreallocated, inflate } = options || {}
  let contentLength, contentEncoding
  if (req !== null && typeof req === 'object' && typeof req.getHeader === 'function') {
    contentLength = req.getHeader('content-length')
    contentEncoding = req.getHeader('content-encoding')
  } else if (req !== null && typeof req === 'object') {
    // A plain headers object, as frameworks keep them (lower-case names).
    contentLength = req['content-length']
    contentEncoding = req['content-encoding']
  } else {
    throw new TypeError(`uws-body: readBody(res, req) needs a uWS HttpRequest or a headers object, got ${describe(req)}`)
  }
  return { limit, maxPreallocated, inflate, contentLength, contentEncoding: contentEncoding === '' ? null : contentEncoding }
}

module.exports = { readBody, readText, bodyOptions }
