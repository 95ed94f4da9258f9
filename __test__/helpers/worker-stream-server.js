'use strict'
// A worker thread for workers.test.js's bodyStream tests.
//   serve  its own uWS app: POST /stream reads the body with bodyStream and answers
//          "<length> <sha256>" of the (decoded) body, or "<status> <type>" on error;
//          GET /close closes the listener and the connection, and the thread ends.
//   open   no uWS: bodyStreams fed by stand-in responses, left mid-body (the client
//          paused, encoded bytes held by the addon, an unread stream, a bare native
//          stream), then { held } is posted and the thread waits to be terminated.
const { parentPort, workerData } = require('node:worker_threads')
const crypto = require('node:crypto')
const zlib = require('node:zlib')
const { bodyStream, stats } = require('../..')
const { bodyOf } = require('./client')

if (workerData.mode === 'open') {
  const before = stats().bytesInUse
  const kept = []
  const data = bodyOf(4 * 1024 * 1024) // random bytes: encoded, they stay about as large
  for (const encoding of ['gzip', 'br', undefined]) {
    const res = { onData (fn) { res.data = fn }, onAborted (fn) { res.abort = fn }, pause () {}, resume () {} }
    const sent = encoding === 'gzip' ? zlib.gzipSync(data) : encoding === 'br' ? zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }) : data
    const stream = bodyStream(res, { 'content-length': String(sent.length), 'content-encoding': encoding || '' }, { highWaterMark: 1024 })
    // Half the body, in uWS-sized pieces, and nobody reading: the stream fills, the client
    // is paused, and the addon holds the encoded rest.
    for (let at = 0; at < sent.length >> 1; at += 65536) {
      const piece = sent.subarray(at, Math.min(at + 65536, sent.length >> 1))
      res.data(piece.buffer.slice(piece.byteOffset, piece.byteOffset + piece.length), false)
    }
    kept.push(stream, res)
  }
  // Reachable until the thread ends: V8 sees the memory the streams hold and would
  // otherwise collect them first.
  globalThis.kept = kept
  parentPort.postMessage({ held: stats().bytesInUse - before })
  setTimeout(() => {}, 60000) // alive until terminate()
} else {
  // uWS only here: see worker-server.js (a worker must close its sockets before it ends).
  const uWS = require('uWebSockets.js')
  let listening = null
  uWS.App().post('/stream', (res, req) => {
    const hash = crypto.createHash('sha256')
    let length = 0
    const stream = bodyStream(res, req, { limit: '64mb' })
    stream.on('data', (chunk) => {
      hash.update(chunk)
      length += chunk.length
    })
    stream.on('end', () => { if (!res.aborted) res.cork(() => res.end(`${length} ${hash.digest('hex')}`)) })
    stream.on('error', (err) => { if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} Error`).end(`${err.status} ${err.type}`, true)) })
  }).get('/close', (res) => {
    uWS.us_listen_socket_close(listening)
    res.end('bye', true)
  }).listen('127.0.0.1', 0, (token) => {
    listening = token
    parentPort.postMessage({ port: uWS.us_socket_local_port(token) })
  })
}
