'use strict'
// Where an Express request's body bytes come from.
//
// Under ultimate-express the fast path reads straight from uWS: each chunk goes from
// uWS's ArrayBuffer into the body's buffer, one copy. It uses these ultimate-express 2.x
// internals, checked on every request (a mismatch is a clear error, never a guess):
//   req._res          the uWS HttpResponse. Its onData handler is replaced by ours;
//                     ultimate-express's own handler (which feeds the req stream) is then
//                     never called, as with its own built-in parsers.
//   req.receivedData  true once a chunk went into the req stream: from then on the body
//                     is read from the stream instead (see below).
//   req.res.aborted / req.res.finished   the connection is gone / answered.
//   req.bodyRead      the flag ultimate-express's built-in parsers set and check; set
//                     here too, so mixing both kinds of parser reads a body once.
//   req.method, req.app.get('body methods')   ultimate-express's rule for which
//                     requests feed the req stream: POST, PUT, PATCH and the methods
//                     listed in that setting. For any other method it attaches no onData,
//                     ends the req stream at once and sets receivedData, though a body
//                     may have been sent (GET, DELETE, OPTIONS…).
//   req._req          the uWS HttpRequest, usable only until the route handler
//                     returns: so it tells whether uWS may already have dropped bytes.
// Such a body is read from uWS while the route handler runs, which is where middleware
// runs unless one before it was async. After that, uWS has dropped whatever arrived with
// no onData handler attached: the body is gone, and the parser says so (BODY_GONE).
// Aborts arrive through res.socket's 'close' event (Express's API; ultimate-express
// emits it when uWS reports the abort), since ultimate-express owns uWS's onAborted.
//
// Otherwise the body is read from the request stream (plain Express on node:http, or
// ultimate-express after data began flowing into the stream, e.g. behind an async
// middleware). That path copies each byte twice: the framework already copied every
// chunk into a stream Buffer before we see it; the second copy (into the body) is ours.
//
// A body refused before its end reaches next(err) only once its rest has been dropped,
// or a bound passed (lib/linger.js beforeNext): the framework's answer then reaches a
// client that was still sending.
const { Body } = require('../accumulator')
const errors = require('../errors')
const { deadlineOf, passed } = require('../timeout')
const { parseContentLength } = require('../options')
const linger = require('../linger')

const UWS = 1 // ultimate-express, nothing read yet: straight from uWS
const ULTIMATE_STREAM = 2 // ultimate-express, data already flowing into req
const NODE_STREAM = 3 // node:http (plain Express)
const BODY_GONE = 4 // ultimate-express did not read this method's body, and uWS dropped it

// The methods whose bodies ultimate-express 2.x reads without being told to.
const ULTIMATE_BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

/** Which source (checked once per request), or throws a TypeError naming what is missing. */
function sourceOf (req) {
  const uwsResponse = req._res
  if (uwsResponse !== null && typeof uwsResponse === 'object' && typeof uwsResponse.onData === 'function') {
    if (typeof req.receivedData !== 'boolean' || req.res === null || typeof req.res !== 'object' || typeof req.res.aborted !== 'boolean') {
      throw new TypeError('uws-body: this request has a uWS response (req._res) but not the ultimate-express 2.x fields uws-body reads (req.receivedData, req.res.aborted); see docs/express.md, "How the body is read", in the uws-body repository')
    }
    if (!ultimateReadsBody(req)) return inRouteHandler(req) ? UWS : BODY_GONE
    return req.receivedData ? ULTIMATE_STREAM : UWS
  }
  if (typeof req.on === 'function' && typeof req.resume === 'function') return NODE_STREAM
  throw new TypeError('uws-body: the request is neither ultimate-express\'s nor a readable stream (node:http); uws-body\'s parsers know no other framework')
}

function ultimateReadsBody (req) {
  if (ULTIMATE_BODY_METHODS.has(req.method)) return true
  const app = req.app
  const extra = app && typeof app.get === 'function' ? app.get('body methods') : undefined
  return Array.isArray(extra) && extra.includes(req.method)
}

/** Whether uWS's route handler is still running (its HttpRequest throws once it returned). */
function inRouteHandler (req) {
  const uwsRequest = req._req
  if (uwsRequest === null || typeof uwsRequest !== 'object' || typeof uwsRequest.getMethod !== 'function') {
    throw new TypeError('uws-body: this ultimate-express request has no uWS HttpRequest (req._req), which uws-body needs to read a body sent with ' + req.method + '; see docs/express.md, "How the body is read", in the uws-body repository')
  }
  try {
    uwsRequest.getMethod()
    return true
  } catch {
    return false
  }
}

/** The error for BODY_GONE: the application's setup, not the client, so a 500. */
function bodyGone (method) {
  const err = new Error(`uws-body: the body of this ${method} request is gone: ultimate-express reads bodies of POST, PUT, PATCH and the methods in app.set('body methods', [...]) only, and uWS drops the bytes of any other request that arrive once the route handler has returned, which it had (a middleware before the parser was async). Add '${method}' to 'body methods', or mount the parser before async middleware.`)
  err.code = 'ERR_BODY_GONE'
  err.status = err.statusCode = 500
  err.expose = false
  return err
}

/** True for ultimate-express's requests (and so `res` is its Response). */
const isUltimate = (source) => source !== NODE_STREAM

/**
 * Reads the whole body into a Body (lib/accumulator.js) and calls done(error) or done(null, acc)
 * once, with every byte pushed (the caller then finishes it as a Buffer or a string).
 * options: the parser's (lib/parsers/options.js); asText: the body will be read as UTF-8
 * text. A body refused before its end calls done(error) once its rest is dropped (see
 * above).
 */
function readInto (source, req, res, options, asText, done) {
  if (source === BODY_GONE) {
    req.bodyRead = true
    return done(bodyGone(req.method))
  }
  const headers = req.headers
  const acc = new Body(options.limit, options.maxPreallocated, options.inflate, headers['content-length'], headers['content-encoding'], asText)
  let settled = false
  let drain = null
  let controls = null
  const deadline = deadlineOf(options.timeout)
  const settle = (error) => {
    if (settled) return
    settled = true
    if (error) {
      acc.abort()
      done(error)
    } else {
      done(null, acc)
    }
  }
  const refuse = (error, ended) => {
    const received = acc.received
    acc.abort()
    if (ended || controls === null) return settle(error)
    drain = lingerBeforeNext(req, res, controls, options.linger, received, error, () => settle(error))
  }
  const onChunk = (chunk, isLast) => {
    if (drain !== null) return drain.chunk(chunk, isLast)
    if (settled) return
    if (passed(deadline)) return refuse(errors.timedOut(options.timeout, acc.received), isLast)
    if (!acc.push(chunk)) return refuse(acc.error, isLast)
    if (isLast) settle(null)
  }
  const onAbort = () => {
    if (drain !== null) return drain.abort()
    if (settled) return
    acc.abort()
    settle(acc.error)
  }

  if (source !== NODE_STREAM && (req.res.aborted || req.res.finished)) {
    req.bodyRead = true
    return settle(errors.aborted(-1, 0))
  }
  // Handlers first: a refused body (declared length over the limit, bad encoding) has
  // its rest dropped by them, and once done() has run the application may have
  // answered, after which uWS forbids touching its response.
  controls = readChunks(source, req, res, { chunk: onChunk, abort: onAbort })
  if (acc.error !== null && drain === null) refuse(acc.error, false)
}

/** The drain of a refused body's rest (lib/linger.js beforeNext), for a body read from `req`. */
function lingerBeforeNext (req, res, controls, bounds, received, error, proceed) {
  const expected = parseContentLength(req.headers['content-length'])
  const remaining = expected >= 0 ? expected - received : -1
  return linger.beforeNext(res, controls, { remaining, linger: bounds, error }, proceed)
}

/**
 * For a body refused before reading (charset, encoding): its bytes are dropped as they
 * come, and proceed() is called once they have been (or a bound passed, see above).
 */
function discard (source, req, res, bounds, proceed) {
  if (source === BODY_GONE) return proceed()
  let drain = null
  const controls = readChunks(source, req, res, {
    chunk (chunk, isLast) { if (drain !== null) drain.chunk(chunk, isLast) },
    abort () { if (drain !== null) drain.abort() }
  })
  drain = lingerBeforeNext(req, res, controls, bounds, 0, null, proceed)
}

const EMPTY = new Uint8Array(0)

/**
 * Hands the body to `handlers` chunk by chunk, as it arrives, for a consumer that parses
 * as it goes (multipart) and must be able to slow the client down:
 *   handlers.chunk(chunk, isLast)   an ArrayBuffer from uWS (valid only during the call:
 *                                   uWS takes it back when the handler returns) or a
 *                                   Buffer from the request stream; isLast once, at the end
 *   handlers.abort()                the client went away before the end
 * Returns { uws, pause(), resume(), close() }: the uWS response under ultimate-express
 * (else null), whose answer a refusal holds (lib/linger.js); uWS's res.pause()/resume()
 * (uWS stops reading the socket, TCP slows the sender), or the request stream's; close()
 * ends the connection (uWS's res.close(), or the socket's destroy()). None touches a
 * response uWS has already reported gone or that was answered (uWS.js forbids any use of
 * it then).
 */
function readChunks (source, req, res, handlers) {
  if (source === UWS) {
    req.bodyRead = true
    const uwsResponse = req._res
    const gone = () => req.res.aborted === true || req.res.finished === true
    const controls = {
      uws: uwsResponse,
      pause () { if (!gone()) uwsResponse.pause() },
      resume () { if (!gone()) uwsResponse.resume() },
      close () { if (!gone()) uwsResponse.close() }
    }
    if (req.res.aborted || req.res.finished) {
      process.nextTick(handlers.abort)
      return controls
    }
    const socket = res && res.socket
    if (socket && typeof socket.once === 'function') socket.once('close', handlers.abort)
    uwsResponse.onData(handlers.chunk)
    return controls
  }
  let close
  let holdClose = noop
  if (source === ULTIMATE_STREAM) {
    req.bodyRead = true
    const socket = res && res.socket
    if (socket && typeof socket.once === 'function') socket.once('close', handlers.abort)
    close = () => { if (req.res.aborted !== true && req.res.finished !== true) req._res.close() }
  } else {
    close = () => { if (req.socket && !req.socket.destroyed) req.socket.destroy() }
    holdClose = () => {
      const socket = req.socket
      if (socket && !socket.destroyed) socket.destroySoon = shutDownWrites
    }
  }
  let ended = false
  req.on('data', (chunk) => handlers.chunk(chunk, false))
  req.on('end', () => {
    ended = true
    handlers.chunk(EMPTY, true)
  })
  req.on('error', handlers.abort)
  // A body whose end arrived is complete, whether or not the stream is an IncomingMessage
  // (a PassThrough in its place has no `complete`).
  if (source === NODE_STREAM) req.on('close', () => { if (!ended && !req.complete) handlers.abort() })
  return {
    uws: source === ULTIMATE_STREAM ? req._res : null,
    pause () { req.pause() },
    resume () { req.resume() },
    close,
    holdClose
  }
}

function noop () {}

// Node's server ends a response that says `Connection: close` with socket.destroySoon():
// FIN, and destroy() as soon as the answer is written (resOnFinish, lib/_http_server.js,
// Node 20-24). Past a refused body's bound its rest is still arriving, unread, so that
// destroy() is a RST, and a client that had not read the answer yet loses it (its kernel
// drops what it had received; node:http's next write fails first). Shadowed on the
// socket, the close is only a FIN: the bound's own timer destroys the socket GRACE_MS
// later (lib/linger.js beforeNext), as nginx's lingering close does.
function shutDownWrites () {
  if (this.writable) this.end()
}

module.exports = { sourceOf, isUltimate, readInto, readChunks, discard, bodyGone, BODY_GONE }
