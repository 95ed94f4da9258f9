'use strict'
// uws-body's Express parsers under ultimate-express: both reading paths, big bodies,
// aborts, next(err) exactly once, and what happens outside the frameworks it knows.
const test = require('node:test')
const assert = require('node:assert/strict')
const zlib = require('node:zlib')
const ultimateExpress = require('ultimate-express')
const express = require('express')
const uwsBody = require('..')
const { request, bodyOf, sha256, sleep } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const MIB = 1024 * 1024
const RAW = { 'content-type': 'application/octet-stream' }

function listen (app) {
  return new Promise((resolve) => app.listen(0, '127.0.0.1', () => resolve(app.port)))
}

/** An app whose POST /raw and /json report what reached them; `seen` records calls. */
async function start ({ before = [] } = {}) {
  const app = ultimateExpress()
  const seen = { next: 0, errors: [], paths: [] }
  const count = (parser) => (req, res, next) => {
    seen.paths.push(req.receivedData ? 'stream' : 'uws')
    parser(req, res, (err) => {
      seen.next++
      if (err) seen.errors.push(err)
      next(err)
    })
  }
  app.post('/raw', ...before, count(uwsBody.raw({ limit: '64mb' })), (req, res) => {
    res.send(`${req.body.length} ${sha256(req.body)}`)
  })
  app.post('/json', ...before, count(uwsBody.json({ limit: '1kb' })), (req, res) => res.json(req.body))
  app.use((err, req, res, next) => {
    if (!res.aborted) res.status(err.status || 500).send(`${err.status} ${err.type}`)
  })
  const port = await listen(app)
  return { app, port, seen, close: () => app.close() }
}

test('raw bodies of every size arrive intact over the uWS path', async () => {
  const s = await start()
  try {
    for (const size of [1, 65483, MIB + 3, 8 * MIB, 32 * MIB]) {
      const body = bodyOf(size)
      const expect = { status: 200, body: `${size} ${sha256(body)}` }
      assert.deepEqual(await request(s.port, { path: '/raw', headers: RAW, body }), expect)
      assert.deepEqual(await request(s.port, { path: '/raw', headers: RAW, body, chunked: true, chunkSize: 100003 }), expect)
    }
    assert.ok(s.seen.paths.every((p) => p === 'uws'), 'read straight from uWS')
  } finally {
    s.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('after an async middleware, data already flowing: read from the request stream', async () => {
  const wait = async (req, res, next) => { await sleep(30); next() }
  const s = await start({ before: [wait] })
  try {
    for (const size of [10, 300000, 3 * MIB]) {
      const body = bodyOf(size, 3)
      assert.deepEqual(await request(s.port, { path: '/raw', headers: RAW, body }), { status: 200, body: `${size} ${sha256(body)}` })
    }
    assert.ok(s.seen.paths.includes('stream'), `paths: ${s.seen.paths}`)
  } finally {
    s.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('next(err) exactly once: over the limit in many chunks, corrupt gzip, abort', async () => {
  const s = await start()
  try {
    const json = { 'content-type': 'application/json' }
    // Chunked, so the limit is found while bytes arrive, chunk after chunk.
    assert.deepEqual(await request(s.port, { path: '/json', headers: json, body: Buffer.from(JSON.stringify({ a: 'x'.repeat(5000) })), chunked: true, chunkSize: 100, cuts: [300, 600, 900, 1500], pause: 5 }),
      { status: 413, body: '413 entity.too.large' })
    const bad = zlib.gzipSync('{"a":1}')
    bad[15] ^= 0xff
    assert.deepEqual(await request(s.port, { path: '/json', headers: { ...json, 'content-encoding': 'gzip' }, body: bad }),
      { status: 400, body: '400 encoding.invalid' })
    const before = s.seen.next
    // The client gives up half way: the error goes to next() once, the memory is freed.
    const r = await request(s.port, { path: '/raw', headers: RAW, body: bodyOf(4 * MIB), stopAfter: 2 * MIB, pause: 30 })
    assert.deepEqual(r, { closed: true })
    await sleep(50)
    assert.equal(s.seen.next - before, 1)
    assert.equal(s.seen.errors.at(-1).type, 'request.aborted')
    assert.equal(s.seen.next, 3)
  } finally {
    s.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a client gone before the first byte or mid-body: a body in native memory is freed at once and next(err) runs once; a small one is watched from its first chunk that is not the last', async () => {
  const net = require('node:net')
  const s = await start()
  // Headers, `sent` bytes of the body, then the connection dropped.
  const drop = (declared, sent) => new Promise((resolve) => {
    const socket = net.connect(s.port, '127.0.0.1')
    socket.on('error', () => {})
    socket.on('connect', async () => {
      socket.write(`POST /raw HTTP/1.1\r\nHost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: ${declared}\r\n\r\n`)
      if (sent > 0) socket.write(Buffer.alloc(sent, 0x61))
      await sleep(50)
      socket.destroy()
      await sleep(50)
      resolve()
    })
  })
  try {
    // 4 MiB declared: preallocated natively (up to maxPreallocated) before any byte.
    let before = s.seen.next
    await drop(4 * MIB, 0)
    assert.equal(s.seen.next - before, 1, 'next(err) once')
    assert.equal(s.seen.errors.at(-1).type, 'request.aborted')
    assert.equal(uwsBody.stats().bytesInUse, 0, 'freed at the abort, not at a GC')
    // A small body, part of it sent: watched from that first chunk.
    before = s.seen.next
    await drop(3000, 1000)
    assert.equal(s.seen.next - before, 1, 'next(err) once')
    assert.equal(s.seen.errors.at(-1).type, 'request.aborted')
    // A small body, none of it sent: nothing native was held; next() is not called.
    before = s.seen.next
    await drop(3000, 0)
    assert.equal(s.seen.next - before, 0)
    assert.equal(uwsBody.stats().bytesInUse, 0)
    // The server goes on.
    const body = bodyOf(5000)
    assert.deepEqual(await request(s.port, { path: '/raw', headers: RAW, body }), { status: 200, body: `5000 ${sha256(body)}` })
  } finally {
    s.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a body is read once when uws-body and ultimate-express parsers are both mounted', async () => {
  const app = ultimateExpress()
  app.post('/both', uwsBody.json(), ultimateExpress.json(), (req, res) => res.json(req.body))
  const port = await listen(app)
  try {
    assert.deepEqual(await request(port, { path: '/both', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"once":true}') }),
      { status: 200, body: '{"once":true}' })
  } finally {
    app.close()
  }
})

test('plain Express (node:http) works through the stream path', async () => {
  const app = express()
  app.post('/raw', uwsBody.raw({ limit: '8mb' }), (req, res) => res.send(`${req.body.length} ${sha256(req.body)}`))
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  try {
    const body = bodyOf(3 * MIB)
    assert.deepEqual(await request(server.address().port, { path: '/raw', headers: RAW, body }), { status: 200, body: `${body.length} ${sha256(body)}` })
  } finally {
    server.close()
  }
})

test('an unknown framework gets a clear error; bad options are TypeErrors', () => {
  const req = { headers: { 'content-type': 'application/json', 'content-length': '2' }, body: undefined }
  let error
  uwsBody.json()(req, {}, (err) => { error = err })
  assert.ok(error instanceof TypeError)
  assert.match(error.message, /neither ultimate-express's nor a readable stream/)
  const fake = { ...req, _res: { onData () {} } }
  uwsBody.json()(fake, {}, (err) => { error = err })
  assert.match(error.message, /not the ultimate-express 2.x fields/)
  assert.throws(() => uwsBody.json({ limit: 'lots' }), TypeError)
  assert.throws(() => uwsBody.json({ verify: 'yes' }), TypeError)
  assert.throws(() => uwsBody.urlencoded({ parameterLimit: 0 }), TypeError)
  assert.throws(() => uwsBody.urlencoded({ extended: true, depth: -1 }), TypeError)
  assert.throws(() => uwsBody.urlencoded({ defaultCharset: 'koi8-r' }), TypeError)
})

test('a body on GET, DELETE or OPTIONS is read from uWS; once uWS dropped it, a clear 500', async () => {
  const app = ultimateExpress()
  const errors = []
  const later = async (req, res, next) => { await sleep(20); next() }
  const record = (req, res, next) => uwsBody.json()(req, res, (err) => { if (err) errors.push(err); next(err) })
  app.all('/now', record, (req, res) => res.json(req.body))
  app.all('/later', later, record, (req, res) => res.json(req.body))
  app.use((err, req, res, next) => { res.status(err.status).send(err.code) })
  const port = await listen(app)
  const json = { 'content-type': 'application/json' }
  const send = (method, path, body, options) => request(port, { method, path, headers: json, body: Buffer.from(body), ...options })
  try {
    for (const method of ['GET', 'DELETE', 'OPTIONS']) {
      assert.deepEqual(await send(method, '/now', '{"read":1}'), { status: 200, body: '{"read":1}' })
      // Bytes that arrive after the handler returned, chunked, in pieces.
      assert.deepEqual(await send(method, '/now', '{"read":2}', { chunked: true, chunkSize: 3, cuts: [4], pause: 20 }), { status: 200, body: '{"read":2}' })
      // An async middleware ran first: the handler returned and uWS dropped the bytes.
      assert.deepEqual(await send(method, '/later', '{"gone":1}'), { status: 500, body: 'ERR_BODY_GONE' })
    }
    // POST is read into the request stream by ultimate-express, so nothing is lost.
    assert.deepEqual(await send('POST', '/later', '{"kept":1}'), { status: 200, body: '{"kept":1}' })
    // No body: nothing to read, nothing lost.
    assert.deepEqual(await request(port, { method: 'GET', path: '/later', headers: json, declaredLength: false }), { status: 200, body: '' })
    assert.equal(errors.length, 3)
    assert.match(errors[0].message, /body of this GET request is gone.*'body methods'/)
    assert.equal(errors[0].expose, false)
  } finally {
    app.close()
  }
  // With the method among 'body methods', ultimate-express keeps the bytes in the stream.
  const kept = ultimateExpress()
  kept.set('body methods', ['DELETE'])
  kept.delete('/later', async (req, res, next) => { await sleep(20); next() }, uwsBody.json(), (req, res) => res.json(req.body))
  const keptPort = await listen(kept)
  try {
    assert.deepEqual(await request(keptPort, { method: 'DELETE', path: '/later', headers: json, body: Buffer.from('{"kept":2}') }), { status: 200, body: '{"kept":2}' })
  } finally {
    kept.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})
