'use strict'
// A worker thread with its own uWS app reading bodies with readBody (see workers.test.js).
const { parentPort, workerData } = require('node:worker_threads')
const crypto = require('node:crypto')
const { readBody, BodyAccumulator } = require('../..')

const kept = []
if (workerData.mode === 'keep-buffers') {
  // Native Buffers still alive when the worker goes away.
  for (let i = 0; i < 8; i++) {
    const acc = new BodyAccumulator({ contentLength: 3 * 1024 * 1024, limit: '8mb' })
    acc.push(Buffer.alloc(3 * 1024 * 1024, i))
    kept.push(acc.finish())
  }
  const open = new BodyAccumulator({ contentLength: 5 * 1024 * 1024, limit: '8mb' })
  open.push(Buffer.alloc(1000))
  kept.push(open) // an unfinished body too
  parentPort.postMessage({ kept: kept.length })
  if (workerData.wait) setTimeout(() => {}, 60000) // alive until terminate()
  // Alive until the test has seen the Buffers held; then the thread has nothing left to
  // run and ends by itself with them alive.
  else parentPort.once('message', () => parentPort.close())
} else {
  // uWS must be loaded only here, and shut down before the thread ends: a worker that
  // exits with uWS sockets open aborts the process (uv_loop_close with open handles).
  const uWS = require('uWebSockets.js')
  let listening = null
  uWS.App().post('/body', (res, req) => {
    readBody(res, req, { limit: '16mb' }).then(
      (body) => { if (!res.aborted) res.cork(() => res.end(`${body.length} ${crypto.createHash('sha256').update(body).digest('hex')}`)) },
      (err) => { if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} Error`).end(`${err.status} ${err.type}`)) }
    )
  }).get('/close', (res) => {
    // Close the listener and this connection; with no socket left the thread ends.
    uWS.us_listen_socket_close(listening)
    res.end('bye', true)
  }).listen('127.0.0.1', 0, (token) => {
    listening = token
    parentPort.postMessage({ port: uWS.us_socket_local_port(token) })
  })
}
