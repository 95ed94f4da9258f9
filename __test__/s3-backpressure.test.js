'use strict'
// Backpressure end to end: a 1 GiB file uploaded into a store slower than the client (garage
// behind a proxy that forwards at RATE) through each contender in its own process:
// uEx + multipart() + multer-s3, Express + multipart() + multer-s3, Express + multer +
// multer-s3 (the reference) and bare uWS + readMultipart + lib-storage (examples/s3.js).
// For each the object reads back byte for byte, and for uws-body's (multer's figures are
// printed beside them, the reference): the server's peak RSS (the kernel's VmHWM) stays
// within RSS_BOUND of its RSS before the upload, and the client is paused, not buffered:
// what the client has handed to the kernel never runs more than IN_FLIGHT_BOUND ahead of
// what reached the store. lib-storage itself holds up to five 5 MiB parts (four being
// sent, one being filled); to that add the sockets' buffers, the readers' high-water marks
// and, under uWS 20.57, what uWS still delivers after res.pause() (uSockets keeps reading
// while each read fills its 512 KiB buffer: up to ~6 MiB, the socket's receive queue, per
// pause; the 20.30 fork delivers nothing after it). Measured here (2 cores, shared): ahead
// of the store 23-26 MiB on 20.30, up to 53 MiB on 20.57; peak RSS +59-75 MiB on 20.30,
// +85-190 MiB on 20.57 (most of it Buffers not yet collected; Node 24 the most), multer
// +69-96 MiB. The bounds leave room for that noise; 1 GiB buffered anywhere would be far
// over both.
// S3_BACKPRESSURE_MIB sets the file's size (1024 by default).
const test = require('node:test')
const assert = require('node:assert/strict')
const { garageGate, startGarage, objectDigest, emptyBucket } = require('./helpers/garage')
const { sendForm, throttle, startUploadServer, canMeasureRss, MIB } = require('./helpers/s3-load')

const SIZE = (Number(process.env.S3_BACKPRESSURE_MIB) || 1024) * MIB
const RATE = 128 * MIB
const RSS_BOUND = 256 * MIB
const IN_FLIGHT_BOUND = 64 * MIB
const CONTENDERS = ['ours-uex', 'ours-express', 'multer-express', 'read-uws']
const gate = garageGate()
const skip = gate.skip || (!canMeasureRss() && 'needs /proc/self/clear_refs (Linux) to read the peak RSS')

test(`a ${SIZE / MIB} MiB upload into a store slower than the client (${RATE / MIB} MiB/s): bounded server memory, the client paused`, { skip, timeout: 30 * 60000 }, async (t) => {
  if (gate.fail) assert.fail(`CI: ${gate.fail}`)
  const garage = await startGarage()
  const proxy = await throttle(Number(new URL(garage.endpoint).port), RATE)
  const client = garage.client()
  const rows = []
  try {
    for (const kind of CONTENDERS) {
      const server = await startUploadServer(kind, { endpoint: `http://127.0.0.1:${proxy.port}`, bucket: garage.bucket, credentials: garage.credentials })
      try {
        // A small upload first: modules loaded, code warm, connections to the store open.
        const warm = await sendForm(server.port, '/up/warm', [{ name: 'f', filename: 'warm.bin', size: 6 * MIB, seed: 1 }])
        assert.equal(warm.status, 200, `${kind}: ${warm.body}`)
        const before = await server.reset()
        const startForwarded = proxy.forwarded()
        let inFlight = 0
        const started = Date.now()
        // Chunked: the uWS 20.30 fork refuses a content-length of 10^9 or more (20.57 does not).
        const r = await sendForm(server.port, '/up/big', [{ name: 'f', filename: 'big.bin', size: SIZE, seed: 7 }], {
          chunked: true,
          watch: (sent) => { inFlight = Math.max(inFlight, sent - (proxy.forwarded() - startForwarded)) }
        })
        const seconds = (Date.now() - started) / 1000
        const stats = await server.stats()
        assert.equal(r.status, 200, `${kind}: ${r.body}`)
        const [file] = JSON.parse(r.body)
        const stored = await objectDigest(client, garage.bucket, file.key)
        assert.equal(stored.size, SIZE, kind)
        assert.equal(stored.sha256, r.sha256[0], `${kind}: read back`)
        const row = { kind, seconds, rssGrowth: stats.peakRss - before.rss, inFlight, cpuPerGiB: stats.cpuMicros / 1e6 / (SIZE / 1024 / MIB) }
        rows.push(row)
        t.diagnostic(`${kind}: ${(SIZE / MIB / seconds).toFixed(0)} MiB/s, peak RSS +${(row.rssGrowth / MIB).toFixed(1)} MiB (from ${(before.rss / MIB).toFixed(0)} MiB), client at most ${(inFlight / MIB).toFixed(1)} MiB ahead of the store, server CPU ${row.cpuPerGiB.toFixed(2)} s/GiB`)
      } finally {
        await server.stop()
        await emptyBucket(client, garage.bucket)
      }
    }
  } finally {
    client.destroy()
    proxy.close()
    await garage.stop()
  }
  // The bounds hold uws-body's contenders; multer's figures are the reference beside them.
  for (const row of rows.filter((r) => r.kind !== 'multer-express')) {
    assert.ok(row.rssGrowth < RSS_BOUND, `${row.kind}: server peak RSS grew ${(row.rssGrowth / MIB).toFixed(1)} MiB for ${SIZE / MIB} MiB (bound ${RSS_BOUND / MIB} MiB)`)
    assert.ok(row.inFlight < IN_FLIGHT_BOUND, `${row.kind}: the client ran ${(row.inFlight / MIB).toFixed(1)} MiB ahead of the store (bound ${IN_FLIGHT_BOUND / MIB} MiB)`)
    // Paused, not just slow to be read: the upload took the store's time.
    assert.ok(row.seconds >= (SIZE / RATE) * 0.9, `${row.kind}: ${row.seconds.toFixed(1)} s, faster than the store takes it`)
  }
})
