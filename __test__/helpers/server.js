'use strict'
// A real uWS server on 127.0.0.1 for the tests: POST /body answers "<length> <sha256>"
// or "<status> <type>" for a BodyError. Per-request options come from x-* headers so
// one server covers every case.
const crypto = require('node:crypto')
const uWS = require('uWebSockets.js')
const { readBody } = require('../..')

function startServer (handlers = {}) {
  const app = uWS.App()
  const seen = { requests: 0, errors: [], results: [] }
  app.post('/body', (res, req) => {
    seen.requests++
    const limit = req.getHeader('x-limit') || undefined
    const maxPreallocated = Number(req.getHeader('x-max-preallocated')) || undefined
    const inflate = req.getHeader('x-inflate') === 'false' ? false : undefined
    readBody(res, req, { limit: limit && /^\d+$/.test(limit) ? Number(limit) : limit, maxPreallocated, inflate }).then(
      (body) => {
        seen.results.push(body.length)
        if (res.aborted) return
        const digest = crypto.createHash('sha256').update(body).digest('hex')
        res.cork(() => res.end(`${body.length} ${digest}`))
      },
      (err) => {
        seen.errors.push(err)
        if (res.aborted) return
        res.cork(() => res.writeStatus(`${err.status} Error`).end(`${err.status} ${err.type}`))
      }
    )
  })
  for (const [path, handler] of Object.entries(handlers)) app.any(path, handler)
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (token) => {
      if (!token) return reject(new Error('uWS could not listen on 127.0.0.1'))
      const port = uWS.us_socket_local_port(token)
      resolve({ port, seen, close: () => uWS.us_listen_socket_close(token) })
    })
  })
}

module.exports = { startServer }
