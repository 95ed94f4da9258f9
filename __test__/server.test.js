'use strict'
// Over the wire: a real uWS server on 127.0.0.1, a raw TCP client that cuts requests
// anywhere. Every body is compared by sha256; every error by status and type.
const test = require('node:test')
const assert = require('node:assert/strict')
const { startServer } = require('./helpers/server')
const { request, bodyOf, sha256, sleep } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { readBody } = require('..')

const KIB = 1024
const MIB = 1024 * KIB
const SIZES = [0, 1, 4 * KIB, 64 * KIB, MIB - 1, MIB + 1, 8 * MIB, 32 * MIB]

let server
test.before(async () => { server = await startServer() })
test.after(() => server.close())

const expectBody = (r, body) => assert.deepEqual(r, { status: 200, body: `${body.length} ${sha256(body)}` })

test('every size arrives intact, with content-length and chunked', async () => {
  for (const size of SIZES) {
    const body = bodyOf(size)
    const headers = { 'x-limit': String(64 * MIB) }
    expectBody(await request(server.port, { body, headers }), body)
    expectBody(await request(server.port, { body, headers, chunked: true, chunkSize: size > MIB ? 300000 : 4093 }), body)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('bodies cut at arbitrary offsets with pauses', async () => {
  const headers = { 'x-limit': String(4 * MIB) }
  for (const size of [2, 100, 70000, MIB + 1]) {
    const body = bodyOf(size, 7)
    for (const cuts of [[1], [size - 1], [1, 2, 3], [Math.floor(size / 3), Math.floor(size / 2)], [65483, 65484, 524288]]) {
      expectBody(await request(server.port, { body, headers, cuts, pause: 3 }), body)
      expectBody(await request(server.port, { body, headers, cuts, pause: 3, chunked: true, chunkSize: 777 }), body)
    }
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('declared length over the limit: 413 before reading, the connection answers', async () => {
  const r = await request(server.port, { body: bodyOf(5000), headers: { 'x-limit': '1000' }, cuts: [10], pause: 50 })
  assert.deepEqual(r, { status: 413, body: '413 entity.too.large' })
  // A client that declares a huge body and sends almost nothing still gets its 413.
  // (From 2^30 on, this uWS build closes such connections itself before any answer.)
  const huge = await request(server.port, { body: bodyOf(10), declaredLength: 999999999, stopAfter: 1, pause: 100 })
  assert.deepEqual(huge, { status: 413, body: '413 entity.too.large' })
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('bytes over the limit: 413 as they arrive, for chunked and large bodies', async () => {
  for (const [size, limit] of [[1000, 10], [300000, 100000], [4 * MIB, 2 * MIB]]) {
    const body = bodyOf(size)
    const headers = { 'x-limit': String(limit) }
    const r = await request(server.port, { body, headers, chunked: true, chunkSize: 4096, cuts: [limit / 2], pause: 20 })
    assert.deepEqual(r, { status: 413, body: '413 entity.too.large' }, `${size}/${limit}`)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a client that stops sending and closes: rejected as aborted, memory freed', async () => {
  for (const [size, stopAfter] of [[1000, 500], [4 * MIB, 1.5 * MIB], [200, 0]]) {
    const errorsBefore = server.seen.errors.length
    const r = await request(server.port, { body: bodyOf(size), stopAfter, pause: 30, headers: { 'x-limit': String(8 * MIB) } })
    assert.deepEqual(r, { closed: true })
    await sleep(30)
    const err = server.seen.errors[errorsBefore]
    assert.equal(err?.type, 'request.aborted')
    assert.equal(err.status, 400)
    assert.equal(err.received, stopAfter)
    assert.equal(err.expected, size)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('invalid content-length never reaches the handler as a body', async () => {
  // uWS itself answers malformed lengths with 400 before any handler runs; either way
  // the client gets a 400 and no body is accepted.
  const r = await request(server.port, { body: bodyOf(10), declaredLength: '1x0' })
  assert.ok(r.closed || r.status === 400, JSON.stringify(r))
})

test('unsupported content-encoding: 415', async () => {
  const r = await request(server.port, { body: bodyOf(100), headers: { 'Content-Encoding': 'compress' } })
  assert.deepEqual(r, { status: 415, body: '415 encoding.unsupported' })
})

test('concurrent uploads of mixed sizes', async () => {
  const sizes = [0, 10, 5000, 70000, 600000, 2 * MIB + 3, 9 * MIB]
  const jobs = []
  for (let i = 0; i < 28; i++) {
    const body = bodyOf(sizes[i % sizes.length], i)
    jobs.push(request(server.port, { body, chunked: i % 2 === 1, chunkSize: 65483, cuts: [100, 200000], pause: 5, headers: { 'x-limit': String(16 * MIB) } })
      .then((r) => expectBody(r, body)))
  }
  await Promise.all(jobs)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('readBody validates its arguments', () => {
  assert.throws(() => readBody({}, {}), TypeError)
  assert.throws(() => readBody(null, {}), TypeError)
  const res = { onData () {}, onAborted () {} }
  assert.throws(() => readBody(res, 'x'), TypeError)
  assert.throws(() => readBody(res, {}, 5), TypeError)
  assert.throws(() => readBody(res, {}, { limit: {} }), TypeError)
})

test('readBody accepts a plain headers object', async () => {
  let onData
  const res = { onData (cb) { onData = cb }, onAborted () {} }
  const promise = readBody(res, { 'content-length': '3' })
  onData(new Uint8Array([1, 2]).buffer, false)
  onData(new Uint8Array([3]).buffer, true)
  assert.deepEqual([...await promise], [1, 2, 3])
})

test('readText over the wire: the decoded string, both tiers', async () => {
  const { readText } = require('..')
  const uWS = require('uWebSockets.js')
  const app = uWS.App().post('/body', (res, req) => {
    readText(res, req, { limit: '8mb' }).then((text) => {
      if (!res.aborted) res.cork(() => res.end(`${text.length} ${text.slice(0, 12)}`))
    }, (err) => { if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} E`).end()) })
  })
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (t) => resolve(uWS.us_socket_local_port(t))))
  try {
    for (const repeat of [3, 40000]) {
      const text = 'ünïcödé ✓ '.repeat(repeat)
      const r = await request(port, { body: Buffer.from(text), cuts: [1, 2, 3, 1000], pause: 2 })
      assert.deepEqual(r, { status: 200, body: `${text.length} ${text.slice(0, 12)}` })
    }
  } finally {
    app.close()
  }
})
