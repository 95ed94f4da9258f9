'use strict'
// A body read from the request stream: plain Express on node:http, or ultimate-express
// after data began flowing into the stream (e.g. behind an async middleware). This path copies each byte twice: the framework already copied every
// chunk into a stream Buffer before we see it; the second copy (into the body) is ours.
const { watchClose } = require('./ultimate')

const EMPTY = new Uint8Array(0)

/**
 * Sends the request stream's chunks and end, and its abort, to `intake`; returns its
 * controls. `ultimate`: ultimate-express's request after data began flowing into it,
 * whose abort comes through res.socket's 'close' (watched as ./ultimate.js does) and whose
 * connection is uWS's.
 */
function wireStream (ultimate, req, res, intake) {
  const abort = () => intake.abort()
  let close
  let holdClose = noop
  if (ultimate) {
    watchClose(res, intake)
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
  if (!ultimate) req.on('close', () => { if (!ended && !req.complete) abort() })
  return {
    uws: ultimate ? req._res : null,
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
// later (lib/refusal/), as nginx's lingering close does.
function shutDownWrites () {
  if (this.writable) this.end()
}

module.exports = { wireStream }
