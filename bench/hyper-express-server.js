'use strict'
// hyper-express 6.17 with its own body readers, in a process of its own so that its CPU
// time is its own: POST /raw (await req.buffer()), /json (req.json()), /text (req.text()),
// /urlencoded (req.urlencoded()) answer with the body's length or key count; GET /reset
// and /stats measure this process's CPU time, as bench/server.js and express-server.js.
require('./tune')
const HyperExpress = require('./hyper-express')

// Larger than any body the benches send (bench/express.js's limit is 64 MiB).
const app = new HyperExpress.Server({ max_body_length: 128 * 1024 * 1024 })
let cpu = process.cpuUsage()
let requests = 0
const length = (b) => String(Buffer.isBuffer(b) || typeof b === 'string' ? b.length : Object.keys(b).length)
const reader = (read) => async (req, res) => {
  const body = await read(req)
  requests++
  res.send(length(body))
}
app.post('/raw', reader((req) => req.buffer()))
// json(null): a body that is not JSON rejects instead of resolving as {} (the default),
// so a mistake in the bench shows up as an error rather than a fast wrong answer.
app.post('/json', reader((req) => req.json(null)))
app.post('/text', reader((req) => req.text()))
app.post('/urlencoded', reader((req) => req.urlencoded()))
app.get('/reset', (req, res) => { cpu = process.cpuUsage(); requests = 0; res.send('ok') })
app.get('/stats', (req, res) => {
  const used = process.cpuUsage(cpu)
  res.send(JSON.stringify({ cpuMicros: used.user + used.system, requests }))
})
app.set_error_handler((req, res, err) => res.status(500).send(String(err && err.message)))
app.listen(0, '127.0.0.1').then(() => process.send({ port: app.port }), (err) => { console.error(err); process.exit(1) })
