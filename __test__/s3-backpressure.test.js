'use strict'
// Backpressure end to end: a 1 GiB file, and 50 files of 10 MiB in one form, uploaded into
// a store slower than the client (garage behind a proxy that forwards at RATE) through
// each contender in its own process: uEx + multipart() + multer-s3, Express + multipart()
// + multer-s3, Express + multer + multer-s3 (the reference) and bare uWS + readMultipart +
// lib-storage (examples/s3.js).
// For each the object reads back byte for byte, and for uws-body's (multer's figures are
// printed beside them, the reference): what the server holds stays within liveBound
// (the bytes of ArrayBuffers alive right after a full collection, which the server runs
// every COLLECT_MS, plus uws-body's own memory in use, both at their most), and the client
// is paused, not buffered: what the client has handed to the kernel never runs more than
// inFlightBound ahead of what reached the store.
// inFlightBound is the sum of what may legitimately be on the way, each at its most:
//  - lib-storage: up to (queueSize + 1) parts of 5 MiB per file, and one more while a
//    part is put together (its chunks and the part), and two files at once (a file's last
//    parts still being sent while the next one is read);
//  - the server's receive queue (Linux grows it up to tcp_rmem's max) and the client's
//    send queue (tcp_wmem's max);
//  - under uWS 20.57, what uWS still delivers after res.pause(): uSockets reads again at
//    once after every read that filled its 512 KiB buffer, paused or not (loop.c,
//    `read_more`), so the pause takes effect only when a read comes back short: the
//    receive queue is drained into the file's stream, and more while the client keeps
//    the queue from running dry, and then the queue fills again behind it
//    (helpers/uws-build.js; the 20.30 fork delivers nothing after it). Beyond one queue
//    it is the client's pace that ends it, so no constant bounds it: the server counts
//    what uWS handed over during each pause (helpers/pause-tally.js), and the bounds allow
//    the most it counted, or two queues' worth (AFTER_PAUSE_MOST), whichever is more;
//  - READERS: the readers' high-water marks, the proxy's and the SDK's own chunks.
// Every part is reached in some runs: on 20.57 here (queues of 32 and 4 MiB) the client ran
// up to 112 MiB ahead in the form of 50 files.
// liveBound is the part of that held in the server's memory: lib-storage's parts, what
// uWS delivers after pause(), the readers (measured here: 22-50 MiB on 20.30 against 68.5,
// 34-89 MiB on 20.57 against 132.5). Peak RSS is printed, not bounded: on top of
// what is held it has the Buffers V8 has not collected yet, and V8 collects external
// memory when it does (ultimate-express, 256 MiB, Node 22: +86-197 MiB in most runs,
// once +351 MiB with the client 100 MiB ahead), plus malloc's fragmentation. A server
// that buffered the file would hold all of it, far over liveBound.
// S3_BACKPRESSURE_MIB sets the single file's size (1024 by default, 256 under
// UWS_BODY_TEST_LOAD=light, which also makes the form of many files 20 files: helpers/load.js).
const test = require('node:test')
const assert = require('node:assert/strict')
const { garageGate, startGarage, objectDigest, emptyBucket } = require('./helpers/garage')
const { sendForm, throttle, startUploadServer, canMeasureRss, MIB } = require('./helpers/s3-load')
const { readAfterPause, receiveBufferMax, sendBufferMax, UWS_READ } = require('./helpers/uws-build')
const { S3_SINGLE_MIB, S3_MANY_FILES } = require('./helpers/load')

const SIZE = S3_SINGLE_MIB * MIB
const RATE = 128 * MIB
// Bytes beyond one read that uWS hands over after pause(): 0 on the 20.30 fork.
const AFTER_PAUSE = readAfterPause - UWS_READ
const AFTER_PAUSE_MOST = UWS_READ + 2 * AFTER_PAUSE
const LIB_STORAGE = 2 * (4 + 2) * 5 * MIB
const READERS = 8 * MIB
/** What uWS may hand over after pause(): two queues, or the most the server counted in one pause. */
const afterPause = (stats) => Math.max(AFTER_PAUSE_MOST, UWS_READ + stats.peakAfterPause)
const inFlightBound = (stats) => LIB_STORAGE + receiveBufferMax + sendBufferMax + afterPause(stats) + READERS
const liveBound = (stats) => LIB_STORAGE + afterPause(stats) + READERS
// How often the server collects, to read what it holds.
const COLLECT_MS = 250
const MANY = S3_MANY_FILES
const CONTENDERS = ['ours-uex', 'ours-express', 'multer-express', 'read-uws']
const gate = garageGate()
const skip = gate.skip || (!canMeasureRss() && 'needs /proc/self/clear_refs (Linux) to read the peak RSS')

let garage = null
let proxy = null
let client = null

test.before(async () => {
  if (skip || gate.fail) return
  garage = await startGarage()
  proxy = await throttle(Number(new URL(garage.endpoint).port), RATE)
  client = garage.client()
})

test.after(async () => {
  if (client) client.destroy()
  if (proxy) proxy.close()
  if (garage) await garage.stop()
})

/**
 * Uploads `files` through each contender's own server into the slow store: per contender
 * { kind, seconds, held, rssGrowth, inFlight, cpuPerGiB }, every object read back by sha256.
 */
async function throughEach (t, files) {
  const total = files.reduce((n, f) => n + f.size, 0)
  const rows = []
  for (const kind of CONTENDERS) {
    const server = await startUploadServer(kind, { endpoint: `http://127.0.0.1:${proxy.port}`, bucket: garage.bucket, credentials: garage.credentials, collectMs: COLLECT_MS })
    try {
      // A small upload first: modules loaded, code warm, connections to the store open.
      const warm = await sendForm(server.port, '/up/warm', [{ name: 'f', filename: 'warm.bin', size: 6 * MIB, seed: 1 }])
      assert.equal(warm.status, 200, `${kind}: ${warm.body}`)
      const before = await server.reset()
      const startForwarded = proxy.forwarded()
      let inFlight = 0
      const started = Date.now()
      // Chunked: the uWS 20.30 fork refuses a content-length of 10^9 or more (20.57 does not).
      const r = await sendForm(server.port, '/up/big', files, {
        chunked: true,
        watch: (sent) => { inFlight = Math.max(inFlight, sent - (proxy.forwarded() - startForwarded)) }
      })
      const seconds = (Date.now() - started) / 1000
      const stats = await server.stats()
      assert.equal(r.status, 200, `${kind}: ${r.body}`)
      const stored = JSON.parse(r.body)
      assert.equal(stored.length, files.length, kind)
      for (const [i, file] of stored.entries()) {
        const got = await objectDigest(client, garage.bucket, file.key)
        assert.equal(got.size, files[i].size, kind)
        assert.equal(got.sha256, r.sha256[i], `${kind}: file ${i} read back`)
      }
      const row = { kind, seconds, held: stats.peakLiveArrayBuffers + stats.peakBytesInUse, rssGrowth: stats.peakRss - before.rss, inFlight, cpuPerGiB: stats.cpuMicros / 1e6 / (total / 1024 / MIB), liveBound: liveBound(stats), inFlightBound: inFlightBound(stats) }
      rows.push(row)
      t.diagnostic(`${kind}: ${(total / MIB / seconds).toFixed(0)} MiB/s, held at most ${(row.held / MIB).toFixed(1)} MiB (ArrayBuffers alive ${(stats.peakLiveArrayBuffers / MIB).toFixed(1)}, uws-body's memory ${(stats.peakBytesInUse / MIB).toFixed(1)}), peak RSS +${(row.rssGrowth / MIB).toFixed(1)} MiB (from ${(before.rss / MIB).toFixed(0)} MiB), client at most ${(inFlight / MIB).toFixed(1)} MiB ahead of the store, uWS handed over at most ${(stats.peakAfterPause / MIB).toFixed(1)} MiB in one pause, server CPU ${row.cpuPerGiB.toFixed(2)} s/GiB`)
    } finally {
      await server.stop()
      await emptyBucket(client, garage.bucket)
    }
  }
  // The bounds hold uws-body's contenders; multer's figures are the reference beside them.
  const failures = []
  for (const row of rows.filter((r) => r.kind !== 'multer-express')) {
    if (row.held >= row.liveBound) failures.push(`${row.kind}: the server held ${(row.held / MIB).toFixed(1)} MiB of ${total / MIB} MiB (bound ${(row.liveBound / MIB).toFixed(1)} MiB)`)
    if (row.inFlight >= row.inFlightBound) failures.push(`${row.kind}: the client ran ${(row.inFlight / MIB).toFixed(1)} MiB ahead of the store (bound ${(row.inFlightBound / MIB).toFixed(1)} MiB)`)
    // Paused, not just slow to be read: the upload took the store's time.
    if (row.seconds < (total / RATE) * 0.9) failures.push(`${row.kind}: ${row.seconds.toFixed(1)} s, faster than the store takes it`)
  }
  assert.deepEqual(failures, [])
}

test(`a ${SIZE / MIB} MiB file into a store slower than the client (${RATE / MIB} MiB/s): bounded server memory, the client paused`, { skip, timeout: 30 * 60000 }, async (t) => {
  if (gate.fail) assert.fail(`CI: ${gate.fail}`)
  await throughEach(t, [{ name: 'f', filename: 'big.bin', size: SIZE, seed: 7 }])
})

// Each file's upload ends after its last byte has been read (lib-storage still sends its
// last parts): a form of many files must not have them all in flight at once, holding up
// to (queueSize + 1) parts each, while the client sends the next.
test(`${MANY} files of 10 MiB into a store slower than the client: bounded server memory, the client paused`, { skip, timeout: 30 * 60000 }, async (t) => {
  if (gate.fail) assert.fail(`CI: ${gate.fail}`)
  await throughEach(t, Array.from({ length: MANY }, (_, i) => ({ name: 'files', filename: `f${i}.bin`, size: 10 * MIB, seed: 100 + i })))
})
