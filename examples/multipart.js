'use strict'
// multipart/form-data uploads on bare uWS: /avatar keeps a small file in memory,
// /upload writes files to a directory (names chosen by uws-body, never the client's).
//   node examples/multipart.js
//   curl -F title=me -F photo=@me.jpg http://127.0.0.1:3000/avatar
//   curl -F big=@big.iso http://127.0.0.1:3000/upload
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const uWS = require('uWebSockets.js')
const { readMultipart, answerError } = require('..')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-'))
const port = Number(process.env.PORT ?? 3000)

uWS.App().post('/avatar', (res, req) => {
  // Call synchronously: uWS's req is dead once the handler returns.
  readMultipart(res, req, { limits: { files: 1, fileSize: 2 * 1024 * 1024, fields: 10 } }).then(
    ({ fields, files }) => {
      if (res.aborted) return
      const photo = files[0]
      res.cork(() => res.end(`${fields.title}: ${photo ? `${photo.originalname}, ${photo.buffer.length} bytes` : 'no photo'}\n`))
    },
    // Its status and { status, code, message }: the message only for errors a client may
    // see (a disk error's names server paths).
    (err) => answerError(res, err)
  )
}).post('/upload', (res, req) => {
  readMultipart(res, req, { storage: { dest: dir }, limit: '10gb', limits: { files: 20 }, timeout: 3600_000 }).then(
    ({ files }) => {
      if (res.aborted) return
      res.cork(() => res.end(files.map((f) => `${f.originalname} -> ${f.path} (${f.size} bytes)\n`).join('')))
    },
    (err) => answerError(res, err)
  )
}).listen('127.0.0.1', port, (token) => {
  if (token) console.log(`http://127.0.0.1:${uWS.us_socket_local_port(token)} (files go to ${dir})`)
})
