'use strict'
// Code that resumes a request once its body is read (next, verify, the error handler,
// readBody's onAborted) must run in the async context of the code that asked for the
// body, as with body-parser: the bytes arrive in uWS or socket callbacks that belong to
// no request, where an AsyncLocalStorage store set by the caller (als.run(store, next))
// is not visible. body-parser uses AsyncResource.bind, which registers a GC-tracked
// destroy hook per call; here the resource is destroyed by hand after its one call
// (docs/performance.md, row 'bindOnce').
const { AsyncResource } = require('node:async_hooks')

/** `fn`, to be called once, wrapped to run in the async context current now. */
function bindOnce (fn) {
  const resource = new AsyncResource('UWS_BODY', { requireManualDestroy: true })
  return function inCallerContext (a, b) {
    try {
      return resource.runInAsyncScope(fn, undefined, a, b)
    } finally {
      resource.emitDestroy()
    }
  }
}

module.exports = { bindOnce }
