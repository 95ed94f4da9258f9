'use strict'
// A reader's two forms from one definition: per call (readBody(res, req, options)) and
// compiled for a route (bodyReader(options), then read(res, req)). Both check `res`
// first and read the options as `compile` does; the compiled form does it once.
const { checkResponse } = require('./check')

/**
 * call: what argument errors name ('readBody(res, req)'); methods: what `res` must have
 * (./check.js READER_METHODS or PAUSABLE_METHODS);
 * compile(options): the frozen plan; read(res, req, plan): one request. Returns
 * { perCall, compiled }, named `name` and `compiledName` in stack traces.
 */
function readerForms (name, compiledName, call, methods, compile, read) {
  const perCall = function (res, req, options) {
    checkResponse(res, call, methods)
    return read(res, req, compile(options))
  }
  const compiled = function (options) {
    const plan = compile(options)
    return function readWithPlan (res, req) {
      checkResponse(res, call, methods)
      return read(res, req, plan)
    }
  }
  Object.defineProperty(perCall, 'name', { value: name })
  Object.defineProperty(compiled, 'name', { value: compiledName })
  return { perCall, compiled }
}

module.exports = { readerForms }
