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
// or a bound passed (lib/intake.js, lib/linger.js): the framework's answer then reaches a
// client that was still sending.
const { Body } = require('../accumulator')
const { requestDigests } = require('../digest')
const errors = require('../errors')
const { remainingOf } = require('../options')
const { Intake } = require('../intake')
const { BufferedRead } = require('../buffered-read')

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
 * Before next(err) under ultimate-express: its default error answer uses res.statusCode
 * (500 unless changed) and sends none of the error's `headers`, where Express's
 * (finalhandler) takes both from the error. Set on `res`, they make the same answer under
 * either: a 503 ERR_BODY_BUDGET keeps its Retry-After. A header the response refuses is
 * left out.
 */
function asExpressAnswers (res, err) {
  if (res.statusCode !== 200 || err === null || typeof err !== 'object' || typeof err.status !== 'number') return
  res.statusCode = err.status
  const headers = err.headers
  if (headers === null || typeof headers !== 'object') return
  for (const name of Object.keys(headers)) {
    try {
      res.setHeader(name, headers[name])
    } catch {}
  }
}

/**
 * Reads the whole body into a Body (lib/accumulator.js) and calls owner.bodyRead(error, acc)
 * once: error null with every byte pushed (the owner then finishes it as a Buffer or a
 * string).
 * options: the parser's (lib/parsers/options.js); asText: the body will be read as UTF-8
 * text. A body refused before its end calls bodyRead(error) once its rest is dropped (see
 * above).
 */
function readInto (source, req, res, options, asText, owner) {
  if (source === BODY_GONE) {
    req.bodyRead = true
    return owner.bodyRead(bodyGone(req.method), null)
  }
  const headers = req.headers
  const acc = new Body(options.limit, options.maxPreallocated, options.inflate, headers['content-length'], headers['content-encoding'], asText,
    requestDigests(options.digest, headers))
  if (source !== NODE_STREAM && (req.res.aborted || req.res.finished)) {
    req.bodyRead = true
    acc.abort()
    return owner.bodyRead(errors.aborted(-1, 0), null)
  }
  // Wired first: a refused body (declared length over the limit, bad encoding) has its
  // rest dropped by its handlers, and once bodyRead() has run the application may have
  // answered, after which uWS forbids touching its response.
  const read = source === UWS ? new UltimateRead(acc, options, headers['content-length'], res, null, owner) : new BufferedRead(acc, options, headers['content-length'], res, null, owner)
  read.controls = wire(source, req, res, read)
  read.start()
}

/**
 * A body read from uWS under ultimate-express, whose abort comes through the response's
 * Socket ('close'), which ultimate-express makes on first use: for a body held in JS that
 * arrives whole in its first chunk (most small ones) it is never made, nor watched (the
 * Socket and its listener were most of what such a body cost beyond the seed's reader:
 * docs/performance.md, row 'per-request objects'). It is watched from the first bytes that
 * are not the last, from a refusal, or from the start for a body whose memory is native
 * (which an abort must free at once). A client gone before a JS body's first byte leaves
 * nothing held but JS objects, which go with the request; next() is then not called, as
 * for any request whose client left between the framework's callbacks.
 */
class UltimateRead extends BufferedRead {
  watch () {
    if (this.watched === true) return
    this.watched = true
    watchClose(this.res, this)
  }

  onChunk (chunk, isLast) {
    // uWS hands over an empty chunk when a request's head came without body bytes.
    if (!isLast && this.watched !== true && chunk.byteLength !== 0) this.watch()
    super.onChunk(chunk, isLast)
  }

  refuseBody (error) {
    this.watch()
    super.refuseBody(error)
  }
}

/** Tells `intake` when ultimate-express's response closes (its Socket's 'close'). */
function watchClose (res, intake) {
  const socket = res && res.socket
  if (socket && typeof socket.once === 'function') socket.once('close', abortOf(intake))
}

/**
 * For a body refused before reading (charset, encoding): its bytes are dropped as they
 * come, and proceed() is called once they have been (or a bound passed, see above).
 */
function discard (source, req, res, bounds, proceed) {
  if (source === BODY_GONE) return proceed()
  readChunks(source, req, res, bounds, noop, noop).refuse(remainingOf(req.headers['content-length'], 0), null, proceed)
}

const EMPTY = new Uint8Array(0)

/**
 * Hands the body chunk by chunk, as it arrives, to the reader's handlers through an intake
 * (lib/intake.js), which sends it to the refusal instead once the reader refuses it:
 *   onChunk(chunk, isLast)   an ArrayBuffer from uWS (valid only during the call: uWS
 *                            takes it back when the handler returns) or a Buffer from
 *                            the request stream; isLast once, at the end
 *   onAbort()                the client went away before the end
 * The intake's controls, { uws, pause(), resume(), close(), holdClose? }: the uWS response
 * under ultimate-express (else null), whose answer a refusal holds (lib/linger.js); uWS's
 * res.pause()/resume() (uWS stops reading the socket, TCP slows the sender), or the
 * request stream's, for a consumer that parses as it goes (multipart) and must be able to
 * slow the client down; close() ends the connection (uWS's res.close(), or the socket's
 * destroy()). None touches a response uWS has already reported gone or that was answered
 * (uWS.js forbids any use of it then).
 */
function readChunks (source, req, res, bounds, onChunk, onAbort) {
  const intake = new Intake(onChunk, onAbort, bounds, res, null)
  intake.controls = wire(source, req, res, intake)
  return intake
}

/** The controls of a body read from uWS under ultimate-express. */
class UwsControls {
  constructor (req) {
    this.req = req
    this.uws = req._res
  }

  gone () {
    const res = this.req.res
    return res.aborted === true || res.finished === true
  }

  pause () { if (!this.gone()) this.uws.pause() }
  resume () { if (!this.gone()) this.uws.resume() }
  close () { if (!this.gone()) this.uws.close() }
}

// uWS's handler and the socket's listener, made where they reach the intake alone: made
// in wire(), they would hold its whole scope (the request, and through it req.files) for
// as long as uWS holds the handler, an epilogue after the answer included.
const chunkOf = (intake) => (chunk, isLast) => intake.chunk(chunk, isLast)
const abortOf = (intake) => () => intake.abort()

/**
 * Sends the source's chunks and abort to `intake` and returns its controls. uWS's handler
 * and the socket's listener reach the intake alone: they live until the body ends (the
 * listener until the response does: ultimate-express then emits 'close', which the
 * intake ignores after the body's end; once, so that nothing of the request stays
 * reachable from the socket afterwards).
 */
function wire (source, req, res, intake) {
  if (source === UWS) {
    req.bodyRead = true
    const controls = new UwsControls(req)
    if (controls.gone()) {
      process.nextTick(() => intake.abort())
      return controls
    }
    if (!(intake instanceof UltimateRead)) watchClose(res, intake)
    else if (intake.acc.native) intake.watch()
    controls.uws.onData(chunkOf(intake))
    return controls
  }
  const abort = () => intake.abort()
  let close
  let holdClose = noop
  if (source === ULTIMATE_STREAM) {
    req.bodyRead = true
    const socket = res && res.socket
    if (socket && typeof socket.once === 'function') socket.once('close', abort)
    close = () => { if (req.res.aborted !== true && req.res.finished !== true) req._res.close() }
  } else {
    close = () => { if (req.socket && !req.socket.destroyed) req.socket.destroy() }
    holdClose = () => {
      const socket = req.socket
      if (socket && !socket.destroyed) socket.destroySoon = shutDownWrites
    }
  }
  let ended = false
  req.on('data', (chunk) => intake.chunk(chunk, false))
  req.on('end', () => {
    ended = true
    intake.chunk(EMPTY, true)
  })
  req.on('error', abort)
  // A body whose end arrived is complete, whether or not the stream is an IncomingMessage
  // (a PassThrough in its place has no `complete`).
  if (source === NODE_STREAM) req.on('close', () => { if (!ended && !req.complete) abort() })
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
// later (lib/linger.js), as nginx's lingering close does.
function shutDownWrites () {
  if (this.writable) this.end()
}

module.exports = { sourceOf, isUltimate, asExpressAnswers, readInto, readChunks, discard, bodyGone, BODY_GONE }
