'use strict'
// The Express bench's server, one process per contender (argv[2]):
//   builtin  ultimate-express with its own parsers (express.json() etc.)
//   uws      ultimate-express with uws-body's parsers
//   express  Express 5 with body-parser (node:http)
//   floor    ultimate-express whose middleware only counts the body's bytes (from uWS's
//            onData, the cheapest way uEx lets a handler go on after the body) and parses
//            nothing: what the framework costs a request without any body reader
// POST /raw /json /text /urlencoded parse the body and answer with a short summary;
// GET /reset and /stats measure this process's CPU time.
require('./tune')
const kind = process.argv[2]
const uwsBody = require('..')

const app = kind === 'express' ? require('express')() : require('ultimate-express')()
const parsers = kind === 'builtin'
  ? require('ultimate-express')
  : kind === 'uws' ? uwsBody : kind === 'floor' ? { raw: countOnly, json: countOnly, text: countOnly, urlencoded: countOnly } : require('body-parser')

/** The floor's "parser": counts the bytes uWS hands over, then goes on with an empty body. */
function countOnly () {
  const EMPTY = {}
  return (req, res, next) => {
    let n = 0
    req._res.onData((chunk, isLast) => {
      n += chunk.byteLength
      if (isLast) {
        req.body = EMPTY
        req.bodyLength = n
        next()
      }
    })
  }
}

let cpu = process.cpuUsage()
let requests = 0
const done = (req, res) => {
  requests++
  const b = req.body
  res.send(Buffer.isBuffer(b) || typeof b === 'string' ? String(b.length) : String(Object.keys(b).length))
}
const LIMIT = '64mb'
app.post('/raw', parsers.raw({ limit: LIMIT }), done)
app.post('/json', parsers.json({ limit: LIMIT }), done)
app.post('/text', parsers.text({ limit: LIMIT }), done)
app.post('/urlencoded', parsers.urlencoded({ extended: false, limit: LIMIT }), done)
app.get('/reset', (req, res) => { cpu = process.cpuUsage(); requests = 0; res.send('ok') })
app.get('/stats', (req, res) => {
  const used = process.cpuUsage(cpu)
  res.send(JSON.stringify({ cpuMicros: used.user + used.system, requests }))
})
app.use((err, req, res, next) => { res.status(500).send(String(err && err.message)) })

if (kind === 'express') {
  const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
} else {
  app.listen(0, '127.0.0.1', () => process.send({ port: app.port }))
}
