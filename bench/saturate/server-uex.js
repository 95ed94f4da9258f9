'use strict'
// bench/saturate.js's ultimate-express server, one process per contender (argv[2]):
//   builtin  ultimate-express's own express.json() / raw() / urlencoded()
//   uws      uws-body's json() / raw() / urlencoded()
//   count    a middleware that only counts the body's bytes (no reader at all)
//   seed     ultimate-express PR #369's reader as a middleware per route (./seed-uex.js lean)
//   seed-parser  the built-ins with only their reading replaced by PR #369's (./seed-uex.js parser)
// POST /json, /urlencoded and /raw answer the length of field s, or of the body, as
// ./post.lua checks it; count answers the same number from the byte count. Every parser
// gets the same options. It tells its parent { port, ... } once it listens.
const path = require('node:path')
const express = require('ultimate-express')

const kind = process.argv[2]
// Bounded by the bench: gone with it, even if it is killed before it can end this.
process.on('disconnect', () => process.exit(0))
const LIMIT = '64mb'

/** The reader-free ceiling: uWS's onData as the built-ins take it, else the request stream. */
function countOnly () {
  return (req, res, next) => {
    let n = 0
    const done = () => {
      req.bodyLength = n
      next()
    }
    if (!req.receivedData) {
      req._res.onData((ab, isLast) => {
        n += ab.byteLength
        if (isLast) done()
      })
    } else {
      req.on('data', (c) => { n += c.length })
      req.on('end', done)
    }
  }
}

const PARSERS = {
  builtin: () => express,
  uws: () => require('../..'),
  count: () => ({ json: countOnly, urlencoded: countOnly, raw: countOnly }),
  seed: () => require('./seed-uex').lean(),
  'seed-parser': () => require('./seed-uex').parser()
}
if (!PARSERS[kind]) throw new Error(`bench/saturate/server-uex.js: no contender ${JSON.stringify(kind)} (${Object.keys(PARSERS).join(', ')})`)
const parsers = PARSERS[kind]()
const counting = kind === 'count'

// The answer post.lua expects: the length of s ('{"s":"' + s + '"}' or 's=' + s), or the body's.
const field = (offset) => (req, res) => {
  if (counting) return res.send(String(req.bodyLength - offset))
  const s = req.body && req.body.s
  res.send(typeof s === 'string' ? String(s.length) : 'NOFIELD')
}

const app = express()
app.post('/json', parsers.json({ limit: LIMIT }), field(8))
app.post('/urlencoded', parsers.urlencoded({ extended: false, limit: LIMIT }), field(2))
app.post('/raw', parsers.raw({ limit: LIMIT }), (req, res) => {
  if (counting) return res.send(String(req.bodyLength))
  res.send(Buffer.isBuffer(req.body) ? String(req.body.length) : 'NOTBUFFER')
})
app.use((err, req, res, next) => {
  res.status(err.status || err.statusCode || 500).send('ERR ' + (err.code || err.type || err.message))
})

const version = (name) => require(path.join(path.dirname(require.resolve(name)), '..', 'package.json')).version
// ultimate-express throws if it cannot listen; once it does, app.port is the port.
app.listen(0, '127.0.0.1', () => {
  process.send({
    port: app.port,
    framework: `ultimate-express ${version('ultimate-express')}`,
    forms: { json: `${kind}: json()`, urlencoded: `${kind}: urlencoded()`, raw: `${kind}: raw()` }
  })
})
