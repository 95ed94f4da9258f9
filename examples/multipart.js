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
const { readMultipart } = require('..')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-'))

/**
 * Answers a refusal with its status and code, and closes: the rest of the body is not
 * wanted. The message only when the error says a client may see it (a BodyError's is
 * about the request; a disk error's names server paths).
 */
function refuse (res, err) {
  if (res.aborted) return // client gone: res must not be touched
  const message = err.expose ? `: ${err.message}` : ''
  res.cork(() => res.writeStatus(`${err.status || 500} Error`).end(`${err.code}${message}\n`, true))
}

uWS.App().post('/avatar', (res, req) => {
  // Call synchronously: uWS's req is dead once the handler returns.
  readMultipart(res, req, { limits: { files: 1, fileSize: 2 * 1024 * 1024, fields: 10 } }).then(
    ({ fields, files }) => {
      if (res.aborted) return
      const photo = files[0]
      res.cork(() => res.end(`${fields.title}: ${photo ? `${photo.originalname}, ${photo.buffer.length} bytes` : 'no photo'}\n`))
    },
    (err) => refuse(res, err)
  )
}).post('/upload', (res, req) => {
  readMultipart(res, req, { storage: { dest: dir }, limit: '10gb', limits: { files: 20 }, timeout: 3600_000 }).then(
    ({ files }) => {
      if (res.aborted) return
      res.cork(() => res.end(files.map((f) => `${f.originalname} -> ${f.path} (${f.size} bytes)\n`).join('')))
    },
    (err) => refuse(res, err)
  )
}).listen('127.0.0.1', 3000, (token) => {
  if (token) console.log(`http://127.0.0.1:3000 (files go to ${dir})`)
})
