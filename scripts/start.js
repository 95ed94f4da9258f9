'use strict'
// npm start: examples/server.js on the uWS build that loads on this Node and libc
// (./test-env/loadable-uws.js): uWS 20.57's binaries need glibc 2.38, the 20.30 fork runs
// on older ones, so `node examples/server.js` alone fails on those.
const { useLoadableUws } = require('./test-env/loadable-uws')

console.log(`uws-body: Node ${process.version}, ${useLoadableUws()}`)
require('../examples/server.js')
