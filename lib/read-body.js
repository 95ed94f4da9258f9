'use strict'
const { Buffer } = require('node:buffer')
const { BodyAccumulator } = require('./accumulator')
const { describe } = require('./options')
const { bindOnce } = require('./async-context')
const errors = require('./errors')
const { DEFAULT_TIMEOUT, parseTimeout, deadlineOf, passed } = require('./timeout')

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
 */
function readBody (res, req, options) {
  return read(res, req, options, finishBuffer)
}

/**
 * readBody's twin for text: resolves with the body decoded as `options.encoding`
 * (default utf8), built without an intermediate Buffer where the native tier can.
 */
function readText (res, req, options) {
  const encoding = options != null && options.encoding !== undefined ? options.encoding : 'utf8'
  if (!Buffer.isEncoding(encoding)) throw new TypeError(`uws-body: unknown encoding ${JSON.stringify(encoding)}`)
  return read(res, req, options, (accumulator) => accumulator.finishString(encoding))
}

const finishBuffer = (accumulator) => accumulator.finish()

function read (res, req, options, finish) {
  if (res === null || typeof res !== 'object' || typeof res.onData !== 'function' || typeof res.onAborted !== 'function') {
    throw new TypeError(`uws-body: readBody(res, req) needs a uWS HttpResponse, got ${describe(res)}`)
  }
  let onAborted = options !== null && typeof options === 'object' ? options.onAborted : undefined
  if (onAborted !== undefined && typeof onAborted !== 'function') {
    throw new TypeError('uws-body: options.onAborted must be a function')
  }
  const timeout = parseTimeout(options != null ? options.timeout : undefined, DEFAULT_TIMEOUT)
  const accumulator = new BodyAccumulator(bodyOptions(req, options))
  // Called from uWS's abort callback: run it in the caller's async context.
  if (onAborted !== undefined) onAborted = bindOnce(onAborted)

  return new Promise((resolve, reject) => {
    let settled = false
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
      settle(accumulator.error)
      if (onAborted) onAborted()
    })
    // A body rejected up front (length over the limit, bad length, unsupported encoding)
    // still gets an onData handler: its bytes are then dropped by push() without work,
    // and the handler is free to answer with the error's status at once.
    if (accumulator.error !== null) settle(accumulator.error)
    res.onData((chunk, isLast) => {
      if (settled) return
      if (passed(deadline)) {
        const received = accumulator.received
        accumulator.abort()
        return settle(errors.timedOut(timeout, received))
      }
      if (!accumulator.push(chunk)) return settle(accumulator.error)
      if (isLast) {
        let body
        try {
          body = finish(accumulator)
        } catch (error) {
          return settle(error)
        }
        settle(null, body)
      }
    })
  })
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
