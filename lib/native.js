'use strict'
// Loads the addon built by scripts/build.js (npm install runs it), or the file named by
// UWS_BODY_NATIVE_PATH (asan/run.sh points it at the instrumented build).
const path = require('node:path')

const file = process.env.UWS_BODY_NATIVE_PATH || path.join(__dirname, '..', 'uws-body.node')
let native
try {
  native = require(file)
} catch (err) {
  err.message =
    `uws-body: cannot load the native addon ${file}: ${err.message}. ` +
    'It is built from source by `npm install` (which needs Rust); run `npm run build` to build it again.'
  throw err
}
module.exports = native
