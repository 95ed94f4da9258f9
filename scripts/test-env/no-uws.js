'use strict'
// Preloaded (--require) where uWebSockets.js has no native binary that loads (Node 22+ for
// the uWS build the tests use, musl, Windows on arm64). That build then falls back to a
// slow JS imitation of uWS with a warning; a test passing against the imitation would prove
// nothing, so requiring uWS fails instead.
const Module = require('node:module')

const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (request === 'uWebSockets.js' || request.startsWith('uWebSockets.js/')) {
    throw new Error(`uWebSockets.js is disabled in this run: its native build does not load on Node ${process.version} (${process.platform}-${process.arch})`)
  }
  return resolve.call(this, request, ...rest)
}
