'use strict'
// The Express bench's server, one process per contender (argv[2]):
//   builtin  ultimate-express with its own parsers (express.json() etc.)
//   uws      ultimate-express with uws-body's parsers
//   express  Express 5 with body-parser (node:http)
//   floor    ultimate-express whose middleware only counts the body's bytes (from uWS's
//            onData, the cheapest way uEx lets a handler go on after the body) and parses
//            nothing: what the framework costs a request without any body reader
//   memcpy   the floor plus one memcpy of each chunk into memory faulted in but out of
//            cache (a 128 MiB ring), handed on as a view of it: the least a raw body
//            costs, with nothing for V8 to collect
//   copy     the floor plus the plainest JS reader, Buffer.allocUnsafe(content-length) and
//            set(): what a kept Buffer costs a server without uws-body
//   seed     ultimate-express with the seed's reader (bench/seed.js, ultimate-express PR
//            #369) as one middleware per route: the reader uws-body has to beat
// GET /stats also counts V8's collections since /reset (perf_hooks) and gives the
// process's RSS and its peak since /reset (bench/rss.js).
// POST /raw /json /text /urlencoded parse the body and answer with a short summary;
// GET /reset and /stats measure this process's CPU time.
require('./tune')
const kind = process.argv[2]
const uwsBody = require('..')
const bytes = require('bytes')
const { seedReader, PARSE } = require('./seed')
const { memory, resetPeak } = require('./rss')

const app = kind === 'express' ? require('express')() : require('ultimate-express')()
const COUNTING = { floor: countOnly, memcpy: memcpyOnly, copy: copyOnly }
const counting = (reader) => ({ raw: reader, json: reader, text: reader, urlencoded: reader })
const SEED = { raw: seed('raw', 'application/octet-stream'), json: seed('json', 'application/json'), text: seed('text', 'text/plain'), urlencoded: seed('urlencoded', 'application/x-www-form-urlencoded') }
const parsers = kind === 'builtin'
  ? require('ultimate-express')
  : kind === 'uws' ? uwsBody : kind === 'seed' ? SEED : COUNTING[kind] ? counting(COUNTING[kind]) : require('body-parser')

/**
 * The seed's parser for one route type: the content-type check of ultimate-express's
 * built-ins (their fast path for a type without a wildcard), then the seed's reader on
 * uWS's onData, as the count-only floor reads it.
 */
function seed (route, type) {
  return ({ limit }) => {
    const max = bytes.parse(limit)
    return (req, res, next) => {
      const given = req.headers['content-type']
      const semicolon = given === undefined ? -1 : given.indexOf(';')
      if ((semicolon < 0 ? given : given.slice(0, semicolon)) !== type) {
        req.body = {}
        return next()
      }
      const length = req.headers['content-length']
      let reader
      try {
        reader = seedReader(length === undefined ? -1 : Number(length), req.headers['content-encoding'], max)
      } catch (err) {
        return next(err)
      }
      let failed = false
      req._res.onData((chunk, isLast) => {
        if (failed) return
        try {
          reader.push(chunk)
          if (isLast) req.body = PARSE[route](reader.finish())
        } catch (err) {
          failed = true
          if (!err.status) err.status = 400
          return next(err)
        }
        if (isLast) next()
      })
    }
  }
}

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

// The memcpy floor's ring: every body lands where the last one 128 MiB ago did.
const RING = kind === 'memcpy' ? Buffer.alloc(128 * 1024 * 1024) : null
let ringAt = 0

function memcpyOnly () {
  return (req, res, next) => {
    let at = -1
    let n = 0
    req._res.onData((chunk, isLast) => {
      if (at < 0) {
        const declared = Number(req.headers['content-length']) || RING.length / 2
        if (ringAt + declared > RING.length) ringAt = 0
        at = ringAt
        ringAt += declared
      }
      RING.set(new Uint8Array(chunk), at + n)
      n += chunk.byteLength
      if (isLast) {
        req.body = RING.subarray(at, at + n)
        next()
      }
    })
  }
}

function copyOnly () {
  return (req, res, next) => {
    const body = Buffer.allocUnsafe(Number(req.headers['content-length']))
    let n = 0
    req._res.onData((chunk, isLast) => {
      body.set(new Uint8Array(chunk), n)
      n += chunk.byteLength
      if (isLast) {
        req.body = body
        next()
      }
    })
  }
}

const { PerformanceObserver, constants: gcKinds } = require('node:perf_hooks')
const gc = { scavenges: 0, markCompacts: 0, ms: 0 }
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail.kind === gcKinds.NODE_PERFORMANCE_GC_MINOR) gc.scavenges++
    else if (e.detail.kind === gcKinds.NODE_PERFORMANCE_GC_MAJOR) gc.markCompacts++
    gc.ms += e.duration
  }
}).observe({ entryTypes: ['gc'] })

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
app.get('/reset', (req, res) => {
  cpu = process.cpuUsage()
  requests = 0
  gc.scavenges = gc.markCompacts = gc.ms = 0
  resetPeak()
  res.send('ok')
})
app.get('/stats', (req, res) => {
  const used = process.cpuUsage(cpu)
  res.send(JSON.stringify({ cpuMicros: used.user + used.system, requests, gc, ...memory() }))
})
app.use((err, req, res, next) => { res.status((err && err.status) || 500).send(String(err && err.message)) })

if (kind === 'express') {
  const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
} else {
  app.listen(0, '127.0.0.1', () => process.send({ port: app.port }))
}
