'use strict'
// What the object store verifies of a file streamed by examples/s3.js's s3Uploads
// (docs/s3.md#checksums), against garage. One byte of a file (all Q) is flipped, either on
// the wire (a proxy between the SDK and garage changes the first Q of one request's body:
// one part of a multipart upload, or a PutObject, its HTTP framing untouched) or in the
// server before the SDK (a byte changed between uws-body's parser and the upload). Either
// way the request fails and the bucket holds nothing for it. Without the checksums (a
// plain Upload that sends neither a checksum nor a signed payload) the same flip on the
// wire is stored: the proxy does corrupt, and these tests can fail.
//
// The proxied clients make one attempt per request: with the SDK's retries a flipped
// part sent again (unflipped) would be stored, which is right but not what is tested.
const test = require('node:test')
const assert = require('node:assert/strict')
const uWS = require('uWebSockets.js')
const { HeadObjectCommand } = require('@aws-sdk/client-s3')
const { Upload } = require('@aws-sdk/lib-storage')
const { readMultipart } = require('..')
const { s3Uploads } = require('../examples/s3')
const { request, sha256 } = require('./helpers/client')
const { formBody } = require('./helpers/multer-form')
const { garageGate, gatedTest, startGarage, objectDigest, listKeys, listUploads } = require('./helpers/garage')
const { throttle } = require('./helpers/s3-load')

const MIB = 1024 * 1024
const BOUNDARY = 'S3cHeCkSuMbOuNdArY'
const Q = 0x51
const gate = garageGate()
const s3test = gatedTest(gate)

let garage = null
let proxy = null
let server = null
let clients = null
let ids = 0

/**
 * A TCP proxy to garage (./helpers/s3-load.js's). flipNext(marker): the first Q in the body
 * of the next request whose head contains `marker` becomes P (Q ^ 1); flips() counts them.
 */
async function flipProxy (target) {
  let marker = null
  let flips = 0
  // Per connection: 'find' the marker, then the end of that request's 'head', then the
  // 'byte' to flip; `tail`, what a marker or a head's end split between chunks began with.
  const tap = () => {
    let state = 'find'
    let tail = Buffer.alloc(0)
    const scan = (data) => {
      if (state === 'byte') {
        const at = data.indexOf(Q)
        if (at >= 0) {
          data[at] ^= 1
          flips++
          marker = null
          state = 'find'
        }
        return
      }
      const work = Buffer.concat([tail, data])
      let from = 0
      if (state === 'find') {
        from = work.indexOf(marker)
        if (from < 0) {
          tail = work.subarray(Math.max(0, work.length - marker.length))
          return
        }
        state = 'head'
      }
      const end = work.indexOf('\r\n\r\n', from)
      if (end < 0) {
        tail = work.subarray(Math.max(from, work.length - 3))
        return
      }
      state = 'byte'
      tail = Buffer.alloc(0)
      // The head ends past what was forwarded already: the body starts in `data`.
      scan(data.subarray(end + 4 - (work.length - data.length)))
    }
    return (data) => {
      if (marker === null) state = 'find'
      else scan(data)
    }
  }
  const proxy = await throttle(target, Infinity, { tap })
  return { ...proxy, flipNext (m) { marker = Buffer.from(m) }, flips: () => flips }
}

/** The client sends UNSIGNED-PAYLOAD: no sha256 of the body in its signature. */
function unsignedPayload (client) {
  client.middlewareStack.add((next) => (args) => {
    args.request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD'
    return next(args)
  }, { step: 'build', name: 'unsignedPayload' })
  return client
}

/** A fault in the server between uws-body and the SDK: the file's first Q becomes P. */
function flipFirstQ (w) {
  const write = w._write
  let flipped = false
  w._write = function (chunk, encoding, cb) {
    const at = flipped ? -1 : chunk.indexOf(Q)
    if (at >= 0) {
      chunk = Buffer.from(chunk)
      chunk[at] ^= 1
      flipped = true
    }
    return write.call(this, chunk, encoding, cb)
  }
}

/** readMultipart + s3Uploads: POST /up/<id>, x-client (a key of `clients`), x-flip: server. */
function startServer () {
  const app = uWS.App()
  app.post('/up/:id', (res, req) => {
    const id = req.getParameter(0)
    const client = clients[req.getHeader('x-client') || 'signed']
    const flip = req.getHeader('x-flip') === 'server'
    let n = 0
    const s3 = s3Uploads({ client, bucket: garage.bucket, key: (file) => `${id}/${n++}-${file.originalname}` })
    const storage = (file) => {
      const w = s3.storage(file)
      if (flip) flipFirstQ(w)
      return w
    }
    const answer = (status, value) => { if (!res.aborted) res.cork(() => res.writeStatus(`${status} Answer`).end(JSON.stringify(value))) }
    readMultipart(res, req, { storage, digest: s3.digest }).then(
      ({ files }) => answer(200, { stored: s3.stored, crc32c: files.map((f) => f.digests.crc32c.toString('base64')) }),
      async (err) => {
        const failed = await s3.remove()
        answer(500, { name: err.name, code: err.code, message: err.message, failed })
      }
    )
  })
  return new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve({ port: uWS.us_socket_local_port(token), close: () => uWS.us_listen_socket_close(token) })))
}

test.before(async () => {
  if (gate.skip || gate.fail) return
  garage = await startGarage()
  proxy = await flipProxy(Number(new URL(garage.endpoint).port))
  const endpoint = `http://127.0.0.1:${proxy.port}`
  clients = {
    direct: garage.client(),
    // The SDK's defaults (a signed payload over http), through the proxy.
    signed: garage.client({ endpoint, maxAttempts: 1 }),
    // Only the checksums: the payload's sha256 left out of the signature.
    unsigned: unsignedPayload(garage.client({ endpoint, maxAttempts: 1 })),
    // Neither: no checksum unless an operation requires one, no signed payload.
    bare: unsignedPayload(garage.client({ endpoint, maxAttempts: 1, requestChecksumCalculation: 'WHEN_REQUIRED' }))
  }
  server = await startServer()
})

test.after(async () => {
  if (server) server.close()
  if (proxy) proxy.close()
  if (clients) for (const c of Object.values(clients)) c.destroy()
  if (garage) await garage.stop()
})

/** One form of files of `sizes` bytes (all Q) to the server: { id, status, json, data }. */
async function upload (sizes, headers = {}) {
  const id = `c${++ids}`
  const data = sizes.map((size) => Buffer.alloc(size, Q))
  const body = formBody(BOUNDARY, data.map((d, i) => ({ name: `f${i}`, filename: `f${i}.bin`, type: 'application/octet-stream', data: d })))
  const r = await request(server.port, { path: `/up/${id}`, body, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers }, timeout: 60000 })
  return { id, status: r.status, json: JSON.parse(r.body), data }
}

async function assertNothingLeft (id, what) {
  assert.deepEqual(await listKeys(clients.direct, garage.bucket, `${id}/`), [], `${what}: no object`)
  assert.deepEqual(await listUploads(clients.direct, garage.bucket, `${id}/`), [], `${what}: no multipart upload in progress`)
}

s3test('each object is stored with uws-body\'s CRC-32C of the file as its FULL_OBJECT checksum', async () => {
  const sizes = [0, 1 * MIB, 12 * MIB]
  const r = await upload(sizes)
  assert.equal(r.status, 200, JSON.stringify(r.json))
  for (const [i, data] of r.data.entries()) {
    const key = r.json.stored[i].key
    const head = await clients.direct.send(new HeadObjectCommand({ Bucket: garage.bucket, Key: key, ChecksumMode: 'ENABLED' }))
    assert.equal(head.ChecksumCRC32C, r.json.crc32c[i], `file ${i} (${sizes[i]} B): the store's checksum is uws-body's`)
    assert.equal(head.ChecksumType, 'FULL_OBJECT')
    assert.equal(r.json.stored[i].crc32c, r.json.crc32c[i])
    assert.equal((await objectDigest(clients.direct, garage.bucket, key)).sha256, sha256(data))
  }
})

s3test('a byte flipped on the wire, in one part or in a PutObject: the store refuses it, the request fails, no object', async (t) => {
  for (const client of ['signed', 'unsigned']) {
    for (const [what, sizes, marker] of [['part 2 of 3', [12 * MIB], 'partNumber=2'], ['a PutObject', [1 * MIB], 'x-id=PutObject']]) {
      const before = proxy.flips()
      proxy.flipNext(marker)
      const r = await upload(sizes, { 'x-client': client })
      assert.equal(proxy.flips(), before + 1, `${client}, ${what}: the proxy flipped a byte`)
      assert.equal(r.status, 500, `${client}, ${what}: ${JSON.stringify(r.json)}`)
      await assertNothingLeft(r.id, `${client}, ${what}`)
      t.diagnostic(`${client} payload, ${what}: ${r.json.name} (${r.json.message})`)
    }
  }
})

s3test('a byte flipped in the server before the SDK: the store\'s checksum of what it got is not uws-body\'s, no object', async (t) => {
  for (const [what, sizes] of [['a multipart upload', [12 * MIB]], ['a PutObject', [1 * MIB]]]) {
    const r = await upload(sizes, { 'x-flip': 'server' })
    assert.equal(r.status, 500, `${what}: ${JSON.stringify(r.json)}`)
    await assertNothingLeft(r.id, what)
    t.diagnostic(`${what}: ${r.json.name} (${r.json.message})`)
  }
})

s3test('without checksums (no checksum, no signed payload) the same flip on the wire is stored', async (t) => {
  const data = Buffer.alloc(12 * MIB, Q)
  const flipped = Buffer.from(data)
  flipped[5 * MIB] ^= 1
  for (const [name, expect] of [['bare', 'stored'], ['signed', 'refused']]) {
    const Key = `plain/${name}`
    proxy.flipNext('partNumber=2')
    const outcome = await new Upload({ client: clients[name], params: { Bucket: garage.bucket, Key, Body: data } }).done().then(() => 'stored', (err) => `refused (${err.name})`)
    if (name === 'bare') {
      assert.equal(outcome, 'stored')
      const got = await objectDigest(clients.direct, garage.bucket, Key)
      assert.equal(got.sha256, sha256(flipped), 'the object holds the flipped byte (part 2\'s first)')
    } else {
      // What the SDK's defaults alone catch: each part's CRC-32 (requestChecksumCalculation
      // WHEN_SUPPORTED) and, over http, the payload's sha256 in the signature.
      assert.match(outcome, new RegExp(expect))
    }
    t.diagnostic(`plain Upload, ${name} client: ${outcome}`)
  }
})
