'use strict'
// Streams each upload to a file in the system's temporary directory, with backpressure:
// a slow disk slows the client down (res.pause()), never the server's memory.
//   node examples/stream-to-file.js
//   curl -T big.iso http://127.0.0.1:3000/upload       (PUT)
//   curl --data-binary @big.iso http://127.0.0.1:3000/upload
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { pipeline } = require('node:stream/promises')
const uWS = require('uWebSockets.js')
const { bodyStream, answerError } = require('..')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-'))
const port = Number(process.env.PORT ?? 3000)

uWS.App().any('/upload', (res, req) => {
  const file = path.join(dir, crypto.randomUUID())
  // Up to 10 GiB, decoded (gzip, br, zstd, deflate), and done within an hour.
  const body = bodyStream(res, req, { limit: '10gb', timeout: 3600_000 })
  pipeline(body, fs.createWriteStream(file)).then(
    () => {
      if (!res.aborted) res.cork(() => res.end(`stored ${fs.statSync(file).size} bytes\n`))
    },
    (err) => {
      fs.rm(file, { force: true }, () => {})
      // A client's error as its status and code; a disk error as a 500 that names no path.
      answerError(res, err)
    }
  )
}).post('/hash', (res, req) => {
  // for await: the body piece by piece, here into a hash.
  const hash = crypto.createHash('sha256')
  const body = bodyStream(res, req)
  ;(async () => {
    for await (const chunk of body) hash.update(chunk)
    if (!res.aborted) res.cork(() => res.end(`${hash.digest('hex')}\n`))
  })().catch((err) => answerError(res, err))
}).listen('127.0.0.1', port, (token) => {
  if (token) console.log(`uploads go to ${dir}; try: curl -T somefile http://127.0.0.1:${uWS.us_socket_local_port(token)}/upload`)
})
