'use strict'
// The server of the early-answer tests, in its own process (forked by early-answer.test.js
// and soak/early.js): a client and a server in one process take turns on one event loop,
// which hides the race these tests are about (a client still writing while the server
// answers and closes). Three apps, each refusing bodies over `limit` on every route:
//   bare uWS        /readBody /readText /bodyStream /accumulator (README's
//                   BodyAccumulator pattern) /readMultipart, all answered with answerError;
//                   /plain/* and /closing/* the same readers answered by hand
//                   (writeStatus().end(body), end(body, true)); /headOnly/readBody with
//                   endWithoutBody(0)
//   ultimate-express /json /raw /text /urlencoded (uws-body's parsers, type '*/*')
//                   /multipart (multipart().any())
//   Express          the same routes, on node:http
//   both again       /json and /multipart with no error handler: the framework's own
// The multipart routes read every body as a form (whatever its content-type: the clients
// send octet-stream), whose bytes, all preamble, pass `limit` as any body does.
// A body within the limit is answered 200 "<length> <sha256>" (the bare routes and raw(),
// else 200 "parsed"). Every app has GET /next
// (for a request after a refused one on the same connection). The bare app's GET /stats
// answers { rss, arrayBuffers and bytesInUse (after a GC), dropped (the bytes of refused bodies the
// server read, lib/refusal/refusal.js), counters } as JSON.
// A body whose declared digest (Content-Digest, ...) is wrong is refused at its end with
// the 400.
// argv[2]: JSON { limit, linger, digest } (linger, digest: the options passed to every API
// that takes them).
const crypto = require('node:crypto')
const http = require('node:http')
const { Writable, pipeline } = require('node:stream')
const uWS = require('uWebSockets.js')
const express = require('express')
const ultimate = require('ultimate-express')
const uwsBody = require('../..')
const { droppedBytes } = require('../../lib/refusal/drain')

const config = JSON.parse(process.argv[2] || '{}')
const limit = config.limit || 1024 * 1024
const linger = config.linger === undefined ? undefined : config.linger
const digest = config.digest === undefined ? undefined : config.digest
const counts = { ok: 0, refused: 0, aborted: 0 }
const FORM = 'multipart/form-data; boundary=early'
// readMultipart's headers: the request's, but its content-type.
const formHeaders = (req) => ({ 'content-type': FORM, 'content-length': req.getHeader('content-length'), 'content-digest': req.getHeader('content-digest') })
const lengthAndSha256 = (buf) => `${buf.length} ${crypto.createHash('sha256').update(buf).digest('hex')}`

function bare () {
  const app = uWS.App()
  const refused = (res, err) => {
    if (err.code === 'ECONNABORTED') counts.aborted++
    else counts.refused++
    uwsBody.answerError(res, err)
  }
  const answer = (res, promise) => promise.then(
    (body) => {
      counts.ok++
      if (!res.aborted) res.cork(() => res.end(lengthAndSha256(Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'))))
    },
    (err) => refused(res, err)
  )
  app.post('/readBody', (res, req) => answer(res, uwsBody.readBody(res, req, { limit, linger, digest })))
  app.post('/readText', (res, req) => answer(res, uwsBody.readText(res, req, { limit, linger, digest, encoding: 'latin1' })))
  app.post('/bodyStream', (res, req) => {
    const hash = crypto.createHash('sha256')
    let length = 0
    const sink = new Writable({
      write (chunk, encoding, callback) {
        hash.update(chunk)
        length += chunk.length
        callback()
      }
    })
    pipeline(uwsBody.bodyStream(res, req, { limit, linger, digest }), sink, (err) => {
      if (err) return refused(res, err)
      counts.ok++
      if (!res.aborted) res.cork(() => res.end(`${length} ${hash.digest('hex')}`))
    })
  })
  // README's BodyAccumulator pattern, with the request's Content-Digest.
  app.post('/accumulator', (res, req) => {
    const acc = new uwsBody.BodyAccumulator({ contentLength: req.getHeader('content-length'), contentDigest: req.getHeader('content-digest'), limit, digest })
    let answered = false
    res.onAborted(() => { res.aborted = true; answered = true; acc.abort() })
    res.onData((chunk, isLast) => {
      if (answered) return
      if (!acc.push(chunk)) {
        answered = true
        counts.refused++
        return uwsBody.answerError(res, acc.error, { bodyEnded: isLast, linger })
      }
      if (isLast) {
        answered = true
        let body
        try {
          body = acc.finish()
        } catch (err) {
          // A declared digest that does not match (the only error finish() has here).
          counts.refused++
          return uwsBody.answerError(res, err)
        }
        counts.ok++
        res.cork(() => res.end(lengthAndSha256(body)))
      }
    })
  })
  app.post('/readMultipart', (res, req) => {
    answer(res, uwsBody.readMultipart(res, formHeaders(req), { limit, linger, digest }).then(() => Buffer.alloc(0)))
  })
  // The same readers answered the way most uWS code does, by hand: /plain/* with
  // writeStatus().end(body), /closing/* with end(body, true) (uWS closes the connection).
  const byHand = (close) => (res, err) => {
    if (err.code === 'ECONNABORTED') counts.aborted++
    else counts.refused++
    if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} ${http.STATUS_CODES[err.status]}`).end(JSON.stringify({ status: err.status, code: err.code }), close))
  }
  for (const [prefix, refuse] of [['plain', byHand(false)], ['closing', byHand(true)]]) {
    const answerByHand = (res, promise) => promise.then(
      (body) => {
        counts.ok++
        if (!res.aborted) res.cork(() => res.end(lengthAndSha256(Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'))))
      },
      (err) => refuse(res, err)
    )
    app.post(`/${prefix}/readBody`, (res, req) => answerByHand(res, uwsBody.readBody(res, req, { limit, linger, digest })))
    app.post(`/${prefix}/readText`, (res, req) => answerByHand(res, uwsBody.readText(res, req, { limit, linger, digest })))
    app.post(`/${prefix}/bodyStream`, (res, req) => {
      let length = 0
      const sink = new Writable({ write (chunk, encoding, callback) { length += chunk.length; callback() } })
      pipeline(uwsBody.bodyStream(res, req, { limit, linger, digest }), sink, (err) => {
        if (err) return refuse(res, err)
        counts.ok++
        if (!res.aborted) res.cork(() => res.end(String(length)))
      })
    })
    app.post(`/${prefix}/readMultipart`, (res, req) => {
      answerByHand(res, uwsBody.readMultipart(res, formHeaders(req), { limit, linger, digest }).then(() => Buffer.alloc(0)))
    })
  }
  // No body at all: endWithoutBody.
  app.post('/headOnly/readBody', (res, req) => uwsBody.readBody(res, req, { limit, linger, digest }).then(
    () => { if (!res.aborted) res.cork(() => res.end('ok')) },
    (err) => {
      counts.refused++
      if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} ${http.STATUS_CODES[err.status]}`).writeHeader('x-code', err.code).endWithoutBody(0))
    }))
  app.get('/next', (res) => res.end('next'))
  app.get('/stats', (res) => {
    res.onAborted(() => { res.aborted = true })
    for (let i = 0; i < 3; i++) global.gc()
    setImmediate(() => {
      global.gc()
      const s = uwsBody.stats()
      if (!res.aborted) res.cork(() => res.end(JSON.stringify({ rss: process.memoryUsage().rss, arrayBuffers: process.memoryUsage().arrayBuffers, bytesInUse: s.bytesInUse, dropped: droppedBytes(), ...counts })))
    })
  })
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (token) => token ? resolve(uWS.us_socket_local_port(token)) : reject(new Error('uWS could not listen')))
  })
}

function routes (app) {
  for (const kind of ['json', 'raw', 'text', 'urlencoded']) {
    app.post(`/${kind}`, uwsBody[kind]({ type: '*/*', limit, linger, digest }), (req, res) => {
      counts.ok++
      res.send(kind === 'raw' ? lengthAndSha256(req.body) : 'parsed')
    })
  }
  app.post('/multipart', (req, res, next) => {
    req.headers['content-type'] = FORM
    next()
  }, uwsBody.multipart({ limit, linger, digest }).any(), (req, res) => {
    counts.ok++
    res.send('parsed')
  })
  app.get('/next', (req, res) => res.send('next'))
  app.use((err, req, res, next) => {
    if (err.code === 'ECONNABORTED') counts.aborted++
    else counts.refused++
    res.status(err.status || 500).json({ status: err.status, code: err.code })
  })
}

// ultimate-express and Express with no error handler of the application's: the
// framework's default one answers (finalhandler on Express). ultimate-express's also logs
// every error it answers: the client errors these tests cause are kept out of the log.
const logError = console.error
console.error = (...args) => {
  const err = args[0]
  if (args.length === 1 && err instanceof Error && err.status >= 400 && err.status < 500) return
  logError(...args)
}

function defaults (app) {
  app.post('/json', uwsBody.json({ type: '*/*', limit, linger, digest }), (req, res) => res.send('parsed'))
  app.post('/multipart', (req, res, next) => {
    req.headers['content-type'] = FORM
    next()
  }, uwsBody.multipart({ limit, linger, digest }).any(), (req, res) => res.send('parsed'))
  app.get('/next', (req, res) => res.send('next'))
}

/** An app of `framework` (ultimate or express) with `setup`'s routes, listening: its port. */
function listen (framework, setup) {
  const app = framework()
  app.set('env', 'test')
  setup(app)
  return new Promise((resolve) => {
    if (framework === ultimate) app.listen(0, '127.0.0.1', () => resolve(app.port))
    else {
      const s = app.listen(0, '127.0.0.1', () => resolve(s.address().port))
    }
  })
}

async function main () {
  process.send({
    uws: await bare(),
    ultimate: await listen(ultimate, routes),
    express: await listen(express, routes),
    ultimateDefault: await listen(ultimate, defaults),
    expressDefault: await listen(express, defaults)
  })
  // The test ends the process; if it dies first, so does this.
  process.on('disconnect', () => process.exit(0))
}

main()
