'use strict'
// Digests (issue 42): every algorithm and header against node:crypto, over a real uWS
// server; wrong, truncated and malformed headers; encoded bodies, where Content-Digest is
// over the bytes sent and Repr-Digest over the decoded ones; chunked and known lengths;
// the 400 reaching the client from readBody, and next(err) from the parsers under
// ultimate-express and Express.
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const zlib = require('node:zlib')
const { Writable } = require('node:stream')
const uWS = require('uWebSockets.js')
const ultimateExpress = require('ultimate-express')
const express = require('express')
const uwsBody = require('..')
const { readBody, readText, BodyAccumulator } = uwsBody
const { request, bodyOf } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const KIB = 1024
const MIB = 1024 * KIB

const hash = (algorithm, bytes) => crypto.createHash(algorithm).update(bytes).digest()

// CRC-32C (Castagnoli, reflected 0x82F63B78), bit by bit: node:crypto has no CRC-32C.
function crc32c (bytes) {
  let crc = 0xffffffff
  for (const byte of bytes) {
    crc ^= byte
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0x82f63b78 & -(crc & 1))
  }
  const out = Buffer.alloc(4)
  out.writeUInt32BE((crc ^ 0xffffffff) >>> 0)
  return out
}

const sf = (algorithm, bytes) => `${algorithm === 'sha256' ? 'sha-256' : 'sha-512'}=:${hash(algorithm, bytes).toString('base64')}:`
const md5Header = (bytes) => hash('md5', bytes).toString('base64')

/**
 * A uWS server: POST /read reads with readBody (x-digest: the digest option, 'off' or a
 * comma list) and answers "<length> <sha256 hex> <digests as JSON>" or "<status> <code>".
 */
function startServer () {
  const app = uWS.App()
  const seen = { delivered: 0 }
  app.post('/read', (res, req) => {
    const option = req.getHeader('x-digest')
    const text = req.getHeader('x-text') === 'yes'
    let digests = null
    const options = { limit: 64 * MIB }
    if (option === 'off') options.digest = false
    else if (option !== '') {
      options.digest = option.split(',')
      options.onDigest = (d) => { digests = d }
    }
    const read = text ? readText(res, req, { ...options, encoding: 'latin1' }) : readBody(res, req, options)
    read.then(
      (body) => {
        seen.delivered++
        const bytes = text ? Buffer.from(body, 'latin1') : body
        const shown = digests && Object.fromEntries(Object.entries(digests).map(([k, v]) => [k, v.toString('hex')]))
        if (!res.aborted) res.cork(() => res.end(`${bytes.length} ${hash('sha256', bytes).toString('hex')} ${JSON.stringify(shown)}`))
      },
      (err) => {
        if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} Error`).end(`${err.status} ${err.code} ${err.header || ''} ${err.algorithm || ''}`))
      }
    )
  })
  return new Promise((resolve) => {
    app.listen('127.0.0.1', 0, (token) => {
      resolve({ port: uWS.us_socket_local_port(token), seen, close: () => uWS.us_listen_socket_close(token) })
    })
  })
}

const ok = (bytes) => new RegExp(`^${bytes.length} ${hash('sha256', bytes).toString('hex')} `)
const SIZES = [0, 1, 1000, 100 * KIB, 300 * KIB, 3 * MIB]

test('every header and algorithm: the right digest passes, a wrong one is 400 ERR_BODY_DIGEST_MISMATCH', async () => {
  const server = await startServer()
  try {
    for (const size of SIZES) {
      const body = bodyOf(size, size + 7)
      const other = Buffer.concat([body, Buffer.from('x')])
      const cases = [
        ['content-digest', sf('sha256', body), sf('sha256', other), 'sha256'],
        ['content-digest', sf('sha512', body), sf('sha512', other), 'sha512'],
        ['repr-digest', sf('sha256', body), sf('sha256', other), 'sha256'],
        ['repr-digest', sf('sha512', body), sf('sha512', other), 'sha512'],
        ['content-md5', md5Header(body), md5Header(other), 'md5']
      ]
      for (const [header, right, wrong, algorithm] of cases) {
        for (const chunked of [false, true]) {
          const what = `${size} B ${header} ${algorithm} ${chunked ? 'chunked' : 'known length'}`
          const good = await request(server.port, { path: '/read', body, chunked, chunkSize: 50 * KIB, headers: { [header]: right } })
          assert.equal(good.status, 200, what)
          assert.match(good.body, ok(body), what)
          const bad = await request(server.port, { path: '/read', body, chunked, chunkSize: 50 * KIB, headers: { [header]: wrong } })
          assert.equal(bad.status, 400, what)
          assert.equal(bad.body, `400 ERR_BODY_DIGEST_MISMATCH ${header} ${algorithm}`, what)
          // digest: false reads the same body as if nothing were declared.
          const off = await request(server.port, { path: '/read', body, chunked, headers: { [header]: wrong, 'x-digest': 'off' } })
          assert.equal(off.status, 200, what)
        }
      }
    }
    // readText checks too.
    const body = bodyOf(5000)
    const text = await request(server.port, { path: '/read', body, headers: { 'content-digest': sf('sha256', body), 'x-text': 'yes' } })
    assert.match(text.body, ok(body))
    const bad = await request(server.port, { path: '/read', body, headers: { 'content-digest': sf('sha256', body.subarray(1)), 'x-text': 'yes' } })
    assert.equal(bad.status, 400)
  } finally {
    server.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a body cut in any place is checked whole; a mismatched body never reaches the application', async () => {
  const server = await startServer()
  try {
    const body = bodyOf(700 * KIB, 3)
    const cuts = [1, 2, 63, 64, 65, 1000, 65 * KIB, 400 * KIB, 700 * KIB - 1]
    const before = server.seen.delivered
    const good = await request(server.port, { path: '/read', body, cuts, headers: { 'repr-digest': sf('sha512', body) } })
    assert.match(good.body, ok(body))
    const flipped = Buffer.from(body)
    flipped[400 * KIB] ^= 0x20
    const bad = await request(server.port, { path: '/read', body: flipped, cuts, headers: { 'repr-digest': sf('sha512', body) } })
    assert.equal(bad.status, 400)
    assert.equal(server.seen.delivered, before + 1)
  } finally {
    server.close()
  }
})

test('several members: every supported one is checked; unsupported and malformed headers are ignored', async () => {
  const server = await startServer()
  try {
    const body = bodyOf(20 * KIB, 5)
    const wrong = bodyOf(20 * KIB, 6)
    const ignored = [
      'sha-256', // no value
      'sha-256=?1', // not a byte sequence
      'sha-256=:not base64!:',
      `sha-256=:${hash('sha256', wrong).toString('base64').slice(0, 20)}:`, // truncated
      `sha-256=${hash('sha256', wrong).toString('base64')}`, // no colons
      `SHA-256=:${hash('sha256', wrong).toString('base64')}:`, // keys are lower case
      `md5=:${hash('md5', wrong).toString('base64')}:`, // deprecated in RFC 9530
      `unixsum=:AAAA:, ${sf('sha256', wrong)},,` // malformed dictionary: all of it
    ]
    for (const value of ignored) {
      for (const header of ['content-digest', 'repr-digest']) {
        const r = await request(server.port, { path: '/read', body, headers: { [header]: value } })
        assert.equal(r.status, 200, `${header}: ${value}`)
      }
    }
    for (const value of ['', 'abc', hash('md5', wrong).toString('hex'), hash('md5', wrong).toString('base64').slice(0, 10)]) {
      const r = await request(server.port, { path: '/read', body, headers: { 'content-md5': value } })
      assert.equal(r.status, 200, `content-md5: ${value}`)
    }
    // An unsupported member next to a supported one: the supported one decides.
    const mixed = await request(server.port, { path: '/read', body, headers: { 'content-digest': `unixsum=:AAAA:, ${sf('sha512', wrong)}` } })
    assert.equal(mixed.status, 400)
    const both = await request(server.port, { path: '/read', body, headers: { 'content-digest': `${sf('sha256', body)}, ${sf('sha512', wrong)}` } })
    assert.equal(both.body, '400 ERR_BODY_DIGEST_MISMATCH content-digest sha512')
    // All three headers at once, all right.
    const all = await request(server.port, {
      path: '/read', body, headers: { 'content-digest': sf('sha512', body), 'repr-digest': sf('sha256', body), 'content-md5': md5Header(body) }
    })
    assert.match(all.body, ok(body))
  } finally {
    server.close()
  }
})

test('encoded bodies: Content-Digest and Content-MD5 are over the bytes sent, Repr-Digest over the decoded', async () => {
  const server = await startServer()
  try {
    for (const size of [10, 50 * KIB, 2 * MIB]) {
      const plain = bodyOf(size, 11)
      for (const [coding, encode] of [['gzip', zlib.gzipSync], ['br', zlib.brotliCompressSync], ['deflate', zlib.deflateSync]]) {
        const sent = encode(plain)
        const cases = [
          [{ 'content-digest': sf('sha256', sent) }, 200],
          [{ 'content-digest': sf('sha256', plain) }, 400],
          [{ 'content-md5': md5Header(sent) }, 200],
          [{ 'content-md5': md5Header(plain) }, 400],
          [{ 'repr-digest': sf('sha512', plain) }, 200],
          [{ 'repr-digest': sf('sha512', sent) }, 400],
          [{ 'content-digest': sf('sha512', sent), 'repr-digest': sf('sha256', plain) }, 200]
        ]
        for (const [headers, status] of cases) {
          for (const chunked of [false, true]) {
            const what = `${coding} ${size} ${JSON.stringify(Object.keys(headers))} ${chunked}`
            const r = await request(server.port, { path: '/read', body: sent, chunked, chunkSize: 30 * KIB, headers: { 'content-encoding': coding, 'x-digest': 'sha256,crc32c', ...headers } })
            assert.equal(r.status, status, what)
            if (status === 200) {
              assert.match(r.body, ok(plain), what)
              // What the program asked for is over what it got: the decoded bytes.
              const digests = JSON.parse(r.body.split(' ')[2])
              assert.deepEqual(digests, { sha256: hash('sha256', plain).toString('hex'), crc32c: crc32c(plain).toString('hex') }, what)
            }
          }
        }
      }
    }
  } finally {
    server.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('digests on request: readBody and readText give each algorithm through onDigest, equal to node:crypto', async () => {
  const server = await startServer()
  try {
    for (const size of SIZES) {
      const body = bodyOf(size, size)
      for (const chunked of [false, true]) {
        for (const text of ['no', 'yes']) {
          const r = await request(server.port, { path: '/read', body, chunked, chunkSize: 40 * KIB, headers: { 'x-digest': 'sha256,sha512,md5,crc32c', 'x-text': text } })
          assert.match(r.body, ok(body))
          assert.deepEqual(JSON.parse(r.body.split(' ')[2]), {
            sha256: hash('sha256', body).toString('hex'),
            sha512: hash('sha512', body).toString('hex'),
            md5: hash('md5', body).toString('hex'),
            crc32c: crc32c(body).toString('hex')
          }, `${size} ${chunked} ${text}`)
        }
      }
    }
    // Only what was asked.
    const r = await request(server.port, { path: '/read', body: Buffer.from('abc'), headers: { 'x-digest': 'crc32c' } })
    assert.deepEqual(JSON.parse(r.body.split(' ')[2]), { crc32c: crc32c(Buffer.from('abc')).toString('hex') })
  } finally {
    server.close()
  }
})

test('the digest options are checked at the call', () => {
  const res = { onData () {}, onAborted () {} }
  const req = { 'content-length': '0' }
  assert.throws(() => readBody(res, req, { digest: ['sha1'] }), /unknown digest "sha1"/)
  assert.throws(() => readBody(res, req, { digest: 'sha256' }), /digest must be/)
  assert.throws(() => readBody(res, req, { onDigest: () => {} }), /go together/)
  assert.throws(() => readBody(res, req, { digest: ['md5'] }), /go together/)
  assert.throws(() => readBody(res, req, { digest: ['md5'], onDigest: 1 }), /onDigest must be a function/)
  assert.throws(() => uwsBody.json({ digest: ['nope'] }), /unknown digest/)
})

test('BodyAccumulator: declared digests as options, requested ones on acc.digests', () => {
  const body = bodyOf(300 * KIB, 9)
  const acc = new BodyAccumulator({ limit: MIB, contentDigest: sf('sha256', body), digest: ['md5', 'crc32c'] })
  for (let at = 0; at < body.length; at += 7000) assert.equal(acc.push(body.subarray(at, at + 7000)), true)
  assert.equal(acc.digests, null) // not before the end
  assert.ok(acc.finish().equals(body))
  assert.deepEqual(acc.digests, { md5: hash('md5', body), crc32c: crc32c(body) })
  const small = Buffer.from('{"hello": "world"}')
  const bad = new BodyAccumulator({ contentLength: String(small.length), reprDigest: sf('sha256', Buffer.from('{}')) })
  assert.equal(bad.push(small), true)
  assert.throws(() => bad.finish(), (err) => err.code === 'ERR_BODY_DIGEST_MISMATCH' && err.status === 400 && err.type === 'request.digest.mismatch')
  assert.equal(bad.length, 0) // its memory went with the error
  // A small body of known length stays in the JS tier and is hashed in one call at its
  // end; a larger one, or one of unknown length, is hashed as the native tier copies it.
  const checked = new BodyAccumulator({ contentLength: '3', contentMd5: md5Header(Buffer.from('abc')) })
  assert.equal(checked.native, false)
  assert.equal(checked.push(Buffer.from('abc')), true)
  assert.equal(checked.finish().toString(), 'abc')
  assert.equal(checked.digests, null)
  assert.equal(new BodyAccumulator({ contentMd5: md5Header(Buffer.from('abc')) }).native, true)
  assert.equal(new BodyAccumulator({ contentLength: String(300 * KIB), limit: MIB, digest: ['md5'] }).native, true)
  for (const [options, text] of [[{ contentLength: '0', digest: ['sha256'] }, false], [{ contentLength: '0', contentDigest: sf('sha256', Buffer.alloc(0)) }, true]]) {
    const empty = new BodyAccumulator(options)
    assert.equal(text ? empty.finishString() : empty.finish().length, text ? '' : 0)
  }
  const emptyWrong = new BodyAccumulator({ contentLength: '0', contentDigest: sf('sha256', Buffer.from('x')) })
  assert.throws(() => emptyWrong.finishString(), (err) => err.code === 'ERR_BODY_DIGEST_MISMATCH')
})

test('the native edge: any value in the digest arguments is no digest or a TypeError, never a crash', () => {
  const native = require('../lib/native/native')
  const values = [undefined, null, true, 0, -1, NaN, Infinity, 2 ** 40, 'sha-256', {}, [], Symbol('x'), () => {}, 10n, Buffer.from('sha-256=:AAAA:')]
  for (const v of values) {
    for (const at of [0, 1, 2, 3]) {
      const args = [15, null, null, null]
      args[at] = v
      const body = native.create(3, 100, 100, null, true, 0, ...args)
      native.push(body, Buffer.from('abc'))
      const out = native.finish(body)
      assert.ok(out === false || Buffer.isBuffer(out), String(at))
      for (const out of [v, new Uint8Array(116)]) {
        const tolerant = (call) => { try { call() } catch (err) { assert.ok(err instanceof TypeError, err.message) } }
        tolerant(() => native.digests(body, out))
        const stream = native.streamCreate(3, 100, null, true, ...args)
        tolerant(() => native.streamDigests(stream, out))
        native.streamAbort(stream)
        tolerant(() => native.digestOf(Buffer.from('abc'), ...args, out))
      }
      const [requested, ...headers] = args
      const numbers = Float64Array.of(Infinity, Infinity, Infinity, Infinity, Infinity, Infinity, 0, -1, 100, typeof requested === 'number' ? requested : 0)
      const form = native.multipartCreate('multipart/form-data; boundary=b', numbers, null, ...headers)
      assert.ok(typeof form === 'object' && form !== null, String(at))
      native.multipartAbort(form)
    }
    if (!Buffer.isBuffer(v)) assert.throws(() => native.digestOf(v, 15, null, null, null, new Uint8Array(116)), TypeError)
    // A room too small, or one that is the body's own memory, is refused or written after
    // the body was read.
    assert.throws(() => native.digestOf(Buffer.from('abc'), 15, null, null, null, new Uint8Array(115)), TypeError)
    const same = new Uint8Array(116)
    assert.equal(native.digestOf(same, 1, null, null, null, same), 32)
  }
})

/** The four parsers on one app, with digests asked; req.digests reported, errors by code. */
function mountParsers (app, framework) {
  const report = (req, res) => res.json({
    body: Buffer.isBuffer(req.body) ? req.body.toString('base64') : req.body,
    digests: req.digests && Object.fromEntries(Object.entries(req.digests).map(([k, v]) => [k, v.toString('hex')]))
  })
  app.post('/json', uwsBody.json({ digest: ['sha256', 'crc32c'], limit: '10mb' }), report)
  app.post('/raw', uwsBody.raw({ digest: ['sha512'], limit: '10mb' }), report)
  app.post('/text', uwsBody.text({ digest: ['md5'] }), report)
  app.post('/form', uwsBody.urlencoded({ digest: ['sha256'] }), report)
  app.post('/plain', uwsBody.json({}), report)
  app.post('/off', uwsBody.json({ digest: false }), report)
  app.use((err, req, res, next) => {
    res.status(err.status || 500).json({ framework, code: err.code, status: err.status })
  })
}

async function startFrameworks () {
  const ue = ultimateExpress()
  mountParsers(ue, 'ultimate')
  await new Promise((resolve) => ue.listen(0, '127.0.0.1', resolve))
  const ex = express()
  mountParsers(ex, 'express')
  const server = await new Promise((resolve) => { const s = ex.listen(0, '127.0.0.1', () => resolve(s)) })
  return { ports: { ultimate: ue.port, express: server.address().port }, close () { ue.close(); server.close() } }
}

test('the four parsers under ultimate-express and Express: req.digests, and next(err) with the 400', async () => {
  const apps = await startFrameworks()
  try {
    for (const [framework, port] of Object.entries(apps.ports)) {
      const json = Buffer.from(JSON.stringify({ a: 'x'.repeat(300 * KIB), b: [1, 2, 3] }))
      const smallJson = Buffer.from('{"hello": "world"}')
      const raw = bodyOf(500 * KIB, 2)
      const text = Buffer.from('hello, digests')
      const form = Buffer.from('a=1&b=two')
      const cases = [
        ['/json', 'application/json', json, { sha256: hash('sha256', json), crc32c: crc32c(json) }],
        ['/json', 'application/json', smallJson, { sha256: hash('sha256', smallJson), crc32c: crc32c(smallJson) }],
        ['/raw', 'application/octet-stream', raw, { sha512: hash('sha512', raw) }],
        ['/text', 'text/plain', text, { md5: hash('md5', text) }],
        ['/form', 'application/x-www-form-urlencoded', form, { sha256: hash('sha256', form) }]
      ]
      for (const [path, type, body, digests] of cases) {
        for (const chunked of [false, true]) {
          const what = `${framework} ${path} ${body.length} ${chunked}`
          const r = await request(port, { path, body, chunked, headers: { 'content-type': type, 'content-digest': sf('sha256', body) } })
          assert.equal(r.status, 200, `${what}: ${r.body}`)
          const got = JSON.parse(r.body)
          assert.deepEqual(got.digests, Object.fromEntries(Object.entries(digests).map(([k, v]) => [k, v.toString('hex')])), what)
          const bad = await request(port, { path, body, chunked, headers: { 'content-type': type, 'repr-digest': sf('sha512', body.subarray(1)) } })
          assert.equal(bad.status, 400, what)
          assert.deepEqual(JSON.parse(bad.body), { framework, code: 'ERR_BODY_DIGEST_MISMATCH', status: 400 }, what)
        }
      }
      // No digest asked: req.digests is not set; a declared one is still checked.
      const plain = await request(port, { path: '/plain', body: smallJsonOf(), headers: { 'content-type': 'application/json' } })
      assert.deepEqual(JSON.parse(plain.body), { body: { hello: 'world' } })
      const md5Wrong = await request(port, { path: '/plain', body: smallJsonOf(), headers: { 'content-type': 'application/json', 'content-md5': md5Header(Buffer.from('x')) } })
      assert.equal(md5Wrong.status, 400)
      const off = await request(port, { path: '/off', body: smallJsonOf(), headers: { 'content-type': 'application/json', 'content-md5': md5Header(Buffer.from('x')) } })
      assert.equal(off.status, 200)
      // An encoded body under the parsers: Repr-Digest over the decoded JSON.
      const plainJson = Buffer.from(JSON.stringify({ n: 'y'.repeat(5000) }))
      const gz = zlib.gzipSync(plainJson)
      const enc = await request(port, { path: '/json', body: gz, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'repr-digest': sf('sha256', plainJson), 'content-digest': sf('sha512', gz) } })
      assert.equal(enc.status, 200, enc.body)
      assert.equal(JSON.parse(enc.body).digests.sha256, hash('sha256', plainJson).toString('hex'))
      const encBad = await request(port, { path: '/json', body: gz, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'repr-digest': sf('sha256', gz) } })
      assert.equal(encBad.status, 400)
    }
  } finally {
    apps.close()
  }
})

function smallJsonOf () {
  return Buffer.from('{"hello":"world"}')
}

/** A uWS server whose POST /stream reads with bodyStream (x-digest as /read's). */
function startStreamServer () {
  const app = uWS.App()
  app.post('/stream', (res, req) => {
    const option = req.getHeader('x-digest')
    const options = { highWaterMark: 64 * KIB }
    if (option === 'off') options.digest = false
    else if (option !== '') options.digest = option.split(',')
    const stream = uwsBody.bodyStream(res, req, options)
    const pieces = []
    let event = null
    stream.on('digest', (d) => { event = d })
    stream.on('data', (piece) => pieces.push(piece))
    stream.on('end', () => {
      const body = Buffer.concat(pieces)
      // 'digest' came before 'end', with the same object as stream.digests.
      const shown = event && event === stream.digests && Object.fromEntries(Object.entries(event).map(([k, v]) => [k, v.toString('hex')]))
      if (!res.aborted) res.cork(() => res.end(`${body.length} ${hash('sha256', body).toString('hex')} ${JSON.stringify(shown)}`))
    })
    stream.on('error', (err) => {
      if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} Error`).end(`${err.status} ${err.code} ${err.header || ''} ${err.algorithm || ''}`))
    })
  })
  return new Promise((resolve) => {
    app.listen('127.0.0.1', 0, (token) => resolve({ port: uWS.us_socket_local_port(token), close: () => uWS.us_listen_socket_close(token) }))
  })
}

test('bodyStream: a declared digest is checked before the end (an error instead of end), digests asked for come in a digest event and stream.digests', async () => {
  const server = await startStreamServer()
  try {
    for (const size of [0, 1000, 300 * KIB, 2 * MIB]) {
      const plain = bodyOf(size, 21)
      for (const coding of [null, 'gzip']) {
        const sent = coding ? zlib.gzipSync(plain) : plain
        const base = coding ? { 'content-encoding': coding } : {}
        for (const chunked of [false, true]) {
          const what = `${size} ${coding} ${chunked}`
          const good = await request(server.port, { path: '/stream', body: sent, chunked, chunkSize: 100 * KIB, headers: { ...base, 'content-digest': sf('sha256', sent), 'repr-digest': sf('sha512', plain), 'x-digest': 'sha256,md5,crc32c' } })
          assert.equal(good.status, 200, what)
          assert.match(good.body, ok(plain), what)
          assert.deepEqual(JSON.parse(good.body.split(' ')[2]), {
            sha256: hash('sha256', plain).toString('hex'), md5: hash('md5', plain).toString('hex'), crc32c: crc32c(plain).toString('hex')
          }, what)
          const bad = await request(server.port, { path: '/stream', body: sent, chunked, chunkSize: 100 * KIB, headers: { ...base, 'content-md5': md5Header(plain.subarray(1)) } })
          if (coding !== null || size > 0) {
            assert.equal(bad.status, 400, what)
            assert.equal(bad.body, '400 ERR_BODY_DIGEST_MISMATCH content-md5 md5', what)
          }
          const off = await request(server.port, { path: '/stream', body: sent, chunked, headers: { ...base, 'content-md5': md5Header(Buffer.from('x')), 'x-digest': 'off' } })
          assert.equal(off.status, 200, what)
          assert.match(off.body, / null$/, what)
        }
      }
    }
  } finally {
    server.close()
  }
})

test('the 400 reaches fetch and node:http clients, on a connection kept alive for the next request', async () => {
  const http = require('node:http')
  const server = await startServer()
  try {
    const body = bodyOf(300 * KIB, 4)
    const wrong = { 'content-digest': sf('sha256', body.subarray(1)) }
    const r = await fetch(`http://127.0.0.1:${server.port}/read`, { method: 'POST', body, headers: wrong })
    assert.equal(r.status, 400)
    assert.equal(await r.text(), '400 ERR_BODY_DIGEST_MISMATCH content-digest sha256')
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const post = (headers) => new Promise((resolve, reject) => {
      const req = http.request({ port: server.port, host: '127.0.0.1', path: '/read', method: 'POST', agent, headers }, (res) => {
        const parts = []
        res.on('data', (d) => parts.push(d))
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString(), socket: req.reusedSocket }))
      })
      req.on('error', reject)
      req.end(body)
    })
    const bad = await post(wrong)
    assert.equal(bad.status, 400)
    const good = await post({ 'content-digest': sf('sha256', body) })
    assert.equal(good.status, 200)
    assert.equal(good.socket, true, 'the same connection served the next request')
    agent.destroy()
  } finally {
    server.close()
  }
})

test('multipart files: each file\'s digests on the file object, made as its bytes are parsed, in memory, on disk, in a Writable\'s final() and under multipart()', async () => {
  const fs = require('node:fs')
  const os = require('node:os')
  const path = require('node:path')
  const { formBody, contentType } = require('./helpers/multipart')
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-digest-'))
  const app = uWS.App()
  app.post('/form', (res, req) => {
    // A Writable's final() (readMultipart's `(file) => Writable`) sees the file's digests.
    const atFinal = new Map()
    const writable = (file) => new Writable({
      write: (chunk, encoding, cb) => cb(),
      final: (cb) => { atFinal.set(file.originalname, file.digests); cb() }
    })
    const storage = { disk: { dest }, memory: 'memory', writable }[req.getHeader('x-storage')]
    uwsBody.readMultipart(res, req, { storage, digest: ['sha256', 'crc32c'], limits: { fileSize: 64 * MIB }, limit: 128 * MIB }).then((result) => {
      const files = result.files.map((f) => {
        if (f.path) fs.unlinkSync(f.path)
        const digests = storage === writable ? atFinal.get(f.originalname) : f.digests
        return { name: f.originalname, size: f.size, sha256: digests.sha256.toString('hex'), crc32c: digests.crc32c.toString('hex') }
      })
      if (!res.aborted) res.cork(() => res.end(JSON.stringify({ files, fields: result.fields })))
    }, (err) => { if (!res.aborted) res.cork(() => res.writeStatus('400 Error').end(String(err.code))) })
  })
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (t) => resolve({ port: uWS.us_socket_local_port(t), token: t })))
  const ue = ultimateExpress()
  ue.post('/multer', uwsBody.multipart({ digest: ['md5'] }).any(), (req, res) => {
    res.json(req.files.map((f) => ({ name: f.originalname, md5: f.digests.md5.toString('hex') })))
  })
  await new Promise((resolve) => ue.listen(0, '127.0.0.1', resolve))
  try {
    const files = [bodyOf(0, 1), bodyOf(1, 2), bodyOf(70 * KIB, 3), bodyOf(3 * MIB, 4), Buffer.from('--XbOuNdArY\r\n\r\n--XbOuNdArY')]
    const parts = [{ name: 'a', value: 'field' }, ...files.map((data, i) => ({ name: `f${i}`, filename: `f${i}.bin`, type: 'application/octet-stream', data })), { name: 'z', value: 'last' }]
    const body = formBody(parts)
    for (const storage of ['memory', 'disk', 'writable']) {
      for (const chunked of [false, true]) {
        const r = await request(port.port, { path: '/form', body, chunked, chunkSize: 40 * KIB, cuts: [1, 100, 1000, 70000], headers: { 'content-type': contentType(), 'x-storage': storage } })
        assert.equal(r.status, 200, `${storage} ${chunked} ${r.body}`)
        const got = JSON.parse(r.body)
        assert.deepEqual(got.fields, { a: 'field', z: 'last' })
        assert.deepEqual(got.files, files.map((data, i) => ({ name: `f${i}.bin`, size: data.length, sha256: hash('sha256', data).toString('hex'), crc32c: crc32c(data).toString('hex') })), `${storage} ${chunked}`)
      }
    }
    // An encoded form: each file's digests are over its decoded bytes.
    const gz = zlib.gzipSync(body)
    const r = await request(port.port, { path: '/form', body: gz, headers: { 'content-type': contentType(), 'content-encoding': 'gzip' } })
    assert.deepEqual(JSON.parse(r.body).files.map((f) => f.sha256), files.map((d) => hash('sha256', d).toString('hex')))
    const m = await request(ue.port, { path: '/multer', body, headers: { 'content-type': contentType() } })
    assert.equal(m.status, 200, m.body)
    assert.deepEqual(JSON.parse(m.body), files.map((data, i) => ({ name: `f${i}.bin`, md5: hash('md5', data).toString('hex') })))
    uwsBody.multipart({ digest: true })
    uwsBody.multipart({ digest: false })
    assert.throws(() => uwsBody.multipart({ digest: 'sha256' }), /digest must be/)
    assert.throws(() => uwsBody.multipart({ digest: ['sha1'] }), /unknown digest/)
  } finally {
    uWS.us_listen_socket_close(port.token)
    ue.close()
    fs.rmSync(dest, { recursive: true, force: true })
  }
})

test('a form\'s own declared digest: checked over the whole body (epilogue included, encoded or not); a mismatch is the 400 with every stored file removed', async () => {
  const fs = require('node:fs')
  const os = require('node:os')
  const path = require('node:path')
  const { formBody, contentType } = require('./helpers/multipart')
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-form-digest-'))
  const answered = { app: 0 }
  const app = uWS.App()
  app.post('/form', (res, req) => {
    const digest = req.getHeader('x-digest') === 'off' ? false : undefined
    uwsBody.readMultipart(res, req, { storage: { dest }, digest, limit: 64 * MIB, limits: { fileSize: 64 * MIB } }).then((result) => {
      answered.app++
      for (const f of result.files) fs.unlinkSync(f.path)
      if (!res.aborted) res.cork(() => res.end(`ok ${result.files.length}`))
    }, (err) => { if (!res.aborted) res.cork(() => res.writeStatus(`${err.status} Error`).end(`${err.code} ${err.header}`)) })
  })
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (t) => resolve({ port: uWS.us_socket_local_port(t), token: t })))
  const servers = []
  for (const make of [ultimateExpress, express]) {
    const ex = make()
    ex.post('/multer', uwsBody.multipart({ dest }).any(), (req, res) => {
      answered.app++
      for (const f of req.files) fs.unlinkSync(f.path)
      res.send(`ok ${req.files.length}`)
    })
    ex.use((err, req, res, next) => res.status(err.status ?? 500).send(`${err.code} ${err.header}`))
    if (make === ultimateExpress) {
      await new Promise((resolve) => ex.listen(0, '127.0.0.1', resolve))
      servers.push({ port: ex.port, close: () => ex.close() })
    } else {
      const server = await new Promise((resolve) => { const s = ex.listen(0, '127.0.0.1', () => resolve(s)) })
      servers.push({ port: server.address().port, close: () => server.close() })
    }
  }
  try {
    const files = [bodyOf(3, 1), bodyOf(200 * KIB, 2), bodyOf(MIB + 7, 3)]
    const parts = files.map((data, i) => ({ name: `f${i}`, filename: `f${i}.bin`, type: 'application/octet-stream', data }))
    // An epilogue after the final delimiter: the digest covers it, so the form is
    // answered only after it, and a flipped byte there is a mismatch too.
    const body = Buffer.concat([formBody(parts), Buffer.from('epilogue bytes')])
    const flipped = (at) => { const b = Buffer.from(body); b[at] ^= 1; return b }
    const headerCases = [
      ['content-digest', sf('sha256', body)],
      ['content-digest', sf('sha512', body)],
      ['repr-digest', sf('sha256', body)],
      ['content-md5', md5Header(body)]
    ]
    const sent = async (target, payload, headers, extra = {}) => request(target, { path: extra.path ?? '/form', body: payload, chunked: extra.chunked, chunkSize: 64 * KIB, cuts: [1, 500, 200000], headers: { 'content-type': contentType(), ...headers } })
    for (const [name, value] of headerCases) {
      for (const chunked of [false, true]) {
        const ok = await sent(port.port, body, { [name]: value }, { chunked })
        assert.equal(ok.status, 200, `${name} ${chunked} ${ok.body}`)
        assert.equal(ok.body, 'ok 3')
        for (const at of [10, 300 * KIB, body.length - 3]) {
          const before = answered.app
          const bad = await sent(port.port, flipped(at), { [name]: value }, { chunked })
          assert.equal(bad.status, 400, `${name} flipped at ${at}: ${bad.body}`)
          assert.equal(bad.body, `ERR_BODY_DIGEST_MISMATCH ${name}`)
          assert.equal(answered.app, before, 'a mismatched form never reaches the application')
          assert.deepEqual(fs.readdirSync(dest), [], 'every stored file is removed')
        }
      }
    }
    // digest: false turns the check off.
    const off = await sent(port.port, flipped(300 * KIB), { 'content-digest': sf('sha256', body), 'x-digest': 'off' })
    assert.equal(off.body, 'ok 3')
    // An encoded form: Content-Digest is over the gzip bytes, Repr-Digest over the form.
    const gz = zlib.gzipSync(body)
    for (const [headers, status] of [
      [{ 'content-digest': sf('sha256', gz) }, 200],
      [{ 'repr-digest': sf('sha256', body) }, 200],
      [{ 'content-digest': sf('sha256', body) }, 400],
      [{ 'repr-digest': sf('sha256', gz) }, 400],
      [{ 'content-md5': md5Header(gz), 'repr-digest': sf('sha512', body) }, 200]
    ]) {
      const r = await sent(port.port, gz, { 'content-encoding': 'gzip', ...headers })
      assert.equal(r.status, status, `gzip ${JSON.stringify(headers)}: ${r.body}`)
    }
    // multipart() under ultimate-express and Express: next(err) with the 400.
    for (const s of servers) {
      const ok = await sent(s.port, body, { 'content-digest': sf('sha256', body) }, { path: '/multer' })
      assert.equal(ok.body, 'ok 3')
      const before = answered.app
      const bad = await sent(s.port, flipped(300 * KIB), { 'content-digest': sf('sha256', body) }, { path: '/multer', chunked: true })
      assert.equal(bad.status, 400, bad.body)
      assert.equal(bad.body, 'ERR_BODY_DIGEST_MISMATCH content-digest')
      assert.equal(answered.app, before)
      assert.deepEqual(fs.readdirSync(dest), [])
    }
  } finally {
    uWS.us_listen_socket_close(port.token)
    for (const s of servers) s.close()
    fs.rmSync(dest, { recursive: true, force: true })
  }
})

test('a body with a digest is held to the memory budget as any other: ERR_BODY_BUDGET, in both tiers', () => {
  // A process of its own: this one's JS tier holds credit leased by the tests before.
  const { runChild, ending } = require('./helpers/child')
  const r = runChild(`
    const u = require(ROOT)
    u.setMemoryBudget(1000)
    // (A body read in JS reserves with its first bytes.)
    const codes = ['5000', String(300 * 1024)].map((contentLength) => {
      const acc = new u.BodyAccumulator({ contentLength, limit: 1 << 20, contentMd5: 'kAFQmDzST7DWlj99KOF/cg==', digest: ['sha256'] })
      return acc.push(new Uint8Array(1)) ? null : acc.error?.code
    })
    console.log(JSON.stringify(codes))`)
  assert.equal(r.status, 0, ending(r))
  assert.deepEqual(JSON.parse(r.stdout), ['ERR_BODY_BUDGET', 'ERR_BODY_BUDGET'])
})
