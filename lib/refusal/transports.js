'use strict'
// Where a Refusal acts: bare uWS's response, ultimate-express's uWS response under its
// own, or node:http through the middleware's source (lib/frameworks/source.js).

/**
 * Runs fn on `res`; false if `res` is gone: uWS.js throws on every use of a response
 * that was aborted or answered.
 */
function use (res, fn) {
  if (res.aborted === true) return false
  try {
    fn()
    return true
  } catch {
    return false
  }
}

/** A bare uWS response as a Refusal's transport. */
function uwsTransport (res) {
  return {
    uws: res,
    pause () { use(res, () => res.pause()) },
    close () { use(res, () => res.close()) }
  }
}

function transportOf (res, controls) {
  if (controls === null) return uwsTransport(res)
  // On uWS the Refusal pauses and closes the response itself: the framework's own checks
  // (ultimate-express's res.finished) say it is answered once its answer is held.
  if (controls.uws) return uwsTransport(controls.uws)
  return { uws: null, pause: () => controls.pause(), close: () => controls.close(), closing: () => closingOnNode(res, controls) }
}

// Past the bound on node:http: the client is told the connection ends with this answer,
// and its close is a FIN only; the Refusal's timer closes it GRACE_MS later, so a
// framework that waits for the request to end before answering (Express's finalhandler),
// or an application that never answers, cannot hold it longer.
function closingOnNode (res, controls) {
  if (typeof controls.holdClose === 'function') controls.holdClose()
  if (res !== null && typeof res === 'object' && !res.headersSent && typeof res.setHeader === 'function') {
    try {
      res.setHeader('Connection', 'close')
    } catch {}
  }
}

module.exports = { use, transportOf }
