'use strict'
// The end-to-end bench's server: POST /a, /b, /c, /d read the body with contenders
// (a) copy+concat, (b) JS preallocation, (c) uws-body, (d) a ceiling that
// only counts bytes. GET /reset and GET /stats measure this process's CPU time.
require('./tune')
const uWS = require('uWebSockets.js')
const { copyConcat, jsPrealloc, uwsBody } = require('./contenders')

const LIMIT = 128 * 1024 * 1024
let cpu = process.cpuUsage()
let requests = 0

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

uWS.App()
  .post('/a', route(copyConcat))
  .post('/b', route(jsPrealloc))
  .post('/c', route(uwsBody))
  .post('/d', route(countOnly))
  .get('/reset', (res) => { cpu = process.cpuUsage(); requests = 0; res.end('ok') })
  .get('/stats', (res) => {
    const used = process.cpuUsage(cpu)
    res.end(JSON.stringify({ cpuMicros: used.user + used.system, requests }))
  })
  .listen('127.0.0.1', 0, (token) => {
    if (!token) process.exit(1)
    process.send({ port: uWS.us_socket_local_port(token) })
  })
