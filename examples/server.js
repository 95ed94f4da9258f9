'use strict'
// A uWS server that answers every POST with the body's length and sha256.
// Try: curl --data-binary @somefile http://127.0.0.1:3000/
const crypto = require('node:crypto')
const uWS = require('uWebSockets.js')
const { readBody, answerError } = require('..')

const port = Number(process.env.PORT ?? 3000)

uWS.App()
  .post('/*', (res, req) => {
    readBody(res, req, { limit: '64mb' }).then(
      (body) => {
        if (res.aborted) return
        const sha256 = crypto.createHash('sha256').update(body).digest('hex')
        res.cork(() => res.writeHeader('content-type', 'application/json')
          .end(JSON.stringify({ length: body.length, sha256 })))
      },
      // 413 { status, code, message } for a body over the limit, and so on; nothing once
      // the client is gone.
      (err) => answerError(res, err)
    )
  })
  .listen('127.0.0.1', port, (token) => {
    if (!token) throw new Error(`cannot listen on 127.0.0.1:${port}`)
    console.log(`uws-body example on http://127.0.0.1:${uWS.us_socket_local_port(token)}/ (POST a body)`)
  })
