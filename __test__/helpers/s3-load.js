'use strict'
// Large uploads for the S3 backpressure test and bench: a client that streams a multipart
// form of generated files (GiBs, never held: each file is a 1 MiB random block with a
// counter stamped into every 64 KiB, hashed as it is sent) with socket backpressure, and a
// TCP proxy in front of the store that forwards what the server sends it at a set rate
// (a store slower than the client) and counts it.
const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const { fork } = require('node:child_process')
const path = require('node:path')

const KIB = 1024
const MIB = 1024 * KIB
const CHUNK = 64 * KIB
const BOUNDARY = '----uwsBodyS3LoadBoundary9fK2'

const BLOCK = crypto.randomBytes(MIB)

/** File `seed`'s chunk at `offset` (CHUNK bytes, or fewer at the end of `size`). */
function chunkAt (seed, offset, size) {
  const n = Math.min(CHUNK, size - offset)
  const out = Buffer.allocUnsafe(n)
  BLOCK.copy(out, 0, offset % MIB, (offset % MIB) + n)
  if (n >= 12) {
    out.writeUInt32LE(seed, 0)
    out.writeUInt32LE(Math.floor(offset / CHUNK), 4)
    out.writeUInt32LE(0x5a5a5a5a, 8)
  }
  return out
}

/**
 * POSTs a form of `files` ([{ name, filename, size, seed }]) to 127.0.0.1:`port` `path`
 * with content-length, or chunked (`chunked: true`: the uWS 20.30 fork resets a connection
 * whose content-length is 1 000 000 000 or more; 20.57 takes 1 GiB), writing only as fast
 * as the socket drains. `watch(sent)` is called
 * every 20 ms with the body bytes the kernel has taken from the client (what a paused
 * client has not sent is not counted). Resolves { status, body, sha256: [per file], sent }.
 */
function sendForm (port, path, files, { chunked = false, watch = () => {}, timeout = 600000 } = {}) {
  const heads = files.map((f) => Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${f.name}"; filename="${f.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`))
  const tail = Buffer.from(`--${BOUNDARY}--\r\n`)
  const length = files.reduce((n, f, i) => n + heads[i].length + f.size + 2, 0) + tail.length
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const hashes = files.map(() => crypto.createHash('sha256'))
    const received = []
    let done = false
    const finish = (err, value) => {
      if (done) return
      done = true
      clearInterval(watcher)
      clearTimeout(timer)
      socket.destroy()
      if (err) reject(err)
      else resolve(value)
    }
    const timer = setTimeout(() => finish(new Error(`upload not answered in ${timeout} ms`)), timeout)
    const taken = () => socket.bytesWritten - socket.writableLength
    const watcher = setInterval(() => watch(taken()), 20)
    socket.on('data', (d) => {
      received.push(d)
      const raw = Buffer.concat(received)
      const end = raw.indexOf('\r\n\r\n')
      if (end < 0) return
      const head = raw.subarray(0, end).toString('latin1')
      const m = head.match(/content-length: *(\d+)/i)
      if (m && raw.length >= end + 4 + Number(m[1])) {
        finish(null, { status: Number(head.split(' ')[1]), body: raw.subarray(end + 4, end + 4 + Number(m[1])).toString(), sha256: hashes.map((h) => h.digest('hex')), sent: taken() })
      }
    })
    socket.on('error', (err) => finish(err))
    socket.on('close', () => finish(new Error('connection closed without an answer')))
    const raw = (buf) => socket.write(buf) ? null : new Promise((resolve) => socket.once('drain', resolve))
    const write = chunked
      ? (buf) => {
          socket.write(`${Buffer.byteLength(buf).toString(16)}\r\n`)
          socket.write(buf)
          return raw('\r\n')
        }
      : raw
    socket.on('connect', async () => {
      try {
        await raw(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`}\r\n\r\n`)
        for (const [i, f] of files.entries()) {
          await write(heads[i])
          for (let at = 0; at < f.size; at += CHUNK) {
            if (done) return // answered (an error) or failed: stop sending
            const chunk = chunkAt(f.seed, at, f.size)
            hashes[i].update(chunk)
            await write(chunk)
          }
          await write('\r\n')
        }
        await write(tail)
        if (chunked) await raw('0\r\n\r\n')
      } catch (err) {
        finish(err)
      }
    })
  })
}

/**
 * A TCP proxy to 127.0.0.1:`target` that forwards client-to-target bytes at no more than
 * `rate` bytes/s (all connections together; Infinity: as they come) and the answers as
 * they come: { port, forwarded() (bytes), close() }. `tap()`, called per connection,
 * returns a function that sees (and may change in place) each client-to-target chunk
 * before it is forwarded.
 */
function throttle (target, rate = Infinity, { tap = null } = {}) {
  let forwarded = 0
  // A token bucket: `rate` bytes a second, at most BURST at once (so an idle moment does
  // not become a burst).
  const BURST = 256 * KIB
  let tokens = BURST
  let last = Date.now()
  const sockets = new Set()
  const server = net.createServer((downstream) => {
    const upstream = net.connect(target, '127.0.0.1')
    sockets.add(downstream)
    sockets.add(upstream)
    let timer = null
    const see = tap === null ? null : tap()
    downstream.on('data', (data) => {
      if (see !== null) see(data)
      forwarded += data.length
      const drained = upstream.write(data)
      let wait = 0
      if (rate !== Infinity) {
        const now = Date.now()
        tokens = Math.min(BURST, tokens + (now - last) * rate / 1000) - data.length
        last = now
        if (tokens < 0) wait = -tokens / rate * 1000
      }
      if (!drained || wait > 0) {
        downstream.pause()
        let waits = (drained ? 0 : 1) + (wait > 0 ? 1 : 0)
        const go = () => { if (--waits === 0 && !downstream.destroyed) downstream.resume() }
        if (!drained) upstream.once('drain', go)
        if (wait > 0) timer = setTimeout(go, wait)
      }
    })
    upstream.on('data', (data) => downstream.write(data))
    const end = () => {
      clearTimeout(timer)
      downstream.destroy()
      upstream.destroy()
      sockets.delete(downstream)
      sockets.delete(upstream)
    }
    downstream.on('end', () => upstream.end())
    upstream.on('end', () => downstream.end())
    downstream.on('error', end)
    upstream.on('error', end)
    downstream.on('close', end)
    upstream.on('close', end)
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({
      port: server.address().port,
      forwarded: () => forwarded,
      close () {
        for (const s of sockets) s.destroy()
        server.close()
      }
    }))
  })
}

/**
 * Forks the upload server (./s3-server.js) for `kind` against `endpoint`: { port, reset(),
 * stats(), stop() }. collectMs: the server collects garbage that often to read what it
 * holds (peakLiveArrayBuffers, peakBytesInUse in stats()).
 */
async function startUploadServer (kind, { endpoint, bucket, credentials, collectMs = 0 }) {
  const child = fork(path.join(__dirname, 's3-server.js'), [kind], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: collectMs > 0 ? ['--expose-gc'] : [],
    env: { ...process.env, S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_ACCESS_KEY_ID: credentials.accessKeyId, S3_SECRET_ACCESS_KEY: credentials.secretAccessKey, S3_SERVER_COLLECT_MS: String(collectMs) }
  })
  const ask = (message, field) => new Promise((resolve, reject) => {
    const on = (m) => {
      if (!(field in m)) return
      child.off('message', on)
      resolve(m)
    }
    child.on('message', on)
    child.once('exit', (code) => reject(new Error(`upload server ${kind} exited (${code})`)))
    if (message !== null) child.send(message)
  })
  const { port } = await ask(null, 'port')
  return {
    port,
    pid: child.pid,
    reset: () => ask('reset', 'reset'),
    stats: () => ask('stats', 'cpuMicros'),
    stop () {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', resolve)
        child.disconnect()
        setTimeout(() => child.kill('SIGKILL'), 5000).unref()
      })
    }
  }
}

/** True where the peak RSS can be read and reset (/proc/self/clear_refs: Linux). */
const canMeasureRss = () => fs.existsSync('/proc/self/clear_refs')

module.exports = { sendForm, throttle, startUploadServer, chunkAt, canMeasureRss, MIB }
