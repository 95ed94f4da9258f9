'use strict'
// AsyncLocalStorage: code that resumes after a body is read (next, verify, the error
// handler, readBody's continuations and onAborted) runs in the async context of the code
// that asked for the body, as with body-parser, under ultimate-express, Express 5 and
// bare uWS. The body's bytes arrive in uWS or socket callbacks that belong to no request,
// so without binding, the store is lost.
const test = require('node:test')
const assert = require('node:assert/strict')
const zlib = require('node:zlib')
const { AsyncLocalStorage } = require('node:async_hooks')
const uWS = require('uWebSockets.js')
const express = require('express')
const ultimateExpress = require('ultimate-express')
const uwsBody = require('..')
const { request, sleep } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const als = new AsyncLocalStorage()
const storeId = () => (als.getStore() ? als.getStore().id : null)
const JSON_TYPE = { 'content-type': 'application/json', 'x-id': 'j' }

/** The same routes on either framework; every answer says which store its code saw. */
async function startFramework (name) {
  const app = name === 'express' ? express() : ultimateExpress()
  app.set('env', 'test')
  const seen = { verify: [], next: [] }
  app.use((req, res, next) => als.run({ id: req.headers['x-id'] }, next))
  const record = (parser) => (req, res, next) => parser(req, res, (err) => {
    seen.next.push({ store: storeId(), type: err ? err.type : null })
    next(err)
  })
  const verify = (req, res, buf) => { seen.verify.push(storeId()) }
  const later = async (req, res, next) => { await sleep(20); next() }
  const answer = (req, res) => res.json({ store: storeId(), body: Buffer.isBuffer(req.body) ? req.body.length : req.body })
  app.post('/json', record(uwsBody.json({ verify, limit: '1kb' })), answer)
  app.post('/json-later', later, record(uwsBody.json()), answer)
  app.post('/raw', record(uwsBody.raw()), answer)
  app.post('/text', record(uwsBody.text()), answer)
  app.post('/urlencoded', record(uwsBody.urlencoded()), answer)
  app.use((err, req, res, next) => {
    if (res.aborted) return
    res.status(err.status || 500).json({ store: storeId(), type: err.type })
  })
  if (name === 'express') {
    const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
    return { port: server.address().port, seen, close: () => server.close() }
  }
  await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve))
  return { port: app.port, seen, close: () => app.close() }
}

for (const framework of ['ultimate-express', 'express']) {
  test(`${framework}: next, verify and the error handler run in the caller's async context`, async () => {
    const s = await startFramework(framework === 'express' ? 'express' : 'ultimate')
    const logged = console.error
    console.error = () => {}
    try {
      const send = (path, headers, body, options = {}) => request(s.port, { path, headers, body: Buffer.from(body), ...options })
      assert.deepEqual(await send('/json', JSON_TYPE, '{"a":1}'), { status: 200, body: '{"store":"j","body":{"a":1}}' })
      // Bytes that arrive after the handler returned, in several pieces.
      assert.deepEqual(await send('/json', JSON_TYPE, '{"a":2}', { cuts: [1, 4], pause: 10 }), { status: 200, body: '{"store":"j","body":{"a":2}}' })
      assert.deepEqual(await send('/json', JSON_TYPE, '{"a":3}', { chunked: true, chunkSize: 2, cuts: [5], pause: 10 }), { status: 200, body: '{"store":"j","body":{"a":3}}' })
      assert.deepEqual(await send('/json', { ...JSON_TYPE, 'content-encoding': 'gzip' }, zlib.gzipSync('{"gz":1}')), { status: 200, body: '{"store":"j","body":{"gz":1}}' })
      // Errors: parse, size, decoding.
      assert.deepEqual(await send('/json', JSON_TYPE, '{"a":'), { status: 400, body: '{"store":"j","type":"entity.parse.failed"}' })
      assert.deepEqual(await send('/json', JSON_TYPE, `{"a":"${'x'.repeat(2000)}"}`, { chunked: true, chunkSize: 100 }), { status: 413, body: '{"store":"j","type":"entity.too.large"}' })
      assert.deepEqual(await send('/json', { ...JSON_TYPE, 'content-encoding': 'gzip' }, 'not gzip'), { status: 400, body: '{"store":"j","type":"encoding.invalid"}' })
      // Behind an async middleware (ultimate-express: the request-stream path).
      assert.deepEqual(await send('/json-later', { ...JSON_TYPE, 'x-id': 'later' }, '{"b":1}'), { status: 200, body: '{"store":"later","body":{"b":1}}' })
      assert.deepEqual(await send('/raw', { 'content-type': 'application/octet-stream', 'x-id': 'r' }, 'abc'), { status: 200, body: '{"store":"r","body":3}' })
      assert.deepEqual(await send('/text', { 'content-type': 'text/plain', 'x-id': 't' }, 'hi'), { status: 200, body: '{"store":"t","body":"hi"}' })
      assert.deepEqual(await send('/urlencoded', { 'content-type': 'application/x-www-form-urlencoded', 'x-id': 'u' }, 'a=1'), { status: 200, body: '{"store":"u","body":{"a":"1"}}' })
      // Nothing to read: next runs at once, in the caller's context either way.
      assert.deepEqual(await send('/json', { 'content-type': 'text/plain', 'x-id': 'skip' }, 'x'), { status: 200, body: '{"store":"skip"}' })
      assert.deepEqual(s.seen.verify, ['j', 'j', 'j', 'j', 'j'])
      // A client that goes away: next(err) still runs in the request's context.
      const before = s.seen.next.length
      // (What the client gets, if anything, is the framework's business.)
      await send('/raw', { 'content-type': 'application/octet-stream', 'x-id': 'gone' }, 'x'.repeat(5000), { stopAfter: 100, pause: 20 })
      for (let i = 0; i < 50 && s.seen.next.length === before; i++) await sleep(10)
      assert.deepEqual(s.seen.next.slice(before), [{ store: 'gone', type: 'request.aborted' }])
    } finally {
      console.error = logged
      s.close()
    }
    assert.equal(await bytesInUseAfterGc(), 0)
  })
}

/** A bare uWS app whose handler reads the body inside als.run and reports what its continuations saw. */
function startUws (handler) {
  const app = uWS.App()
  app.post('/body', handler)
  return new Promise((resolve) => {
    app.listen('127.0.0.1', 0, (token) => resolve({ port: uWS.us_socket_local_port(token), close: () => uWS.us_listen_socket_close(token) }))
  })
}

test('bare uWS: readBody and readText continuations, and onAborted, see the store of als.run', async () => {
  const seen = []
  const server = await startUws((res, req) => {
    const id = req.getHeader('x-id')
    const text = req.getHeader('x-text') === 'yes'
    als.run({ id }, () => {
      const options = { limit: 100, onAborted: () => seen.push(['onAborted', storeId()]) }
      const body = text ? uwsBody.readText(res, req, options) : uwsBody.readBody(res, req, options)
      body.then(() => seen.push(['then', storeId()]), (err) => seen.push(['catch', storeId(), err.type]))
      ;(async () => {
        try {
          const value = await body
          seen.push(['await', storeId()])
          if (!res.aborted) res.cork(() => res.end(`${storeId()} ${value.length}`))
        } catch (err) {
          seen.push(['await-catch', storeId()])
          if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} Error`).end(`${storeId()} ${err.type}`))
        }
      })()
    })
  })
  try {
    assert.deepEqual(await request(server.port, { headers: { 'x-id': 'a' }, body: Buffer.from('hello'), cuts: [2], pause: 10 }), { status: 200, body: 'a 5' })
    assert.deepEqual(await request(server.port, { headers: { 'x-id': 'b', 'x-text': 'yes' }, body: Buffer.from('hé'), chunked: true, chunkSize: 1 }), { status: 200, body: 'b 2' })
    assert.deepEqual(await request(server.port, { headers: { 'x-id': 'c' }, body: Buffer.alloc(200), chunked: true, chunkSize: 50 }), { status: 413, body: 'c entity.too.large' })
    assert.deepEqual(await request(server.port, { headers: { 'x-id': 'd' }, body: Buffer.alloc(80), stopAfter: 10, pause: 20 }), { closed: true })
    for (let i = 0; i < 50 && seen.length < 9; i++) await sleep(10)
    assert.deepEqual(seen, [
      ['then', 'a'], ['await', 'a'],
      ['then', 'b'], ['await', 'b'],
      ['catch', 'c', 'entity.too.large'], ['await-catch', 'c'],
      ['onAborted', 'd'], ['catch', 'd', 'request.aborted'], ['await-catch', 'd']
    ])
  } finally {
    server.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})
