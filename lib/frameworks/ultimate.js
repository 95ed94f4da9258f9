'use strict'
// Reading a body straight from uWS under ultimate-express: each chunk goes from uWS's
// ArrayBuffer into the body's buffer, one copy. It uses these ultimate-express 2.x
// internals, checked on every request (lib/frameworks/source.js; a mismatch is a clear
// error, never a guess):
//   req._res          the uWS HttpResponse. Its onData handler is replaced by ours;
//                     ultimate-express's own handler (which feeds the req stream) is then
//                     never called, as with its own built-in parsers.
//   req.receivedData  true once a chunk went into the req stream: from then on the body
//                     is read from the stream instead (lib/frameworks/node-stream.js).
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
const { BufferedRead } = require('../body/buffered-read')

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

/**
 * Tells `intake` when ultimate-express's response closes (its Socket's 'close'). It also
 * closes once ultimate-express has written its answer, which a refusal may be holding
 * while the client still sends (lib/refusal/held-answer.js): such a close, the response not
 * aborted, is not the client going, and the next one is waited for.
 */
function watchClose (res, intake) {
  const socket = res && res.socket
  if (socket && typeof socket.once === 'function') socket.once('close', closeOf(res, socket, intake))
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

// uWS's handler and the socket's listener, made where they reach the intake (and the
// response) alone: made
// in wireUws(), they would hold its whole scope (the request, and through it req.files) for
// as long as uWS holds the handler, an epilogue after the answer included.
const chunkOf = (intake) => (chunk, isLast) => intake.chunk(chunk, isLast)
const closeOf = (res, socket, intake) => function closed () {
  if (intake.refusal !== null && res.aborted !== true) socket.once('close', closed)
  else intake.abort()
}

/** Sends uWS's chunks, and the abort its Socket reports, to `intake`; returns its controls. */
function wireUws (req, res, intake) {
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

module.exports = { UltimateRead, wireUws, watchClose }
