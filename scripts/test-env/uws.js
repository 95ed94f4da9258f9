'use strict'
// Preloaded (NODE_OPTIONS=--require) by scripts/run-tests.js when the uWS build under test
// is not the one installed as `uWebSockets.js`: every require of 'uWebSockets.js' (the
// tests', ultimate-express's, hyper-express's) then loads the package in
// UWS_BODY_UWS_DIR, so one install holds every build the matrix runs.
const Module = require('node:module')
const path = require('node:path')

const dir = process.env.UWS_BODY_UWS_DIR
if (dir) {
  const resolve = Module._resolveFilename
  Module._resolveFilename = function (request, ...rest) {
    if (request === 'uWebSockets.js') return resolve.call(this, dir, ...rest)
    if (request.startsWith('uWebSockets.js/')) return resolve.call(this, path.join(dir, request.slice('uWebSockets.js/'.length)), ...rest)
    return resolve.call(this, request, ...rest)
  }
}
