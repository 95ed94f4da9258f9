'use strict'
// The multipart bench's server, one process per contender (argv[2]):
//   uws             ultimate-express with uws-body's multipart()
//   multer-uex      ultimate-express with multer
//   multer-express  Express 5 (node:http) with multer
// POST /memory and /disk take any files (memory storage, or disk storage in argv[3],
// each file removed once answered, so the disk does not fill up) and answer with the
// number of fields and files and the bytes received; GET /reset and /stats measure this
// process's CPU time.
const fs = require('node:fs')
const kind = process.argv[2]
const dir = process.argv[3]
const app = kind === 'multer-express' ? require('express')() : require('ultimate-express')()
const lib = kind === 'uws' ? require('..').multipart : require('multer')

let cpu = process.cpuUsage()
let requests = 0
const done = (req, res) => {
  requests++
  let bytes = 0
  for (const f of req.files) {
    bytes += f.size
    if (f.path) fs.unlink(f.path, () => {})
  }
  res.send(`${Object.keys(req.body).length} ${req.files.length} ${bytes}`)
}
app.post('/memory', lib().any(), done)
app.post('/disk', lib({ dest: dir }).any(), done)
app.get('/reset', (req, res) => { cpu = process.cpuUsage(); requests = 0; res.send('ok') })
app.get('/stats', (req, res) => {
  const used = process.cpuUsage(cpu)
  res.send(JSON.stringify({ cpuMicros: used.user + used.system, requests }))
})
app.use((err, req, res, next) => { res.status(500).send(String(err && err.message)) })

if (kind === 'multer-express') {
  const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
} else {
  app.listen(0, '127.0.0.1', () => process.send({ port: app.port }))
}
// The bench ends by disconnecting: exit cleanly (so --cpu-prof can write its profile).
process.on('disconnect', () => process.exit(0))
