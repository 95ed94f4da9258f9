'use strict'
// The timeout option everywhere it exists: a body not complete in time fails with 408
// request.timeout (ERR_BODY_TIMEOUT), its memory freed at once; in time, nothing changes.
const test = require('node:test')
const assert = require('node:assert/strict')
const uWS = require('uWebSockets.js')
const ultimateExpress = require('ultimate-express')
const { request, bodyOf, sha256 } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { readBody, readText, bodyTimeout, BodyAccumulator, json, raw, stats } = require('..')

const MIB = 1024 * 1024
// A client that sends 10 bytes every 20 ms: never idle long enough for uWS's own timeout.
const trickle = (size) => ({ cuts: Array.from({ length: size / 10 }, (_, i) => i * 10), pause: 20 })

function listen (app) {
  return new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve({ port: uWS.us_socket_local_port(token), close: () => uWS.us_listen_socket_close(token) })))
}

test('readBody and readText: 408 for a trickling client, the connection closed by the answer', async () => {
  const errors = []
  const app = uWS.App()
  for (const [path, read] of [['/buffer', readBody], ['/text', readText]]) {
    app.post(path, (res, req) => {
      const timeout = Number(req.getHeader('x-timeout'))
      const maxPreallocated = 4 * MIB
      read(res, req, { timeout, limit: '8mb', maxPreallocated }).then(
        (body) => res.cork(() => res.end(`${body.length} ${sha256(body)}`)),
        (err) => {
          errors.push(err)
          // Held memory is already free when the promise rejects.
          errors.push(stats().bytesInUse)
          if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} Error`).end(`${err.status} ${err.type}`, true))
        })
    })
  }
  const server = await listen(app)
  try {
    for (const path of ['/buffer', '/text']) {
      const body = Buffer.alloc(MIB, 'a')
      const started = Date.now()
      const r = await request(server.port, { path, body, headers: { 'x-timeout': '250' }, ...trickle(1000) })
      assert.deepEqual(r, { status: 408, body: '408 request.timeout' })
      assert.ok(Date.now() - started < 2000)
      const [err, held] = errors.splice(0)
      assert.equal(err.code, 'ERR_BODY_TIMEOUT')
      assert.equal(err.timeout, 250)
      assert.ok(err.received > 0 && err.received < 1000, String(err.received))
      assert.equal(held, 0)
      // In time: the body, and no 408 later from a timer left behind.
      const small = Buffer.alloc(5000, 'b') // ASCII: the same length and hash as text
      assert.deepEqual(await request(server.port, { path, body: small, headers: { 'x-timeout': '100' } }), { status: 200, body: `5000 ${sha256(small)}` })
    }
    await new Promise((resolve) => setTimeout(resolve, 150))
    assert.deepEqual(errors, [])
  } finally {
    server.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('timeout options are checked like every other option', () => {
  const res = { onData () {}, onAborted () {} }
  for (const timeout of [-1, '100', 2 ** 31, NaN, {}]) {
    assert.throws(() => readBody(res, {}, { timeout }), TypeError, String(timeout))
    assert.throws(() => json({ timeout }), TypeError)
  }
  for (const timeout of [0, Infinity, undefined, null, 1, 2 ** 31 - 1]) {
    assert.doesNotThrow(() => readBody(res, {}, { timeout }).catch(() => {}))
  }
})

test('bodyTimeout: aborts the accumulator and hands over a 408; cancelled, it never fires', async () => {
  const acc = new BodyAccumulator({ contentLength: MIB, limit: '2mb', maxPreallocated: MIB })
  acc.push(Buffer.alloc(300 * 1024))
  assert.ok(stats().bytesInUse >= MIB)
  // The deadline's timer is unref'd (it never keeps a process alive): this one does.
  const alive = setTimeout(() => {}, 5000)
  const err = await new Promise((resolve) => bodyTimeout(acc, 50, resolve))
  assert.equal(err.status, 408)
  assert.equal(err.type, 'request.timeout')
  assert.equal(err.received, 300 * 1024)
  assert.equal(stats().bytesInUse, 0)
  assert.throws(() => acc.push(Buffer.alloc(1)), { code: 'ERR_BODY_STATE' })

  const kept = new BodyAccumulator({ limit: 100 })
  let fired = false
  const cancel = bodyTimeout(kept, 20, () => { fired = true })
  cancel()
  await new Promise((resolve) => setTimeout(resolve, 60))
  assert.equal(fired, false)
  assert.equal(kept.error, null)
  assert.throws(() => bodyTimeout({}, 10, () => {}), TypeError)
  assert.throws(() => bodyTimeout(kept, 10), TypeError)
  assert.throws(() => bodyTimeout(kept, -5, () => {}), TypeError)
  clearTimeout(alive)
})

test('the Express parsers under ultimate-express: 408 to the error handler', async () => {
  const app = ultimateExpress()
  app.post('/json', json({ timeout: 250 }), (req, res) => res.send('parsed'))
  app.post('/raw', raw({ type: '*/*', timeout: 250 }), (req, res) => res.send(`${req.body.length}`))
  app.use((err, req, res, next) => res.status(err.status).send(`${err.status} ${err.type}`))
  const port = await new Promise((resolve) => app.listen(0, '127.0.0.1', () => resolve(app.port)))
  try {
    for (const path of ['/json', '/raw']) {
      const body = Buffer.from(JSON.stringify({ a: 'x'.repeat(990) }))
      const r = await request(port, { path, body, headers: { 'content-type': 'application/json' }, ...trickle(1000) })
      assert.deepEqual({ status: r.status, body: r.body }, { status: 408, body: '408 request.timeout' }, path)
    }
    const r = await request(port, { path: '/raw', body: bodyOf(100), headers: { 'content-type': 'application/json' } })
    assert.equal(r.body, '100')
  } finally {
    app.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('deadlines of 10 s and more share one sweep: each fires once, after its time, never when cleared', () => {
  // Sweeps are called with a clock value; earlier tests left bodies that never end (300 s
  // deadlines, registered seconds ago), which these sweeps stay short of.
  const { startTimer, sweep, pendingDeadlines } = require('../lib/body/deadlines')
  const fired = []
  const start = Date.now()
  const before = pendingDeadlines()
  startTimer(200000, () => fired.push('a'))
  const clearB = startTimer(200000, () => fired.push('b'))
  startTimer(20000, () => fired.push('c'))
  assert.equal(pendingDeadlines(), before + 3)
  clearB()
  sweep(start + 19000)
  assert.deepEqual(fired, [], 'nothing before its time')
  sweep(start + 20001 + 1000)
  assert.deepEqual(fired, ['c'])
  sweep(start + 200001 + 1000)
  assert.deepEqual(fired, ['c', 'a'], 'the cleared one never fires')
  sweep(start + 250000)
  assert.deepEqual(fired, ['c', 'a'], 'each fires once')
  assert.equal(pendingDeadlines(), before)
})

test('deadlines: none for 0; under 10 s kept to the ms; from 10 s on a clock kept to the second', async () => {
  const { deadlineOf, passed } = require('../lib/body/deadlines')
  assert.equal(passed(deadlineOf(0)), false)
  const short = deadlineOf(30)
  assert.equal(passed(short), false)
  await new Promise((resolve) => setTimeout(resolve, 60))
  assert.equal(passed(short), true, 'a 30 ms deadline, 60 ms later')
  const long = deadlineOf(10000)
  assert.equal(passed(long), false)
  assert.ok(Math.abs(long - (Date.now() + 10000)) <= 1100, `the coarse deadline ${long - Date.now()} ms away`)
})
