'use strict'
// One server for bench/stream.js, in its own process so that its CPU and RSS are its own.
// argv[2]: the contender. Each upload goes to the file named by the x-file header; the
// parent is told the bytes consumed every 25 ms, and at the end the server's CPU time
// for the request, its wall time and its peak RSS (sampled every 10 ms).
const fs = require('node:fs')
const { pipeline, Transform } = require('node:stream')
const contender = process.argv[2]
const sampler = { peak: 0, consumed: 0 }
const sample = () => { sampler.peak = Math.max(sampler.peak, process.memoryUsage.rss()) }

/** A consumer slower than the client: at most `rate` bytes per second pass. */
function throttle (rate) {
  let started = 0
  let passed = 0
  return new Transform({
    transform (chunk, _, done) {
      if (started === 0) started = Date.now()
      passed += chunk.length
      const due = started + (passed / rate) * 1000
      setTimeout(() => done(null, chunk), Math.max(0, due - Date.now()))
    }
  })
}

function counting () {
  return new Transform({ transform (chunk, _, done) { sampler.consumed += chunk.length; done(null, chunk) } })
}

let started, cpu, ticker
function begin () {
  global.gc()
  sampler.peak = process.memoryUsage.rss()
  sampler.idle = sampler.peak
  sampler.consumed = 0
  started = process.hrtime.bigint()
  cpu = process.cpuUsage()
  ticker = setInterval(() => { sample(); process.send({ consumed: sampler.consumed }) }, 10)
}
function end (answer) {
  const used = process.cpuUsage(cpu)
  const wall = Number(process.hrtime.bigint() - started) / 1e9
  clearInterval(ticker)
  sample()
  process.send({ done: true, cpu: (used.user + used.system) / 1e6, wall, idle: sampler.idle, peak: sampler.peak })
  answer()
}

if (contender === 'ultimate-express') {
  const express = require('ultimate-express')
  const app = express()
  app.post('/upload', (req, res) => {
    begin()
    const rate = Number(req.headers['x-rate']) || 0
    const stages = [req, counting(), ...(rate ? [throttle(rate)] : []), fs.createWriteStream(req.headers['x-file'])]
    pipeline(...stages, (err) => end(() => res.status(err ? 500 : 200).send(err ? 'error' : 'ok')))
  })
  app.listen(0, '127.0.0.1', () => process.send({ port: app.port }))
} else if (contender === 'hyper-express') {
  const HyperExpress = require('./hyper-express')
  // No body limit (its default is 250 KiB): the upload is 1 GiB, chunked.
  const app = new HyperExpress.Server({ max_body_length: Infinity })
  app.post('/upload', (req, res) => {
    begin()
    const rate = Number(req.headers['x-rate']) || 0
    // req is hyper-express's Request, which lends itself stream.Readable's methods (its
    // documented way to stream a body: req.pipe(writable)).
    const stages = [req, counting(), ...(rate ? [throttle(rate)] : []), fs.createWriteStream(req.headers['x-file'])]
    pipeline(...stages, (err) => end(() => res.status(err ? 500 : 200).send(err ? 'error' : 'ok')))
  })
  app.listen(0, '127.0.0.1').then(() => process.send({ port: app.port }))
} else {
  const uWS = require('uWebSockets.js')
  const { bodyStream } = require('..')
  const app = uWS.App().post('/upload', (res, req) => {
    begin()
    const file = req.getHeader('x-file')
    const rate = Number(req.getHeader('x-rate')) || 0
    const answer = (text) => () => { if (!res.aborted) res.cork(() => res.end(text)) }
    res.onAborted(() => { res.aborted = true })
    if (contender === 'bodyStream') {
      const stages = [bodyStream(res, req), counting(), ...(rate ? [throttle(rate)] : []), fs.createWriteStream(file)]
      pipeline(...stages, (err) => end(answer(err ? 'error' : 'ok')))
    } else if (contender === 'uWS floor') {
      // What uWS delivers over loopback with nothing done to the bytes: no copy, no file.
      res.onData((ab, isLast) => {
        sampler.consumed += ab.byteLength
        if (isLast) end(answer('ok'))
      })
    } else if (contender === 'Buffer.from loop') {
      // The classic: copy each chunk, write it, pause while the file is behind.
      const out = fs.createWriteStream(file)
      let paused = false
      out.on('drain', () => { if (paused) { paused = false; res.resume() } })
      res.onData((ab, isLast) => {
        const chunk = Buffer.from(new Uint8Array(ab)) // a copy: uWS neuters ab on return
        sampler.consumed += chunk.length
        if (!out.write(chunk) && !paused) { paused = true; res.pause() }
        if (isLast) out.end(() => end(answer('ok')))
      })
    }
  })
  app.listen('127.0.0.1', 0, (token) => process.send({ port: uWS.us_socket_local_port(token) }))
}
