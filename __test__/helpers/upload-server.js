'use strict'
// A server in a child process for the descriptor-exhaustion test: readMultipart on bare
// uWS and multipart() under ultimate-express, both writing to the directory in argv[2].
// It prints one line of JSON with its ports once both listen, and answers a failed upload
// with { code } and its status.
const uWS = require('uWebSockets.js')
const ultimateExpress = require('ultimate-express')
const { readMultipart, multipart } = require('../..')

const dest = process.argv[2]
const app = uWS.App().post('/read', (res, req) => {
  readMultipart(res, req, { storage: { dest } }).then(({ files }) => {
    if (!res.aborted) res.cork(() => res.end(JSON.stringify({ files: files.length })))
  }, (err) => {
    if (!res.aborted) res.cork(() => res.writeStatus(`${err.status || 500} Error`).end(JSON.stringify({ code: err.code })))
  })
})
// No file-serving worker thread: it would load its files while descriptors are taken away.
const ue = ultimateExpress({ threads: 0 })
ue.post('/multer', multipart({ dest }).any(), (req, res) => res.json({ files: req.files.length }))
ue.use((err, req, res, next) => res.status(err.status || 500).json({ code: err.code }))
app.listen('127.0.0.1', 0, (token) => {
  ue.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ uws: uWS.us_socket_local_port(token), ultimate: ue.port }) + '\n')
  })
})
