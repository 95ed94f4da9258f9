'use strict'
// hyper-express for the benches, on the uWS build this repository tests with. hyper-express
// 6.17 declares uWebSockets.js from GitHub (v20.51); package.json's `overrides` make npm
// install the aliased build instead (`"uWebSockets.js": "$uWebSockets.js"`), so its
// require('uWebSockets.js') is ours. A second copy would be a second uWS event loop
// integration in one process, so that is refused here rather than measured.
// 6.17.4 calls no method this build lacks: of the remote-address family it uses only
// getRemoteAddressAsText and getProxiedRemoteAddressAsText (for req.ip / req.proxy_ip),
// both present; getRemotePort and getProxiedRemotePort, which this build lacks, are never
// called, so nothing is shimmed.
const path = require('node:path')

const ours = require.resolve('uWebSockets.js')
const theirs = require.resolve('uWebSockets.js', { paths: [path.dirname(require.resolve('hyper-express'))] })
if (ours !== theirs) {
  throw new Error(`bench: hyper-express loads ${theirs}, not the aliased uWebSockets.js (${ours}): check package.json overrides`)
}

module.exports = require('hyper-express')
