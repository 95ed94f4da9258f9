'use strict'
// Clients that send a large body and report what they received, for the early-answer
// probe and tests: each `send` resolves (never rejects) with
//   { ok: true, status, body }              the whole answer arrived
//   { ok: false, status?, error, ...}       it did not: error is the client's error code
// `ok` means the application using that client sees the answer's status and body.
//   kind: 'http-ka'    node:http, keep-alive agent (one connection reused across tries)
//         'http-close' node:http, agent without keep-alive (sends Connection: close)
//         'fetch'      fetch (undici; always keep-alive)
//         'curl'       curl, one process per try (keep-alive by default; with
//                      close: true, -H 'Connection: close')
//         'raw'        a plain TCP client that writes as fast as the socket takes it (or,
//                      with rate, that many bytes a second) and parses the first answer;
//                      with close: false it then sends a GET on the same connection and
//                      checks that one too (`next`); `early: true` when the answer came
//                      before its last byte was written
// Every kind sends `headers` (an object) with its request.
const http = require('node:http')
const net = require('node:net')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')

const PIECE = 64 * 1024

function curlPath () {
  const r = spawnSync('curl', ['--version'], { encoding: 'utf8' })
  return r.status === 0 ? 'curl' : null
}

/** A client of `kind`; call close() when done (ends keep-alive connections). */
function client (kind, { port, close = false, chunked = false, timeout = 10000, headers = {}, rate = 0 }) {
  if (kind === 'http-ka' || kind === 'http-close') return httpClient(port, kind === 'http-ka', chunked, timeout, headers)
  if (kind === 'fetch') return fetchClient(port, chunked, timeout, headers)
  if (kind === 'curl') return curlClient(port, close, chunked, timeout, headers)
  if (kind === 'raw') return rawClient(port, close, chunked, timeout, headers, rate)
  throw new Error(`unknown client kind ${kind}`)
}

function httpClient (port, keepAlive, chunked, timeout, extra) {
  // Node sends Connection: close only for an agent without keep-alive and with no socket
  // limit; a keep-alive agent with one socket makes every try reuse one connection.
  const agent = keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : new http.Agent({ keepAlive: false })
  return {
    close () { agent.destroy() },
    // Done when the answer has ended and the request has been written whole: a request
    // whose writing stalls after the answer (node:http stops forwarding 'drain' once an
    // answer is complete) holds its keep-alive connection until the server times it out.
    send (urlPath, body) {
      return new Promise((resolve) => {
        let done = false
        let answer = null
        let written = false
        const finish = (value) => {
          if (done) return
          done = true
          clearTimeout(timer)
          resolve(value)
        }
        const settle = () => { if (answer !== null && written) finish(answer) }
        const timer = setTimeout(() => {
          finish(answer !== null ? { ...answer, ok: false, error: 'the request was never written whole' } : { ok: false, error: 'timeout' })
          req.destroy()
        }, timeout)
        const headers = { 'content-type': 'application/octet-stream', ...extra }
        if (!chunked) headers['content-length'] = body.length
        const req = http.request({ host: '127.0.0.1', port, path: urlPath, method: 'POST', agent, headers }, (res) => {
          const parts = []
          res.on('data', (d) => parts.push(d))
          res.on('end', () => {
            answer = { ok: true, status: res.statusCode, body: Buffer.concat(parts).toString() }
            settle()
          })
          res.on('error', (err) => finish({ ok: false, status: res.statusCode, error: `res ${err.code || err.message}` }))
          res.on('aborted', () => finish({ ok: false, status: res.statusCode, error: 'res aborted' }))
        })
        req.on('error', (err) => finish({ ok: false, error: (answer !== null ? 'after the answer: ' : '') + (err.code || err.message) }))
        req.on('finish', () => {
          written = true
          settle()
        })
        // As pipe() writes: a piece at a time, waiting for 'drain'.
        let at = 0
        const write = () => {
          while (at < body.length) {
            const piece = body.subarray(at, at + PIECE)
            at += piece.length
            if (!req.write(piece)) return req.once('drain', write)
          }
          req.end()
        }
        write()
      })
    }
  }
}

function fetchClient (port, chunked, timeout, headers) {
  return {
    close () {},
    async send (urlPath, body) {
      const signal = AbortSignal.timeout(timeout)
      try {
        const init = { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...headers }, signal }
        if (chunked) {
          let at = 0
          init.body = new ReadableStream({
            pull (controller) {
              if (at >= body.length) return controller.close()
              controller.enqueue(body.subarray(at, at + PIECE))
              at += PIECE
            }
          })
          init.duplex = 'half'
        } else {
          init.body = body
        }
        const res = await fetch(`http://127.0.0.1:${port}${urlPath}`, init)
        const text = await res.text()
        return { ok: true, status: res.status, code: res.headers.get('x-code'), body: text }
      } catch (err) {
        const cause = err.cause || err
        return { ok: false, error: cause.code || cause.name || cause.message }
      }
    }
  }
}

function curlClient (port, close, chunked, timeout, headers) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-curl-'))
  const files = new Map()
  return {
    close () { fs.rmSync(dir, { recursive: true, force: true }) },
    send (urlPath, body) {
      let file = files.get(body)
      if (file === undefined) {
        file = path.join(dir, `body-${files.size}`)
        fs.writeFileSync(file, body)
        files.set(body, file)
      }
      const args = ['-sS', '-o', '-', '-D', '-', '--max-time', String(timeout / 1000),
        '-H', 'content-type: application/octet-stream', '--data-binary', `@${file}`]
      if (close) args.push('-H', 'Connection: close')
      for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`)
      if (chunked) args.push('-H', 'Transfer-Encoding: chunked')
      args.push(`http://127.0.0.1:${port}${urlPath}`)
      return new Promise((resolve) => {
        const child = spawn('curl', args, { stdio: ['ignore', 'pipe', 'pipe'] })
        const out = []
        const err = []
        child.stdout.on('data', (d) => out.push(d))
        child.stderr.on('data', (d) => err.push(d))
        child.on('close', (code) => {
          const text = Buffer.concat(out).toString('latin1')
          // The last response head (curl prints 100 Continue's too).
          const heads = [...text.matchAll(/HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n/g)]
          const last = heads[heads.length - 1]
          const status = last ? Number(last[1]) : undefined
          const headerText = last ? last[2] : ''
          const codeHeader = /x-code: *([^\r\n]+)/i.exec(headerText)
          const bodyText = last ? text.slice(last.index + last[0].length) : ''
          if (code === 0) resolve({ ok: true, status, code: codeHeader ? codeHeader[1] : undefined, body: bodyText })
          else resolve({ ok: false, status, error: `curl exit ${code}` })
        })
      })
    }
  }
}

function rawClient (port, close, chunked, timeout, headers, rate) {
  return {
    close () {},
    send (urlPath, body) {
      return new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1')
        let done = false
        let received = Buffer.alloc(0)
        let first = null
        let written = false
        const finish = (value) => {
          if (done) return
          done = true
          clearTimeout(timer)
          socket.destroy()
          resolve(value)
        }
        const timer = setTimeout(() => finish(first ? { ...first, next: 'timeout' } : { ok: false, error: 'timeout' }), timeout)
        socket.on('error', (err) => finish(first ? { ...first, next: err.code } : { ok: false, error: err.code }))
        socket.on('close', () => {
          if (first !== null) return finish({ ...first, next: first.next || 'closed' })
          // An answer without content-length or chunked ends with the connection.
          const end = received.indexOf('\r\n\r\n')
          if (end < 0) return finish({ ok: false, error: 'closed' })
          const status = Number(received.subarray(0, end).toString('latin1').split(' ')[1])
          finish({ ok: true, status, body: received.subarray(end + 4).toString(), untilClose: true })
        })
        socket.on('data', (data) => {
          received = Buffer.concat([received, data])
          for (;;) {
            const parsed = parseOne(received)
            if (parsed === null) return
            received = received.subarray(parsed.used)
            if (first === null) {
              first = { ok: true, status: parsed.status, code: parsed.headers['x-code'], body: parsed.body, early: !written }
              if (close) return finish(first)
            } else {
              return finish({ ...first, next: parsed.status })
            }
          }
        })
        const head = `POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\n` +
          (close ? 'Connection: close\r\n' : '') +
          Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') +
          (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${body.length}\r\n`) + '\r\n'
        // Fast: pieces of PIECE bytes as the socket takes them; with rate, a tenth of it
        // every 100 ms.
        const size = rate > 0 ? Math.ceil(rate / 10) : PIECE
        socket.on('connect', () => {
          socket.write(head)
          let at = 0
          const write = () => {
            while (at < body.length && !done) {
              const piece = body.subarray(at, at + size)
              at += piece.length
              let framed = chunked ? Buffer.concat([Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n')]) : piece
              if (at === body.length) {
                // The body's last byte (and, chunked, its end) is written from here on.
                written = true
                if (chunked) framed = Buffer.concat([framed, Buffer.from('0\r\n\r\n')])
              }
              if (rate > 0) return socket.write(framed, () => setTimeout(write, 100))
              if (!socket.write(framed)) return socket.once('drain', write)
            }
            if (done) return
            if (!written && chunked) socket.write('0\r\n\r\n')
            written = true
            // Keep-alive: the next request on the same connection.
            if (!close) socket.write('GET /next HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
          }
          write()
        })
      })
    }
  }
}

/** One HTTP/1.1 response from the start of `buf` (content-length or chunked), or null. */
function parseOne (buf) {
  const end = buf.indexOf('\r\n\r\n')
  if (end < 0) return null
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n')
  const status = Number(lines[0].split(' ')[1])
  const headers = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const at = end + 4
  if (status === 100) return { status, headers, body: '', used: at }
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length'])
    if (buf.length < at + length) return null
    return { status, headers, body: buf.subarray(at, at + length).toString(), used: at + length }
  }
  if (/chunked/i.test(headers['transfer-encoding'] || '')) {
    const chunked = unchunk(buf, at)
    return chunked === null ? null : { status, headers, body: chunked.body.toString(), used: chunked.used }
  }
  return null // until the connection closes: not parsed here
}

/** A chunked body from `at`: { body, used } (the bytes up to its end), or null while incomplete. */
function unchunk (buf, at) {
  const parts = []
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at)
    if (lineEnd < 0) return null
    const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16)
    if (buf.length < lineEnd + 2 + size + 2) return null
    if (size === 0) return { body: Buffer.concat(parts), used: lineEnd + 4 }
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

module.exports = { client, curlPath, parseOne, unchunk }
