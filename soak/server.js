'use strict'
// The soak's server: a real uWS server on 127.0.0.1 reading every POST with readBody.
// It answers "<length> <crc32>" or "<status> <type>", samples its peak RSS and peak
// stats().bytesInUse, and reports them (after a GC) at GET /report.
const uWS = require('uWebSockets.js')
const zlib = require('node:zlib')
const { readBody, stats } = require('..')

let peakRss = process.memoryUsage().rss
let peakInUse = 0
const baseRss = peakRss
const counts = { requests: 0, ok: 0, errors: {}, aborted: 0 }

setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss)
  peakInUse = Math.max(peakInUse, stats().bytesInUse)
}, 20).unref()

uWS.App()
  .post('/body', (res, req) => {
    counts.requests++
    const limit = req.getHeader('x-limit') || '8mb'
    readBody(res, req, { limit, onAborted: () => { counts.aborted++ } }).then(
      (body) => {
        counts.ok++
        if (!res.aborted) res.cork(() => res.end(`${body.length} ${zlib.crc32(body)}`))
      },
      (err) => {
        if (err.type === 'request.aborted') return
        counts.errors[err.type] = (counts.errors[err.type] || 0) + 1
        if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} Error`).end(`${err.status} ${err.type}`))
      }
    )
  })
  .get('/report', (res) => {
    res.onAborted(() => {})
    // Let the aborts of the last connections land, then collect and read the counters.
    setTimeout(() => {
      for (let i = 0; i < 4; i++) global.gc()
      setTimeout(() => {
        global.gc()
        const s = stats()
        res.cork(() => res.end(JSON.stringify({
          ...counts,
          peakRss: peakRss - baseRss,
          peakInUse,
          inUseAfterGc: s.bytesInUse,
          pooled: s.bytesPooled,
          poolLimit: s.poolLimit
        })))
      }, 50)
    }, 300)
  })
  .listen('127.0.0.1', 0, (token) => {
    if (!token) process.exit(1)
    process.send({ port: uWS.us_socket_local_port(token) })
  })
