'use strict'
// A uWS server that answers every POST with the body's length and sha256.
// Try: curl --data-binary @somefile http://127.0.0.1:3000/
const crypto = require('node:crypto')
const uWS = require('uWebSockets.js')
const { readBody } = require('..')

const port = Number(process.env.PORT) || 3000

uWS.App()
  .post('/*', (res, req) => {
    readBody(res, req, { limit: '64mb' }).then(
      (body) => {
        if (res.aborted) return
        const sha256 = crypto.createHash('sha256').update(body).digest('hex')
        res.cork(() => res.writeHeader('content-type', 'application/json')
          .end(JSON.stringify({ length: body.length, sha256 })))
      },
      (err) => {
        if (res.aborted) return // the client is gone; nothing to answer
        res.cork(() => res.writeStatus(`${err.status} ${err.message}`).end(`${err.type}\n`))
      }
    )
  })
  .listen('127.0.0.1', port, (token) => {
    if (!token) throw new Error(`cannot listen on 127.0.0.1:${port}`)
    console.log(`uws-body example on http://127.0.0.1:${port}/ (POST a body)`)
  })
