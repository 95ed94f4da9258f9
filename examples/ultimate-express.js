'use strict'
// ultimate-express with uws-body's parsers: JSON (gzip, br, zstd too), forms, text, and
// raw uploads of up to 64 MiB, with body-parser's errors answered with their status.
// Try: curl -H 'content-type: application/json' -d '{"a":1}' http://127.0.0.1:3000/json
const express = require('ultimate-express')
const { json, raw, text, urlencoded } = require('..')

const app = express()
app.post('/json', json({ limit: '1mb' }), (req, res) => res.json({ got: req.body }))
app.post('/form', urlencoded({ extended: true }), (req, res) => res.json({ got: req.body }))
app.post('/text', text(), (req, res) => res.send(`${req.body.length} characters`))
app.post('/upload', raw({ type: '*/*', limit: '64mb' }), (req, res) => res.send(`${req.body.length} bytes`))
// A client's mistake says what it was; anything else (a disk error names server paths)
// says only its status.
app.use((err, req, res, next) => res.status(err.status || 500).json({ error: err.expose ? err.type || err.message : 'internal error', code: err.code }))

const port = Number(process.env.PORT ?? 3000)
app.listen(port, '127.0.0.1', () => console.log(`uws-body + ultimate-express on http://127.0.0.1:${app.port}/`))
