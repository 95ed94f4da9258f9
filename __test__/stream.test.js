'use strict'
// bodyStream over the wire: a real uWS server on 127.0.0.1, bodies checked by sha256,
// consumers fast and slow, the client throttled by res.pause(), errors by status and
// type, and no native memory left after each scenario.
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { pipeline } = require('node:stream/promises')
const { AsyncLocalStorage } = require('node:async_hooks')
const uWS = require('uWebSockets.js')
const { request, bodyOf, sha256, sleep } = require('./helpers/client')
const { readAfterPause, drainsAfterPause } = require('./helpers/uws-build')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { ENCODERS, header, ready } = require('./helpers/encodings')
const { bodyStream, stats } = require('..')

const KIB = 1024
const MIB = 1024 * KIB

const als = new AsyncLocalStorage()
// What each request's stream did, by the request's x-id.
const seen = new Map()

/**
 * POST /stream: bodyStream with options from x-* headers, consumed by x-mode:
 *   fast     for await, hashing
 *   slow     reads 64 KiB every 10 ms
 *   destroy  destroys the stream after x-destroy-after bytes, answers "destroyed"
 *   file     stream.pipeline into a file in a temporary directory, hashes the file
 * Answers "<length> <sha256>", or "<status> <type>" (closing the connection) on error.
 */
function route (res, req) {
  const id = req.getHeader('x-id')
  const mode = req.getHeader('x-mode') || 'fast'
  const number = (name) => req.getHeader(name) === '' ? undefined : Number(req.getHeader(name))
  const record = { paused: 0, resumed: 0, maxBuffered: 0, store: [], error: null, closed: false }
  seen.set(id, record)
  const pause = res.pause.bind(res)
  const resume = res.resume.bind(res)
  res.pause = () => { record.paused++; return pause() }
  res.resume = () => { record.resumed++; return resume() }
  const answer = (status, text, close) => {
    if (res.aborted) return
    res.cork(() => res.writeStatus(status).end(text, close))
  }
  als.run({ id }, () => {
    const stream = bodyStream(res, req, { limit: number('x-limit'), timeout: number('x-timeout'), highWaterMark: number('x-hwm') })
    stream.on('error', (err) => {
      record.error = err
      record.store.push(als.getStore())
      answer(`${err.status} Error`, `${err.status} ${err.type}`, true)
    })
    stream.on('close', () => { record.closed = true })
    const hash = crypto.createHash('sha256')
    let length = 0
    const take = (chunk) => {
      hash.update(chunk)
      length += chunk.length
      record.maxBuffered = Math.max(record.maxBuffered, stream.readableLength)
    }
    const done = () => answer('200 OK', `${length} ${hash.digest('hex')}`)
    if (mode === 'fast') {
      (async () => {
        for await (const chunk of stream) take(chunk)
        record.store.push(als.getStore())
        done()
      })().catch(() => {})
    } else if (mode === 'slow') {
      const tick = () => {
        if (stream.destroyed) return
        const chunk = stream.read(64 * KIB) ?? stream.read()
        if (chunk !== null) take(chunk)
        if (stream.readableEnded) return
        setTimeout(tick, 10)
      }
      stream.on('end', done)
      stream.once('readable', tick)
    } else if (mode === 'destroy') {
      const after = number('x-destroy-after')
      stream.on('data', (chunk) => {
        take(chunk)
        if (length >= after) {
          stream.destroy()
          answer('200 OK', 'destroyed', true)
        }
      })
    } else if (mode === 'file') {
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-stream-')), 'body')
      pipeline(stream, fs.createWriteStream(file)).then(() => {
        const bytes = fs.readFileSync(file)
        fs.rmSync(path.dirname(file), { recursive: true })
        take(bytes)
        done()
      }, () => fs.rmSync(path.dirname(file), { recursive: true }))
    }
  })
}

let port, token
test.before(async () => {
  await ready
  const app = uWS.App().post('/stream', route)
  await new Promise((resolve, reject) => app.listen('127.0.0.1', 0, (t) => {
    if (!t) return reject(new Error('cannot listen'))
    token = t
    port = uWS.us_socket_local_port(t)
    resolve()
  }))
})
test.after(() => uWS.us_listen_socket_close(token))

let nextId = 0
function send (options) {
  const id = String(++nextId)
  const headers = { 'x-id': id, ...options.headers }
  return request(port, { path: '/stream', ...options, headers }).then((r) => ({ ...r, seen: seen.get(id) }))
}

const ok = (r, body) => assert.equal(r.body, `${body.length} ${sha256(body)}`, `status ${r.status}`)

test('every size arrives intact: with and without content-length, fast and through pipeline to a file', async () => {
  for (const size of [0, 1, 4 * KIB, 64 * KIB - 1, MIB + 1, 16 * MIB]) {
    const body = bodyOf(size)
    ok(await send({ body }), body)
    ok(await send({ body, chunked: true, chunkSize: size > MIB ? 300000 : 4093 }), body)
    ok(await send({ body, headers: { 'x-mode': 'file' } }), body)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('256 MiB, hash-checked, with the stream never holding more than highWaterMark and a uWS read', async () => {
  const body = bodyOf(256 * MIB, 3)
  const r = await send({ body, timeout: 120000 })
  ok(r, body)
  // 512 KiB highWaterMark, plus what uWS hands over after the client was paused.
  assert.ok(r.seen.maxBuffered <= 512 * KIB + readAfterPause, `buffered ${r.seen.maxBuffered}`)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('encoded bodies come out decoded, chunked or not, under any pace', async () => {
  const data = bodyOf(3 * MIB, 5).map((b) => b & 0x0f) // compressible
  for (const [name, encode] of Object.entries(ENCODERS)) {
    const sent = encode(data)
    const headers = { 'content-encoding': header(name) }
    ok(await send({ body: sent, headers }), data)
    ok(await send({ body: sent, headers, chunked: true, chunkSize: 1000, cuts: [7, 5000], pause: 2 }), data)
    const slow = await send({ body: sent, headers: { ...headers, 'x-mode': 'slow', 'x-hwm': String(64 * KIB) } })
    ok(slow, data)
    assert.ok(slow.seen.maxBuffered <= 64 * KIB + 128 * KIB, `${name}: buffered ${slow.seen.maxBuffered}`)
  }
  // A decompression bomb stops at the limit, and a corrupt body is 400.
  const bomb = zlib.gzipSync(Buffer.alloc(64 * MIB), { level: 9 })
  const r = await send({ body: bomb, headers: { 'content-encoding': 'gzip', 'x-limit': String(MIB) } })
  assert.equal(r.body, '413 entity.too.large')
  const corrupt = zlib.gzipSync(data)
  corrupt[corrupt.length - 5] ^= 1
  assert.equal((await send({ body: corrupt, headers: { 'content-encoding': 'gzip' } })).body, '400 encoding.invalid')
  assert.equal((await send({ body: corrupt, headers: { 'content-encoding': 'gzip', 'x-mode': 'slow' } })).body, '400 encoding.invalid')
  assert.equal((await send({ body: data, headers: { 'content-encoding': 'compress' } })).body, '415 encoding.unsupported')
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a slow consumer pauses the client: the server holds little, and the body is still whole', async () => {
  for (const chunked of [false, true]) {
    const body = bodyOf(8 * MIB, 9)
    const started = Date.now()
    const r = await send({ body, chunked, chunkSize: 65536, headers: { 'x-mode': 'slow', 'x-hwm': String(64 * KIB) } })
    ok(r, body)
    // 128 reads of 64 KiB, 10 ms apart: the client could not have finished sooner.
    assert.ok(Date.now() - started >= 1000, `${Date.now() - started} ms`)
    // Fewer, larger pauses where uWS drains the socket's queue after pause().
    const pauses = drainsAfterPause ? 2 : 10
    assert.ok(r.seen.paused >= pauses && r.seen.resumed >= r.seen.paused, `paused ${r.seen.paused}, resumed ${r.seen.resumed}`)
    // highWaterMark, plus what uWS hands over after pause() on this build.
    assert.ok(r.seen.maxBuffered <= 64 * KIB + readAfterPause, `buffered ${r.seen.maxBuffered}`)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('limit: 413 before any byte for a declared length, as bytes cross it otherwise', async () => {
  const body = bodyOf(5 * MIB)
  const declared = await send({ body, headers: { 'x-limit': String(MIB) } })
  assert.equal(declared.body, '413 entity.too.large')
  assert.equal(declared.seen.error.received, 0)
  const chunked = await send({ body, chunked: true, chunkSize: 100000, headers: { 'x-limit': String(MIB) } })
  assert.equal(chunked.body, '413 entity.too.large')
  assert.ok(chunked.seen.error.received > MIB)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('the client going away mid-body: request.aborted once, everything released', async () => {
  for (const headers of [{}, { 'content-encoding': 'gzip' }, { 'x-mode': 'slow' }]) {
    const body = headers['content-encoding'] ? zlib.gzipSync(bodyOf(4 * MIB)) : bodyOf(4 * MIB)
    const r = await send({ body, headers, stopAfter: body.length >> 1 })
    assert.ok(r.closed, JSON.stringify(r))
    await sleep(50)
    assert.equal(r.seen.error && r.seen.error.type, 'request.aborted')
    assert.equal(r.seen.closed, true)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('timeout: a trickling client gets 408 request.timeout and its connection closed', async () => {
  const started = Date.now()
  const body = bodyOf(1000)
  const cuts = Array.from({ length: 100 }, (_, i) => i * 10)
  const r = await send({ body, cuts, pause: 20, headers: { 'x-timeout': '300' } })
  assert.equal(r.body, '408 request.timeout')
  assert.equal(r.seen.error.code, 'ERR_BODY_TIMEOUT')
  assert.equal(r.seen.error.timeout, 300)
  assert.ok(Date.now() - started < 1500)
  // A body that arrives in time is not affected, and its timer is gone.
  ok(await send({ body, headers: { 'x-timeout': '5000' } }), body)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('destroy() mid-body stops reading, frees everything, and the answer still goes out', async () => {
  for (const headers of [{}, { 'content-encoding': 'gzip' }]) {
    const data = bodyOf(8 * MIB, 4)
    const body = headers['content-encoding'] ? zlib.gzipSync(data) : data
    const r = await send({ body, headers: { ...headers, 'x-mode': 'destroy', 'x-destroy-after': String(64 * KIB) } })
    assert.equal(r.body, 'destroyed')
    assert.equal(r.seen.error, null)
    assert.equal(r.seen.closed, true)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('handlers run in the async context bodyStream was called in', async () => {
  const body = bodyOf(2 * MIB)
  const r = await send({ body, chunked: true, chunkSize: 4096, cuts: [100], pause: 5 })
  ok(r, body)
  assert.deepEqual(r.seen.store, [{ id: String(nextId) }])
  const aborted = await send({ body, stopAfter: 1000 })
  await sleep(50)
  assert.deepEqual(aborted.seen.store, [{ id: String(nextId) }])
})

test('argument errors are TypeErrors before anything is attached', () => {
  let attached = 0
  const res = { onData () { attached++ }, onAborted () { attached++ }, pause () {}, resume () {} }
  assert.throws(() => bodyStream({}, {}), TypeError)
  assert.throws(() => bodyStream({ onData () {}, onAborted () {} }, {}), /pause and resume/)
  assert.throws(() => bodyStream(res, null), TypeError)
  assert.throws(() => bodyStream(res, {}, { limit: ' 10kb ' }), TypeError)
  assert.throws(() => bodyStream(res, {}, { timeout: -1 }), TypeError)
  assert.throws(() => bodyStream(res, {}, { timeout: 2 ** 31 }), TypeError)
  assert.throws(() => bodyStream(res, {}, { highWaterMark: '1' }), TypeError)
  assert.throws(() => bodyStream(res, {}, { inflate: 'no' }), TypeError)
  assert.throws(() => bodyStream(res, {}, { onAborted: 1 }), TypeError)
  assert.equal(attached, 0)
  assert.equal(stats().bytesInUse, 0)
})

test('an invalid content-length is a 400 error event, not a throw', async () => {
  const res = { onData () {}, onAborted () {}, pause () {}, resume () {} }
  const stream = bodyStream(res, { 'content-length': '1e3' })
  const [err] = await new Promise((resolve) => stream.on('error', (...a) => resolve(a)))
  assert.equal(err.status, 400)
  assert.equal(err.code, 'ERR_BODY_INVALID_LENGTH')
})
