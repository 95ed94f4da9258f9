'use strict'
// The end-to-end bench's server, one process per contender (argv[2]), so that each one's
// garbage is collected in a heap of its own:
//   a     copy+concat, POST /raw
//   b     JS preallocation, POST /raw
//   c     uws-body's BodyAccumulator, POST /raw
//   d     a ceiling that only counts bytes, POST /raw
//   seed  the seed's reader (bench/seed.js), POST /raw /json /text /urlencoded
//   uws   uws-body's readBody (/raw) and readText (+ JSON.parse, querystring.parse),
//         POST /raw /json /text /urlencoded
// Each answers with the body's length or key count (bench/answer.js). GET /reset and GET
// /stats measure this process's CPU time, V8's collections and its RSS peak.
require('./tune')
const querystring = require('node:querystring')
const { PerformanceObserver, constants: gcKinds } = require('node:perf_hooks')
const uWS = require('uWebSockets.js')
const { readBody, readText, answerError } = require('..')
const { copyConcat, jsPrealloc, uwsBody } = require('./contenders')
const { seedReader, PARSE } = require('./seed')
const { summary } = require('./answer')
const { memory, resetPeak } = require('./rss')

const kind = process.argv[2]
const LIMIT = 128 * 1024 * 1024
// The limit of the readers that parse: bench/express-server.js's.
const PARSER_LIMIT = 64 * 1024 * 1024
let cpu = process.cpuUsage()
let requests = 0
const gc = { scavenges: 0, markCompacts: 0 }
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail.kind === gcKinds.NODE_PERFORMANCE_GC_MINOR) gc.scavenges++
    else if (e.detail.kind === gcKinds.NODE_PERFORMANCE_GC_MAJOR) gc.markCompacts++
  }
}).observe({ entryTypes: ['gc'] })

function route (make) {
  return (res, req) => {
    const cl = req.getHeader('content-length')
    const reader = make(cl === '' ? -1 : Number(cl), LIMIT)
    res.onAborted(() => { res.aborted = true })
    res.onData((ab, isLast) => {
      reader.push(ab)
      if (isLast) {
        const body = reader.finish()
        requests++
        if (!res.aborted) res.cork(() => res.end(String(body.length)))
      }
    })
  }
}

function countOnly () {
  let n = 0
  return { push (ab) { n += ab.byteLength }, finish () { return { length: n } } }
}

/** A refusal by the seed's reader: its status, and the connection closed (the rest of the body unread). */
function refuse (res, err) {
  if (!res.aborted) res.cork(() => res.writeStatus(String(err.status || 400)).end(String(err.message), true))
}

function seedRoute (type) {
  return (res, req) => {
    const cl = req.getHeader('content-length')
    res.onAborted(() => { res.aborted = true })
    let reader
    try {
      reader = seedReader(cl === '' ? -1 : Number(cl), req.getHeader('content-encoding'), PARSER_LIMIT)
    } catch (err) {
      return refuse(res, err)
    }
    let failed = false
    res.onData((ab, isLast) => {
      if (failed) return
      let body
      try {
        reader.push(ab)
        if (!isLast) return
        body = PARSE[type](reader.finish())
      } catch (err) {
        failed = true
        return refuse(res, err)
      }
      requests++
      if (!res.aborted) res.cork(() => res.end(summary(body)))
    })
  }
}

const OPTIONS = { limit: PARSER_LIMIT }
const UWS = {
  raw: (res, req) => readBody(res, req, OPTIONS),
  json: (res, req) => readText(res, req, OPTIONS).then(JSON.parse),
  text: (res, req) => readText(res, req, OPTIONS),
  urlencoded: (res, req) => readText(res, req, OPTIONS).then(querystring.parse)
}

function uwsRoute (type) {
  return (res, req) => {
    UWS[type](res, req).then((body) => {
      requests++
      if (!res.aborted) res.cork(() => res.end(summary(body)))
    }, (err) => answerError(res, err))
  }
}

const ROUTES = {
  a: { raw: route(copyConcat) },
  b: { raw: route(jsPrealloc) },
  c: { raw: route(uwsBody) },
  d: { raw: route(countOnly) },
  seed: Object.fromEntries(Object.keys(PARSE).map((type) => [type, seedRoute(type)])),
  uws: Object.fromEntries(Object.keys(UWS).map((type) => [type, uwsRoute(type)]))
}
if (!ROUTES[kind]) throw new Error(`bench/server.js: no contender ${JSON.stringify(kind)} (${Object.keys(ROUTES).join(', ')})`)

const app = uWS.App()
for (const [type, handler] of Object.entries(ROUTES[kind])) app.post(`/${type}`, handler)
app
  .get('/reset', (res) => {
    cpu = process.cpuUsage()
    requests = 0
    gc.scavenges = gc.markCompacts = 0
    resetPeak()
    res.end('ok')
  })
  .get('/stats', (res) => {
    const used = process.cpuUsage(cpu)
    res.end(JSON.stringify({ cpuMicros: used.user + used.system, requests, gc, ...memory() }))
  })
  .listen('127.0.0.1', 0, (token) => {
    if (!token) process.exit(1)
    process.send({ port: uWS.us_socket_local_port(token) })
  })
