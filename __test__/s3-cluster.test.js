'use strict'
// Uploads that outgrow one machine: garage as a cluster of three nodes on loopback, every
// object on every node (replication factor 3, writes on 2 of 3). Files uploaded through one
// node, by multipart() + multer-s3 under ultimate-express and under Express and by multer
// + multer-s3, are read back byte for byte through the others; with one node killed
// mid-upload the upload completes (the two others are a quorum) and reads back too.
const test = require('node:test')
const assert = require('node:assert/strict')
const { request, bodyOf, sha256 } = require('./helpers/client')
const { formBody } = require('./helpers/multer-form')
const { garageGate, gatedTest, startGarage, objectDigest, listUploads } = require('./helpers/garage')
const { startS3Apps, KINDS } = require('./helpers/s3-apps')

const MIB = 1024 * 1024
const BOUNDARY = 'S3cLuStErBoUnDaRy'
const gate = garageGate()

let garage = null
let apps = null

test.before(async () => {
  if (gate.skip || gate.fail) return
  garage = await startGarage({ nodes: 3 })
  apps = await startS3Apps(garage)
})

test.after(async () => {
  if (apps) apps.close()
  if (garage) await garage.stop()
})

/** A test that needs garage: skipped with the reason where it is missing, failed under CI. */
const s3test = gatedTest(gate)

/** Uploads through node 0; `during(kind)` runs while the request is under way. */
async function upload (id, parts, during = async () => {}) {
  const body = formBody(BOUNDARY, parts)
  const out = {}
  for (const kind of KINDS) {
    const sent = request(apps.ports[kind], {
      path: `/up/${id}`,
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'x-config': '{}' },
      body,
      cuts: Array.from({ length: Math.floor(body.length / MIB) }, (_, i) => (i + 1) * MIB),
      pause: 5,
      timeout: 60000
    })
    await during(kind)
    const response = await sent
    assert.equal(response.status, 200, `${kind}: ${response.body}`)
    out[kind] = JSON.parse(response.body).files
  }
  return out
}

/** Every file of every contender, read through node `at`, is what was sent. */
async function assertReadBack (id, parts, files, at) {
  const client = garage.client({ endpoint: garage.endpoints[at] })
  try {
    for (const kind of KINDS) {
      for (const [i, file] of files[kind].entries()) {
        const stored = await objectDigest(client, garage.bucket, file.key.replace('<prefix>', `${kind}/${id}`))
        assert.equal(stored.sha256, sha256(parts[i].data), `${kind}: file ${i} read through node ${at}`)
        assert.equal(stored.etag, file.etag)
        assert.equal(file.etag, files['multer-express'][i].etag, `${kind}: file ${i}: the ETag multer-s3 got under multer`)
      }
    }
  } finally {
    client.destroy()
  }
}

s3test('written through one node, read back through the two others, byte for byte', async () => {
  const parts = [1, 3 * MIB, 13 * MIB + 1].map((size, i) => ({ name: 'f', filename: `c${i}.bin`, data: bodyOf(size, 200 + i) }))
  const files = await upload('spread', parts)
  await assertReadBack('spread', parts, files, 1)
  await assertReadBack('spread', parts, files, 2)
})

s3test('a node killed mid-upload: the upload completes on the two others, and reads back', async (t) => {
  const parts = [{ name: 'f', filename: 'big.bin', data: bodyOf(24 * MIB, 210) }]
  const victim = garage.nodes[2]
  const files = await upload('quorum', parts, async (kind) => {
    // Once the first contender's multipart upload has begun, node 2 dies; it stays down
    // for the others.
    while ((await listUploads(apps.clients.good, garage.bucket, `${kind}/quorum/`)).length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    if (victim.alive()) await victim.stop('SIGKILL')
  })
  await assertReadBack('quorum', parts, files, 1)
  await garage.restartNode(2)
  // Node 2 missed the blocks written while it was down: it reads them from the others.
  await assertReadBack('quorum', parts, files, 2)
})
