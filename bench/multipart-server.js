'use strict'
// The server of bench/multipart.js, in its own process so that its CPU and RSS are its
// own. POST /readMultipart, /busboy, /getParts read a form with that contender and answer
// "<files> <file bytes> <fields>"; POST /disk writes it to files with readMultipart
// { dest } (deleted at once). GET /reset and GET /stats give this process's CPU time
// since the reset; /stats also the peak RSS (sampled every 10 ms) over the RSS at reset.
const fs = require('node:fs')
const path = require('node:path')
const uWS = require('uWebSockets.js')
const busboy = require('busboy')
const { readMultipart, readBody } = require('..')

const dest = process.argv[2]
const LIMIT = 2 * 1024 ** 3
let cpu = process.cpuUsage()
let requests = 0
let idle = 0
let peak = 0
setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 10).unref()

function answer (res, files, bytes, fields) {
  requests++
  if (!res.aborted) res.cork(() => res.end(`${files} ${bytes} ${fields}`))
}
function refuse (res, err) {
  if (!res.aborted) res.cork(() => res.writeStatus('500 Error').end(String(err && (err.code || err.message)), true))
}

uWS.App()
  .post('/readMultipart', (res, req) => {
    readMultipart(res, req, { limit: LIMIT }).then(({ fields, files }) => {
      answer(res, files.length, files.reduce((n, f) => n + f.buffer.length, 0), Object.keys(fields).length)
    }, (err) => refuse(res, err))
  })
  .post('/busboy', (res, req) => {
    // What a typical user writes: each chunk copied (uWS neuters it on return) and written
    // to busboy, each file's chunks collected and concatenated into a Buffer.
    res.onAborted(() => { res.aborted = true })
    const bb = busboy({ headers: { 'content-type': req.getHeader('content-type') } })
    const fields = {}
    const files = []
    bb.on('field', (name, value) => { fields[name] = value })
    bb.on('file', (name, stream, info) => {
      const chunks = []
      stream.on('data', (d) => chunks.push(d))
      stream.on('end', () => files.push({ name, info, buffer: Buffer.concat(chunks) }))
    })
    bb.on('close', () => answer(res, files.length, files.reduce((n, f) => n + f.buffer.length, 0), Object.keys(fields).length))
    bb.on('error', (err) => refuse(res, err))
    res.onData((ab, isLast) => {
      bb.write(Buffer.from(new Uint8Array(ab)))
      if (isLast) bb.end()
    })
  })
  .post('/getParts', (res, req) => {
    const type = req.getHeader('content-type')
    readBody(res, req, { limit: LIMIT }).then((body) => {
      const parts = uWS.getParts(body, type) || []
      let files = 0
      let bytes = 0
      let fields = 0
      for (const p of parts) {
        if (p.filename !== undefined) { files++; bytes += p.data.byteLength } else fields++
      }
      answer(res, files, bytes, fields)
    }, (err) => refuse(res, err))
  })
  .post('/disk', (res, req) => {
    readMultipart(res, req, { storage: { dest } }).then(({ files }) => {
      const bytes = files.reduce((n, f) => n + f.size, 0)
      for (const f of files) fs.rmSync(f.path)
      answer(res, files.length, bytes, 0)
    }, (err) => refuse(res, err))
  })
  .get('/reset', (res) => {
    global.gc()
    cpu = process.cpuUsage()
    requests = 0
    idle = process.memoryUsage.rss()
    peak = idle
    res.end('ok')
  })
  .get('/stats', (res) => {
    const used = process.cpuUsage(cpu)
    peak = Math.max(peak, process.memoryUsage.rss())
    res.end(JSON.stringify({ cpuMicros: used.user + used.system, requests, idle, peak }))
  })
  .listen('127.0.0.1', 0, (token) => {
    if (!token) process.exit(1)
    process.send({ port: uWS.us_socket_local_port(token), dest: path.resolve(dest) })
  })
