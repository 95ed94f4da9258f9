'use strict'
// The readers compiled once per route (bodyReader, textReader, streamReader,
// multipartReader) over a real uWS server on 127.0.0.1: each answers every body, size
// and framing exactly as its per-call twin (readBody, readText, bodyStream,
// readMultipart), its options are read once when it is made (a wrong one is a TypeError
// there, not per request), and one reader serves any number of requests.
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const uWS = require('uWebSockets.js')
const uwsBody = require('..')
const { readBody, readText, bodyStream, readMultipart, bodyReader, textReader, streamReader, multipartReader, answerError } = uwsBody
const { request, bodyOf, sha256 } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const KIB = 1024
const MIB = 1024 * KIB
const LIMIT = 2 * MIB
const digest = (buf) => `${buf.length} ${crypto.createHash('sha256').update(buf).digest('hex')}`
const answer = (res, text) => { if (!res.aborted) res.cork(() => res.end(text)) }
const fail = (res, err) => answerError(res, err)

/** Each reader twice: /call/<kind> per call with an options literal, /plan/<kind> compiled. */
function startServer () {
  const app = uWS.App()
  const routes = {
    body: [(res, req) => readBody(res, req, { limit: LIMIT }), bodyReader({ limit: LIMIT }), (b) => digest(b)],
    text: [(res, req) => readText(res, req, { limit: LIMIT }), textReader({ limit: LIMIT }), (t) => digest(Buffer.from(t))],
    stream: [(res, req) => bodyStream(res, req, { limit: LIMIT }), streamReader({ limit: LIMIT }), null],
    form: [(res, req) => readMultipart(res, req, { limits: { fileSize: LIMIT } }), multipartReader({ limits: { fileSize: LIMIT } }),
      ({ fields, files }) => `${fields.title} ${files.map((f) => digest(f.buffer)).join(',')}`]
  }
  for (const [kind, [perCall, compiled, show]] of Object.entries(routes)) {
    for (const [prefix, read] of [['call', perCall], ['plan', compiled]]) {
      app.post(`/${prefix}/${kind}`, (res, req) => {
        if (show === null) {
          const parts = []
          read(res, req).on('data', (d) => parts.push(d)).on('end', () => answer(res, digest(Buffer.concat(parts)))).on('error', (e) => fail(res, e))
          return
        }
        read(res, req).then((value) => answer(res, show(value)), (e) => fail(res, e))
      })
    }
  }
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (token) => {
      if (!token) return reject(new Error('no listen'))
      resolve({ port: uWS.us_socket_local_port(token), close: () => uWS.us_listen_socket_close(token) })
    })
  })
}

function formOf (title, file) {
  const boundary = 'readers-boundary'
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="title"\r\n\r\n${title}\r\n`),
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="f.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`)
  ])
  return { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

test('each compiled reader answers as its per-call twin, for every size and framing', async () => {
  const server = await startServer()
  try {
    const sizes = [0, 1, 100, 4 * KIB, 33 * KIB, 300 * KIB, LIMIT, LIMIT + 1]
    for (const kind of ['body', 'text', 'stream']) {
      for (const size of sizes) {
        // Text bodies of ASCII letters, so that the text and byte readers agree.
        const body = Buffer.from(bodyOf(size, size + 7).map((b) => 0x61 + (b % 26)))
        for (const chunked of [false, true]) {
          const send = (prefix) => request(server.port, { path: `/${prefix}/${kind}`, body, chunked, chunkSize: 16 * KIB, headers: { 'content-type': 'application/octet-stream' } })
          const [perCall, compiled] = [await send('call'), await send('plan')]
          const what = `${kind} ${size} B ${chunked ? 'chunked' : 'with its length'}`
          assert.equal(compiled.status, perCall.status, what)
          assert.equal(compiled.body, perCall.body, what)
          if (size <= LIMIT) assert.equal(compiled.body, `${size} ${sha256(body)}`, what)
          else assert.equal(compiled.status, 413, what)
        }
      }
    }
    for (const size of [0, 100, 300 * KIB]) {
      const file = bodyOf(size, size + 3)
      const { body, headers } = formOf('holiday', file)
      const [perCall, compiled] = [await request(server.port, { path: '/call/form', body, headers }), await request(server.port, { path: '/plan/form', body, headers })]
      assert.equal(compiled.status, 200, `form ${size} B`)
      assert.equal(compiled.body, perCall.body)
      assert.equal(compiled.body, `holiday ${size} ${sha256(file)}`)
    }
    assert.equal(await bytesInUseAfterGc(), 0, 'nothing held')
  } finally {
    server.close()
  }
})

test('a compiled reader reads its options once, when it is made', () => {
  for (const make of [bodyReader, textReader, streamReader]) {
    let reads = 0
    const options = { get limit () { reads++; return '1mb' } }
    make(options)
    assert.equal(reads, 1, `${make.name} reads limit once`)
    assert.throws(() => make({ limit: 'ten megabytes' }), TypeError, `${make.name}: a wrong option is a TypeError at once`)
    assert.throws(() => make({ limt: '1mb' }), /limit/, `${make.name}: an unknown option names the closest`)
  }
  assert.throws(() => multipartReader({ limits: { fileSize: -1 } }), TypeError)
  const read = bodyReader({ limit: '1mb' })
  assert.throws(() => read({}, {}), /readBody\(res, req\)/, 'the request\'s mistakes are still checked per call, naming the reader')
})
