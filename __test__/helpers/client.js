'use strict'
// A raw TCP HTTP/1.1 client that can cut a request anywhere and pause between pieces,
// so tests decide exactly how the body reaches uWS.
const net = require('node:net')
const crypto = require('node:crypto')
const { unchunk } = require('./early-clients')

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Deterministic pseudo-random bytes, so a failing case can be re-run exactly. */
function bodyOf (size, seed = size) {
  const out = Buffer.allocUnsafe(size)
  let x = (seed * 2654435761) >>> 0 || 1
  for (let i = 0; i < size; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}

const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex')

function chunkedEncode (body, pieceSize) {
  const parts = []
  for (let i = 0; i < body.length; i += pieceSize) {
    const piece = body.subarray(i, i + pieceSize)
    parts.push(Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n'))
  }
  parts.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(parts)
}

/**
 * Sends one request. `body` is sent with content-length (or chunked when
 * `chunked: true`), cut at `cuts` (byte offsets into the raw request bytes after the
 * head) with `pause` ms between pieces. `stopAfter` sends only that many body bytes,
 * then (after `pause`) closes, like a client that gives up (`reset: true`: with a TCP
 * reset instead of a FIN, like one that crashed). Resolves with
 * { status, body } or { closed: true } when the server hangs up without answering.
 * `path` defaults to /body; `declaredLength: false` sends no content-length at all.
 * `method` defaults to POST; `withHeaders: true` adds the response's headers (lower-case
 * names) as `headers`, for HEAD, whose answers carry none of the body.
 */
function request (port, { method = 'POST', withHeaders = false, path = '/body', body = Buffer.alloc(0), headers = {}, chunked = false, chunkSize = 8192, cuts = [], pause = 0, stopAfter = null, reset = false, declaredLength = null, timeout = 20000 } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setNoDelay(true)
    const received = []
    let done = false
    const timer = setTimeout(() => finish(new Error('request timed out: the server did not answer')), timeout)
    const finish = (err, value) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      if (err) reject(err)
      else resolve(value)
    }
    socket.on('data', (data) => {
      received.push(data)
      const response = parseResponse(Buffer.concat(received), method, withHeaders)
      if (response) finish(null, response)
    })
    socket.on('error', () => finish(null, { closed: true }))
    socket.on('close', () => finish(null, parseResponse(Buffer.concat(received), method, withHeaders) || { closed: true }))

    const head = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1']
    for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`)
    let payload
    if (chunked) {
      head.push('Transfer-Encoding: chunked')
      payload = chunkedEncode(body, chunkSize)
    } else {
      // declaredLength false: no length header at all (a request without a body).
      if (declaredLength !== false) head.push(`Content-Length: ${declaredLength ?? body.length}`)
      payload = body
    }
    if (stopAfter !== null) payload = payload.subarray(0, stopAfter)
    const send = async () => {
      socket.write(head.join('\r\n') + '\r\n\r\n')
      let at = 0
      for (const cut of [...cuts, payload.length]) {
        if (cut <= at || cut > payload.length) continue
        if (pause) await sleep(pause)
        if (done) return
        socket.write(payload.subarray(at, cut))
        at = cut
      }
      if (stopAfter !== null) {
        await sleep(pause || 20)
        if (reset) socket.resetAndDestroy()
        else socket.end()
      }
    }
    socket.on('connect', () => { send().catch(finish) })
  })
}

function parseResponse (raw, method, withHeaders) {
  const end = raw.indexOf('\r\n\r\n')
  if (end < 0) return null
  const head = raw.subarray(0, end).toString('latin1').split('\r\n')
  const status = Number(head[0].split(' ')[1])
  const lengthLine = head.find((l) => /^content-length:/i.test(l))
  let body
  if (!lengthLine && method !== 'HEAD' && head.some((l) => /^transfer-encoding: *chunked/i.test(l))) {
    // A chunked answer (write() on uWS).
    const chunked = unchunk(raw, end + 4)
    if (chunked === null) return null
    body = chunked.body
  } else {
    // A HEAD answer's content-length describes the GET answer; no body follows it.
    const length = lengthLine && method !== 'HEAD' ? Number(lengthLine.split(':')[1]) : 0
    if (raw.length < end + 4 + length) return null
    body = raw.subarray(end + 4, end + 4 + length)
  }
  const response = { status, body: body.toString() }
  if (withHeaders) {
    response.headers = {}
    for (const line of head.slice(1)) {
      const colon = line.indexOf(':')
      response.headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
  }
  return response
}

module.exports = { request, bodyOf, sha256, sleep }
