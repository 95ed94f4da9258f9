'use strict'
// readMultipart on bare uWS, each file streamed to S3 (garage, started here) through
// @aws-sdk/lib-storage's Upload with the recipe of docs/s3.md (examples/s3.js's
// s3Uploads), against multer + multer-s3 under Express, the reference, with the same
// requests: the same bytes in the bucket (sha256 read back, the same ETags), and after a
// failure (a limit mid-file, the client gone, the store refusing) one error and, once the
// recipe's remove() has run, nothing in the bucket.
//
// One assertion is readMultipart's own contract, not the recipe's: when it rejects, every
// stream the storage function returned has either finished or closed (a destroyed stream
// emits 'close' once its destroy() is done: here, once lib-storage has aborted the
// multipart upload), so that the error is not answered while the store is still being
// cleaned.
const test = require('node:test')
const assert = require('node:assert/strict')
const uWS = require('uWebSockets.js')
const { readMultipart } = require('..')
const { s3Uploads } = require('../examples/s3')
const { request, bodyOf, sha256, sleep } = require('./helpers/client')
const { formBody } = require('./helpers/multer-form')
const { garageGate, gatedTest, startGarage, objectDigest, listKeys, listUploads, emptyBucket } = require('./helpers/garage')
const { startS3Apps } = require('./helpers/s3-apps')

const MIB = 1024 * 1024
const BOUNDARY = 'S3rEaDbOuNdArY'
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`
const gate = garageGate()

let garage = null
let reference = null
let server = null
let ids = 0

/** The readMultipart server: POST /read/<id>, x-config { client, bucket, limits }. */
function startReadServer (garage, clients) {
  const app = uWS.App()
  const outcomes = new Map()
  app.post('/read/:id', (res, req) => {
    const id = req.getParameter(0)
    const config = JSON.parse(req.getHeader('x-config') || '{}')
    const prefix = `read/${id}`
    let n = 0
    const s3 = s3Uploads({ client: clients[config.client || 'good'], bucket: config.bucket || garage.bucket, key: (file) => `${prefix}/${n++}-${file.originalname}` })
    const streams = []
    const storage = (file) => {
      const w = s3.storage(file)
      streams.push(w)
      return w
    }
    readMultipart(res, req, { storage, digest: s3.digest, limits: config.limits }).then(
      ({ fields, files }) => {
        const result = { fields, files: files.map((f, i) => ({ ...f, ...s3.stored[i], key: s3.stored[i].key.replace(prefix, '<prefix>') })) }
        outcomes.set(id, { result })
        if (!res.aborted) res.cork(() => res.writeHeader('content-type', 'application/json').end(JSON.stringify(result)))
      },
      async (err) => {
        const entry = { error: { name: err.name, code: err.code, status: err.status, message: err.message } }
        // readMultipart's contract: its streams are done with (finished, or destroyed and closed).
        entry.openAtReject = streams.filter((w) => !w.writableFinished && !w.closed).length
        entry.atReject = await left(prefix)
        await s3.remove()
        entry.afterRemove = await left(prefix)
        entry.settled = true
        outcomes.set(id, entry)
        if (!res.aborted) res.cork(() => res.writeStatus(`${err.status || 500} Error`).end(JSON.stringify(entry.error), true))
      }
    )
  })
  const left = async (prefix) => ({ keys: await listKeys(clients.good, garage.bucket, prefix + '/'), uploads: (await listUploads(clients.good, garage.bucket, prefix + '/')).map((u) => u.key) })
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (token) => {
      if (!token) return reject(new Error('uWS could not listen'))
      resolve({
        port: uWS.us_socket_local_port(token),
        outcomes,
        async outcome (id, timeout = 15000) {
          const until = Date.now() + timeout
          for (;;) {
            const o = outcomes.get(id)
            if (o !== undefined) return o
            if (Date.now() > until) return { timedOut: true }
            await sleep(20)
          }
        },
        close: () => uWS.us_listen_socket_close(token)
      })
    })
  })
}

test.before(async () => {
  if (gate.skip || gate.fail) return
  garage = await startGarage()
  reference = await startS3Apps(garage, { kinds: ['multer-express'] })
  server = await startReadServer(garage, reference.clients)
})

test.after(async () => {
  if (server) server.close()
  if (reference) reference.close()
  if (garage) await garage.stop()
})

/** A test that needs garage: skipped with the reason where it is missing, failed under CI. */
const s3test = gatedTest(gate)

/** The same request to readMultipart and to multer + multer-s3: { ours, theirs }. */
async function both (parts, config = {}, send = {}) {
  const id = String(++ids)
  const body = formBody(BOUNDARY, parts)
  const headers = { 'content-type': CONTENT_TYPE, 'x-config': JSON.stringify(config) }
  const go = (port, path) => request(port, { path, headers, body, timeout: 15000, ...send }).catch((err) => ({ timedOut: err.message }))
  const oursResponse = await go(server.port, `/read/${id}`)
  const ours = { response: oursResponse, outcome: await server.outcome(id, oursResponse.timedOut ? 0 : 15000), prefix: `read/${id}` }
  const theirsResponse = await go(reference.ports['multer-express'], `/up/${id}`)
  const theirs = { response: theirsResponse, outcome: await reference.outcome('multer-express', id), prefix: `multer-express/${id}` }
  return { ours, theirs }
}

const NOTHING = { keys: [], uploads: [] }

/** ours failed with `error` (a subset), nothing left once remove() ran; and what multer did. */
async function assertFailed ({ ours, theirs }, t, what, error) {
  assert.ok(!ours.outcome.timedOut, `${what}: readMultipart never settled`)
  assert.deepEqual(ours.outcome.error, { ...ours.outcome.error, ...error }, `${what}: the error`)
  assert.deepEqual(ours.outcome.afterRemove, NOTHING, `${what}: nothing in the bucket after remove()`)
  t.diagnostic(`${what}: readMultipart: ${ours.outcome.error.name} ${ours.outcome.error.code || ''}; at its rejection ${ours.outcome.openAtReject} stream(s) still open, the bucket held ${JSON.stringify(ours.outcome.atReject)}; multer: ${theirs.outcome.error && theirs.outcome.error.name} ${(theirs.outcome.error && theirs.outcome.error.code) || ''}`)
  return ours.outcome
}

s3test('readMultipart streams every file to S3 byte for byte, with multer-s3\'s ETags', async () => {
  const sizes = [0, 1, 64 * 1024, 5 * MIB, 5 * MIB + 1, 17 * MIB + 5]
  const parts = [{ name: 'title', data: Buffer.from('holiday') }]
  sizes.forEach((size, i) => parts.push({ name: `f${i}`, filename: `f${i}.bin`, type: 'application/octet-stream', data: bodyOf(size, 100 + i) }))
  for (const send of [{}, { cuts: [50, 6000, 5 * MIB + 7, 11 * MIB], pause: 5 }]) {
    const { ours, theirs } = await both(parts, {}, send)
    assert.equal(ours.response.status, 200, ours.response.body)
    assert.equal(theirs.response.status, 200, theirs.response.body)
    const got = JSON.parse(ours.response.body)
    const ref = JSON.parse(theirs.response.body)
    assert.deepEqual(got.fields, { title: 'holiday' })
    for (const [i, file] of got.files.entries()) {
      assert.equal(file.size, sizes[i])
      const stored = await objectDigest(reference.clients.good, garage.bucket, file.key.replace('<prefix>', ours.prefix))
      assert.equal(stored.sha256, sha256(parts[i + 1].data), `file ${i} (${sizes[i]} B) read back`)
      assert.equal(stored.etag, file.etag)
      assert.equal(file.etag, ref.files[i].etag, `file ${i}: the same ETag as multer-s3's (the same parts)`)
    }
  }
})

s3test('a limit hit mid-file, the client gone mid-file: one error, nothing left after remove()', async (t) => {
  const parts = [{ name: 'a', filename: 'a.bin', data: bodyOf(6 * MIB, 111) }, { name: 'b', filename: 'b.bin', data: bodyOf(24 * MIB, 112) }]
  const outcomes = []
  const limit = await both(parts, { limits: { fileSize: 12 * MIB } })
  assert.equal(limit.ours.response.status, 413)
  // multer's codes are MulterErrors (BodyErrors too) from readMultipart as from multipart().
  outcomes.push(await assertFailed(limit, t, 'fileSize mid second file', { name: 'MulterError', code: 'LIMIT_FILE_SIZE', status: 413 }))
  const gone = await both(parts, {}, { stopAfter: 16 * MIB, cuts: Array.from({ length: 30 }, (_, i) => (i + 1) * MIB), pause: 2 })
  outcomes.push(await assertFailed(gone, t, 'client gone mid second file', { name: 'BodyError', code: 'ECONNABORTED', status: 400 }))
  for (const o of outcomes) assert.equal(o.openAtReject, 0, 'readMultipart rejected while a stream it destroyed was still closing (its multipart upload not yet aborted)')
})

s3test('the store refuses (unreachable, access denied, bucket missing, quota): the SDK\'s error, nothing left', async (t) => {
  const parts = [{ name: 'title', data: Buffer.from('x') }, { name: 'a', filename: 'a.bin', data: bodyOf(9 * MIB, 121) }]
  for (const [what, config] of [
    ['S3 unreachable', { client: 'unreachable' }],
    ['wrong secret', { client: 'wrongSecret' }],
    ['read-only key', { client: 'readOnly' }],
    ['bucket missing', { bucket: 'no-such-bucket' }]
  ]) {
    const runs = await both(parts, config)
    assert.equal(runs.ours.response.status, 500, `${what}: ${runs.ours.response.body}`)
    assert.equal(runs.ours.outcome.error.name, runs.theirs.outcome.error.name, `${what}: the SDK's error, as multer-s3 gets it`)
    await assertFailed(runs, t, what, {})
  }
  // An empty bucket under a 16 MiB quota: the first file fits, the second does not.
  await emptyBucket(reference.clients.good, garage.bucket)
  garage.setQuota('16MiB')
  try {
    const runs = await both([{ name: 'a', filename: 'a.bin', data: bodyOf(6 * MIB, 122) }, { name: 'b', filename: 'b.bin', data: bodyOf(20 * MIB, 123) }])
    assert.equal(runs.ours.response.status, 500, runs.ours.response.body)
    assert.match(runs.ours.outcome.error.message, /quota/)
    await assertFailed(runs, t, 'quota', {})
  } finally {
    garage.setQuota('none')
  }
})
