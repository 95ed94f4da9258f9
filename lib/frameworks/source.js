'use strict'
// Where an Express request's body bytes come from, checked once per request: straight
// from uWS under ultimate-express (lib/frameworks/ultimate.js), or from the request stream
// (lib/frameworks/node-stream.js); and the readers the drop-ins share over either.
//
// A body refused before its end reaches next(err) only once its rest has been dropped,
// or a bound passed (lib/body/intake.js, lib/refusal/): the framework's answer then reaches a
// client that was still sending.
const { PassThrough } = require('node:stream')
const { Body } = require('../body/accumulator')
const { requestDigests } = require('../body/digest')
const errors = require('../native/errors')
const { remainingOf } = require('../body/headers')
const { Intake } = require('../body/intake')
const { BufferedRead } = require('../body/buffered-read')
const { UltimateRead, wireUws } = require('./ultimate')
const { wireStream } = require('./node-stream')

const UWS = 1 // ultimate-express, nothing read yet: straight from uWS
const ULTIMATE_STREAM = 2 // ultimate-express, data already flowing into req
const NODE_STREAM = 3 // node:http (plain Express)
const BODY_GONE = 4 // ultimate-express did not read this method's body, and uWS dropped it

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
  // The methods whose bodies ultimate-express 2.x reads without being told to (compared,
  // not looked up: a Set hashes each request's new string).
  const method = req.method
  if (method === 'POST' || method === 'PUT' || method === 'PATCH') return true
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
 * Reads the whole body into a Body (lib/body/accumulator.js) and calls owner.bodyRead(error, acc)
 * once: error null with every byte pushed (the owner then finishes it as a Buffer or a
 * string).
 * options: the parser's (lib/frameworks/body-parser/options.js); asText: the body will be read as UTF-8
 * text; refusal: an error to refuse the body with if the Body refuses nothing by its headers
 * (or null). A body refused before its end calls bodyRead(error) once its rest is dropped
 * (see above).
 */
function readInto (source, req, res, options, asText, owner, refusal = null) {
  if (source === BODY_GONE) {
    req.bodyRead = true
    return owner.bodyRead(bodyGone(req.method), null)
  }
  const headers = req.headers
  // From uWS, a JS-tier body's Buffer and budget reservation are made with its first bytes:
  // its abort is watched only from then on (./ultimate.js), so one gone before them holds nothing.
  const acc = new Body(options.limit, options.maxPreallocated, options.inflate, headers['content-length'], headers['content-encoding'], asText,
    requestDigests(options.digest, headers), source === UWS)
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
  read.start(refusal)
}

/**
 * For a body refused before reading (charset, encoding): its bytes are dropped as they
 * come, and proceed() is called once they have been (or a bound passed, see above).
 */
function discard (source, req, res, bounds, proceed) {
  if (source === BODY_GONE) return proceed()
  readChunks(source, req, res, bounds, noop, noop).refuse(remainingOf(req.headers['content-length'], 0), null, proceed)
}

/**
 * Hands the body chunk by chunk, as it arrives, to the reader's handlers through an intake
 * (lib/body/intake.js), which sends it to the refusal instead once the reader refuses it:
 *   onChunk(chunk, isLast)   an ArrayBuffer from uWS (valid only during the call: uWS
 *                            takes it back when the handler returns) or a Buffer from
 *                            the request stream; isLast once, at the end
 *   onAbort()                the client went away before the end
 * The intake's controls, { uws, pause(), resume(), close(), holdClose? }: the uWS response
 * under ultimate-express (else null), whose answer a refusal holds (lib/refusal/); uWS's
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

/**
 * The stream multer's `streamHandler(req, sink)` writes the body into (write and end, or
 * a pipe: `req.pipe(sink)` is multer's default; a request read already, as Cloud
 * Functions' `req.rawBody`, is fed with `sink.end(req.rawBody)`), read with readChunks as
 * sinkSource(source), with its backpressure. The request still owns the connection: its
 * abort is the body's, and a refusal closes its socket (uWS's, under ultimate-express).
 */
function handlerSink (req, source) {
  const sink = new PassThrough()
  // What the controls reach through the request (./node-stream.js), the request's.
  if (source === NODE_STREAM) {
    sink.socket = req.socket
  } else {
    sink.res = req.res
    sink._res = req._res
  }
  if (typeof req.on === 'function') {
    const gone = () => { if (!req.complete && !req.readableEnded) sink.destroy() }
    req.on('aborted', gone)
    req.on('close', gone)
    req.on('error', gone)
  }
  return sink
}

/** The source readChunks reads a handlerSink of a request from `source` as. */
const sinkSource = (source) => source === NODE_STREAM ? NODE_STREAM : ULTIMATE_STREAM

/**
 * Sends the source's chunks and abort to `intake` and returns its controls. uWS's handler
 * and the socket's listener reach the intake alone: they live until the body ends (the
 * listener until the response does: ultimate-express then emits 'close', which the
 * intake ignores after the body's end; once, so that nothing of the request stays
 * reachable from the socket afterwards).
 */
function wire (source, req, res, intake) {
  // ultimate-express's flag: its own parsers then leave this body alone.
  if (source !== NODE_STREAM) req.bodyRead = true
  if (source === UWS) return wireUws(req, res, intake)
  return wireStream(source === ULTIMATE_STREAM, req, res, intake)
}

function noop () {}

module.exports = { sourceOf, isUltimate, readInto, readChunks, handlerSink, sinkSource, discard, bodyGone, BODY_GONE }
