'use strict'
// What uWS hands a reader while it is paused, counted in the server's own process: the
// bytes onData delivers between a res.pause() and the res.resume() that ends it, at their
// most over one pause. On uWS 20.57 that has no bound uws-body sets (helpers/uws-build.js:
// uSockets reads on while each read fills its buffer, so a client that keeps the queue
// full is read for as long as it does); the S3 backpressure test bounds what the server
// holds beyond it. Every uWS app made after watchPauses() counts, under any framework.

const ROUTE_METHODS = ['get', 'post', 'put', 'del', 'patch', 'options', 'head', 'connect', 'trace', 'any']

let peak = 0

/** Wraps one response's onData, pause and resume so that they count. */
function watch (res) {
  const { onData, pause, resume } = res
  let paused = false
  let sincePause = 0
  res.pause = function () {
    if (!paused) { paused = true; sincePause = 0 }
    return pause.call(this)
  }
  res.resume = function () {
    paused = false
    return resume.call(this)
  }
  res.onData = function (handler) {
    return onData.call(this, (chunk, isLast) => {
      if (paused) {
        sincePause += chunk.byteLength
        if (sincePause > peak) peak = sincePause
      }
      return handler(chunk, isLast)
    })
  }
  return res
}

/** From now on every route of every uWS.App() made counts what it is handed while paused. */
function watchPauses (uWS) {
  const App = uWS.App
  uWS.App = function (...args) {
    const app = App.apply(this, args)
    for (const name of ROUTE_METHODS) {
      const route = app[name]
      if (typeof route !== 'function') continue
      app[name] = function (pattern, handler) {
        return route.call(this, pattern, (res, req) => handler(watch(res), req))
      }
    }
    return app
  }
}

module.exports = {
  watchPauses,
  /** The most bytes delivered during one pause since the last reset. */
  peakAfterPause: () => peak,
  reset: () => { peak = 0 }
}
