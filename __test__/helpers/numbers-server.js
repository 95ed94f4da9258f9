'use strict'
// A server in a child process for client-numbers.test.js, so a body that holds its event
// loop cannot hold the test's: argv[2] is 'express' (Express 5 on node:http), 'ultimate'
// (ultimate-express) or 'uws' (bare uWS with readMultipart). POST /form reads the form
// (multipart().none(), or readMultipart; `?limit=n` sets fieldArrayIndexLimit) and answers
// the shape of what it built, one level deep and without walking an array's length;
// POST /url (not on bare uWS) urlencoded({ extended: true }) likewise; POST /body reads any
// body up to 1 GiB (raw(), or readBody) and answers its length; GET /ping answers 'pong',
// GET /memory its resident memory and uws-body's stats(). It prints its port on one line once it listens.
const uwsBody = require('../..')

const kind = process.argv[2]

/** What the form built, bounded by what it holds: kinds and own keys, one level deep. */
function shapeOf (value) {
  if (typeof value === 'string') return 's'
  if (Array.isArray(value)) return { array: Object.keys(value) }
  return { object: Object.keys(value) }
}
const describe = (body) => Object.fromEntries(Object.keys(body).map((k) => [k, shapeOf(body[k])]))

const memory = () => JSON.stringify({ rss: process.memoryUsage().rss, ...uwsBody.stats() })

const forms = new Map()
const formOf = (limit) => {
  if (!forms.has(limit)) forms.set(limit, uwsBody.multipart(limit === null ? {} : { limits: { fieldArrayIndexLimit: limit } }).none())
  return forms.get(limit)
}
const limitOf = (query) => query.limit === undefined ? null : Number(query.limit)

if (kind === 'uws') {
  const uWS = require('uWebSockets.js')
  const app = uWS.App()
  app.post('/form', (res, req) => {
    const limit = /limit=(\d+)/.exec(req.getQuery() || '')
    const options = limit ? { limits: { fieldArrayIndexLimit: Number(limit[1]) } } : undefined
    readAndAnswer(res, req, options)
  })
  app.post('/body', (res, req) => {
    uwsBody.readBody(res, req, { limit: '1gb' }).then((body) => {
      if (!res.aborted) res.cork(() => res.end(JSON.stringify({ length: body.length })))
    }, (err) => {
      if (!res.aborted) res.cork(() => res.writeStatus(`${err.status || 500} Error`).end(JSON.stringify({ code: err.code })))
    })
  })
  app.get('/ping', (res) => res.end('pong'))
  app.get('/memory', (res) => res.end(memory()))
  app.listen('127.0.0.1', 0, (token) => process.stdout.write(`${uWS.us_socket_local_port(token)}\n`))
} else {
  const app = kind === 'express' ? require('express')() : require('ultimate-express')({ threads: 0 })
  app.set('env', 'test')
  app.post('/form', (req, res, next) => formOf(limitOf(req.query))(req, res, next), (req, res) => res.json({ body: describe(req.body) }))
  app.post('/url', uwsBody.urlencoded({ extended: true }), (req, res) => res.json({ body: describe(req.body) }))
  app.post('/body', uwsBody.raw({ type: '*/*', limit: '1gb' }), (req, res) => res.json({ length: req.body.length }))
  app.get('/ping', (req, res) => res.send('pong'))
  app.get('/memory', (req, res) => res.send(memory()))
  app.use((err, req, res, next) => res.status(err.status || 500).json({ code: err.code }))
  if (kind === 'express') {
    const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`))
  } else {
    app.listen(0, '127.0.0.1', () => process.stdout.write(`${app.port}\n`))
  }
}

function readAndAnswer (res, req, options) {
  uwsBody.readMultipart(res, req, options).then(({ fields }) => {
    if (!res.aborted) res.cork(() => res.end(JSON.stringify({ body: describe(fields) })))
  }, (err) => {
    if (!res.aborted) res.cork(() => res.writeStatus(`${err.status || 500} Error`).end(JSON.stringify({ code: err.code })))
  })
}
