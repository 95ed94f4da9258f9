'use strict'
// The server of soak/budget.js, in its own process: the memory budget under many slow
// uploads. Three apps on 127.0.0.1, every route with limit 8 MiB and answered with the
// body's "<length> <sha256>" or its error's { code } (with the error's headers):
//   bare uWS          /readBody (answerError), /bodyStream (hashed as it streams)
//   ultimate-express  /raw (uws-body's raw(), type '*/*')
//   Express           /raw (the same, on node:http; finalhandler-style headers)
// The bare app's GET /stats answers { rss, peakRss, stats(), after a GC when ?gc }.
// argv[2]: JSON { budget, poolLimit } (bytes; budget null for none, poolLimit unset for
// the default). /stats says gcExposed: whether this process could force a collection.
const crypto = require('node:crypto')
const uWS = require('uWebSockets.js')
const express = require('express')
const ultimate = require('ultimate-express')
const uwsBody = require('../..')

const config = JSON.parse(process.argv[2] || '{}')
uwsBody.setMemoryBudget(config.budget === null ? Infinity : config.budget)
if (config.poolLimit !== undefined) uwsBody.setPoolLimit(config.poolLimit)
const LIMIT = '8mb'
const digest = (buf) => `${buf.length} ${crypto.createHash('sha256').update(buf).digest('hex')}`

let peakRss = process.memoryUsage().rss
let peakInUse = 0
let peakReserved = 0
setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss)
  const s = uwsBody.stats()
  peakInUse = Math.max(peakInUse, s.bytesInUse)
  peakReserved = Math.max(peakReserved, s.budgetReserved)
}, 10).unref()

function bare () {
  const app = uWS.App()
  app.post('/readBody', (res, req) => {
    uwsBody.readBody(res, req, { limit: LIMIT }).then(
      (body) => { if (!res.aborted) res.cork(() => res.end(digest(body))) },
      (err) => uwsBody.answerError(res, err)
    )
  })
  app.post('/bodyStream', (res, req) => {
    const hash = crypto.createHash('sha256')
    let length = 0
    uwsBody.bodyStream(res, req, { limit: LIMIT })
      .on('data', (d) => { hash.update(d); length += d.length })
      .on('end', () => { if (!res.aborted) res.cork(() => res.end(`${length} ${hash.digest('hex')}`)) })
      .on('error', (err) => uwsBody.answerError(res, err))
  })
  app.get('/stats', (res, req) => {
    const gc = req.getQuery('gc') !== undefined && req.getQuery('gc') !== ''
    res.onAborted(() => { res.aborted = true })
    const answer = () => {
      if (res.aborted) return
      const s = uwsBody.stats()
      res.cork(() => res.end(JSON.stringify({ rss: process.memoryUsage().rss, peakRss, peakInUse, peakReserved, gcExposed: typeof global.gc === 'function', ...s, memoryBudget: String(s.memoryBudget) })))
    }
    if (!gc) return answer()
    // Let the last aborts land, collect, let the finalizers run, then read.
    setTimeout(() => {
      for (let i = 0; i < 4; i++) global.gc()
      setTimeout(() => { global.gc(); setTimeout(answer, 50) }, 50)
    }, 300)
  })
  return app
}

function framework (make) {
  const app = make()
  app.set('env', 'production')
  app.post('/raw', uwsBody.raw({ limit: LIMIT, type: '*/*' }), (req, res) => res.send(digest(req.body)))
  app.use((err, req, res, next) => {
    if (res.headersSent || err.code === 'ECONNABORTED') return
    res.status(err.status || 500).set(err.headers || {}).json({ code: err.code })
  })
  return app
}

async function main () {
  const ports = {}
  ports.uws = await new Promise((resolve, reject) => bare().listen('127.0.0.1', 0, (token) => token ? resolve(uWS.us_socket_local_port(token)) : reject(new Error('listen'))))
  const ue = framework(ultimate)
  await new Promise((resolve) => ue.listen(0, '127.0.0.1', resolve))
  ports.ultimate = ue.port
  const ex = framework(express)
  ports.express = await new Promise((resolve) => {
    const s = ex.listen(0, '127.0.0.1', () => resolve(s.address().port))
  })
  process.send(ports)
}

main()
