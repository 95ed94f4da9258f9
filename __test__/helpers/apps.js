'use strict'
// The same routes on two servers, for the differential tests: Express with body-parser
// (node:http) and ultimate-express with uws-body's parsers. Each route answers with a
// JSON description of req.body, or of the error that reached the error handler.
const express = require('express')
const bodyParser = require('body-parser')
const ultimateExpress = require('ultimate-express')
const uwsBody = require('../..')

const verify = (req, res, buf) => {
  if (buf.includes('forbidden')) throw new Error('verify refused the body')
}

/** name -> [parser, options]: every option the parsers take, at least once. */
const ROUTES = {
  json: ['json', {}],
  'json-limit': ['json', { limit: 1000 }],
  'json-loose': ['json', { strict: false }],
  'json-reviver': ['json', { reviver: (k, v) => (typeof v === 'number' ? v * 2 : v) }],
  'json-verify': ['json', { verify }],
  'json-no-inflate': ['json', { inflate: false }],
  'json-any-type': ['json', { type: ['application/*', 'text/plain'] }],
  'json-type-fn': ['json', { type: (req) => req.headers['x-parse'] === 'yes' }],
  raw: ['raw', {}],
  'raw-any': ['raw', { type: '*/*', limit: '1kb' }],
  'raw-verify': ['raw', { verify }],
  text: ['text', {}],
  'text-latin1': ['text', { defaultCharset: 'iso-8859-1' }],
  'text-no-inflate': ['text', { inflate: false }],
  urlencoded: ['urlencoded', {}],
  'urlencoded-extended': ['urlencoded', { extended: true }],
  'urlencoded-params': ['urlencoded', { extended: true, parameterLimit: 3 }],
  'urlencoded-depth': ['urlencoded', { extended: true, depth: 1 }]
}

function describeBody (body) {
  if (body === undefined) return { undefined: true }
  if (Buffer.isBuffer(body)) return { buffer: body.toString('base64') }
  return { value: body }
}

/** The answer, also in an x-body header (URI-encoded), since an answer to HEAD has no body. */
function answer (res, value) {
  res.set('x-body', encodeURIComponent(JSON.stringify(value)))
  res.json(value)
}

function mount (app, parsers) {
  for (const [name, [kind, options]] of Object.entries(ROUTES)) {
    const handler = (req, res) => answer(res, describeBody(req.body))
    // /h/…: an error handler that reports status, type and message; /d/…: the
    // framework's default. Every method, since a body may come with any.
    app.all(`/h/${name}`, parsers[kind](options), handler)
    app.all(`/d/${name}`, parsers[kind](options), handler)
  }
  app.use((err, req, res, next) => {
    if (!req.path.startsWith('/h/')) return next(err)
    res.status(err.status || 500)
    answer(res, { error: { status: err.status, type: err.type, message: err.message } })
  })
}

async function startApps () {
  const ex = express()
  ex.set('env', 'test') // finalhandler: no stack traces on stderr
  mount(ex, bodyParser)
  const server = await new Promise((resolve) => {
    const s = ex.listen(0, '127.0.0.1', () => resolve(s))
  })
  const ue = ultimateExpress()
  ue.set('env', 'test')
  mount(ue, uwsBody)
  await new Promise((resolve) => ue.listen(0, '127.0.0.1', resolve))
  return {
    express: server.address().port,
    ultimate: ue.port,
    close () {
      server.close()
      ue.close()
    }
  }
}

module.exports = { startApps, ROUTES }
