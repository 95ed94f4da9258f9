'use strict'
// Preloaded (--require) into a documentation snippet run by __test__/docs.test.js: the
// snippet runs as written, but a server it starts on port 3000 gets a free port instead
// (several runs, other servers), and that port is told to the test (process.send).
// Covers uWS's App().listen (ultimate-express listens through it) and node:http's.
const Module = require('node:module')
const net = require('node:net')

const PORT = 3000
const report = (port) => { if (process.send) process.send({ port }) }

const load = Module._load
Module._load = function (request, ...rest) {
  const exports = load.call(this, request, ...rest)
  if (request !== 'uWebSockets.js' || exports.__snippetEnv) return exports
  const wrapped = Object.create(exports)
  for (const make of ['App', 'SSLApp']) {
    if (typeof exports[make] !== 'function') continue
    wrapped[make] = (...args) => {
      const app = exports[make](...args)
      const listen = app.listen.bind(app)
      app.listen = (...a) => {
        const cb = typeof a[a.length - 1] === 'function' ? a.pop() : () => {}
        const portAt = typeof a[0] === 'number' ? 0 : 1
        if (a[portAt] === PORT) a[portAt] = 0
        return listen(...a, (token) => {
          if (token) report(exports.us_socket_local_port(token))
          cb(token)
        })
      }
      return app
    }
  }
  wrapped.__snippetEnv = true
  return wrapped
}

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if (args[0] === PORT) args[0] = 0
  else if (args[0] && args[0].port === PORT) args[0] = { ...args[0], port: 0 }
  this.once('listening', () => report(this.address().port))
  return listen.apply(this, args)
}
