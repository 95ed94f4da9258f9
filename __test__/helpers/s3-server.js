'use strict'
// An upload server in its own process, so that its memory and CPU are its own: the S3
// backpressure test (__test__/s3-backpressure.test.js) and the S3 bench (bench/s3.js)
// fork it. argv[2] is the contender:
//   ours-uex        ultimate-express + uws-body's multipart() + multer-s3
//   ours-express    Express 5 + uws-body's multipart() + multer-s3
//   multer-express  Express 5 + multer + multer-s3
//   read-uws        bare uWS + readMultipart + lib-storage (examples/s3.js's s3Uploads)
// The store: S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY. POST /up/<id>
// stores every file under <kind>/<id>/ and answers [{ key, size, etag }], or the error
// with a 500. Messages from the parent: 'reset' (CPU from now, peak RSS from now: the
// kernel's high-water mark, VmHWM, reset through /proc/self/clear_refs) and 'stats'
// ({ cpuMicros, rss, peakRss, peakLiveArrayBuffers, peakBytesInUse, peakAfterPause }, bytes;
// peakAfterPause: the most uWS handed over during one pause, helpers/pause-tally.js).
const fs = require('node:fs')

const { s3Client } = require('./garage')

const kind = process.argv[2]
const bucket = process.env.S3_BUCKET
const client = s3Client({
  endpoint: process.env.S3_ENDPOINT,
  credentials: { accessKeyId: process.env.S3_ACCESS_KEY_ID, secretAccessKey: process.env.S3_SECRET_ACCESS_KEY }
})

function keyOf (id) {
  let n = 0
  return (originalname) => `${kind}/${id}/${n++}-${originalname}`
}

function memory () {
  const status = fs.readFileSync('/proc/self/status', 'utf8')
  const kib = (name) => Number((status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm')) || [0, 0])[1]) * 1024
  return { rss: kib('VmRSS'), peakRss: kib('VmHWM') }
}

// What the server holds, from a reset, at its most: the bytes of ArrayBuffers still alive
// right after a full collection, and uws-body's own pooled memory in use. With
// S3_SERVER_COLLECT_MS (and --expose-gc) the server collects that often to read them;
// else (the bench, whose CPU figures a collection would change) nothing is sampled.
// What V8 leaves uncollected for a while is not held: its collections of external memory
// run when they run, and peak RSS has been seen 250 MiB above the live set because of it.
const uwsBody = require('../..')
const COLLECT_MS = Number(process.env.S3_SERVER_COLLECT_MS) || 0
// The test counts what uWS delivers after pause(); the bench (no collections) runs as users do.
const pauses = require('./pause-tally')
if (COLLECT_MS > 0) pauses.watchPauses(require('uWebSockets.js'))
let peaks = { liveArrayBuffers: 0, bytesInUse: 0 }
let sampler = null
function sample () {
  if (COLLECT_MS === 0) return
  globalThis.gc()
  peaks.liveArrayBuffers = Math.max(peaks.liveArrayBuffers, process.memoryUsage().arrayBuffers)
  peaks.bytesInUse = Math.max(peaks.bytesInUse, uwsBody.stats().bytesInUse)
}

let cpu = process.cpuUsage()
process.on('message', (message) => {
  if (message === 'reset') {
    cpu = process.cpuUsage()
    // 5: reset the peak RSS to the current RSS (proc(5), clear_refs).
    fs.writeFileSync('/proc/self/clear_refs', '5')
    peaks = { liveArrayBuffers: 0, bytesInUse: 0 }
    pauses.reset()
    sample()
    if (sampler === null && COLLECT_MS > 0) sampler = setInterval(sample, COLLECT_MS).unref()
    process.send({ reset: true, ...memory(), ...peaks })
  } else if (message === 'stats') {
    const used = process.cpuUsage(cpu)
    sample()
    process.send({ cpuMicros: used.user + used.system, ...memory(), peakLiveArrayBuffers: peaks.liveArrayBuffers, peakBytesInUse: peaks.bytesInUse, peakAfterPause: pauses.peakAfterPause() })
  }
})
// The parent ends by disconnecting.
process.on('disconnect', () => process.exit(0))

const describe = (err) => ({ name: err.name, code: err.code, message: err.message })

if (kind === 'read-uws') {
  const uWS = require('uWebSockets.js')
  const { readMultipart } = require('../..')
  const { s3Uploads } = require('../../examples/s3')
  const app = uWS.App()
  app.post('/up/:id', (res, req) => {
    const key = keyOf(req.getParameter(0))
    const s3 = s3Uploads({ client, bucket, key: (file) => key(file.originalname) })
    readMultipart(res, req, { storage: s3.storage, digest: s3.digest }).then(
      ({ files }) => {
        const out = files.map((f, i) => ({ key: s3.stored[i].key, size: f.size, etag: s3.stored[i].etag }))
        if (!res.aborted) res.cork(() => res.end(JSON.stringify(out)))
      },
      async (err) => {
        await s3.remove()
        if (!res.aborted) res.cork(() => res.writeStatus('500 Error').end(JSON.stringify(describe(err)), true))
      }
    )
  })
  app.listen('127.0.0.1', 0, (token) => process.send({ port: uWS.us_socket_local_port(token) }))
} else {
  const multerS3 = require('multer-s3')
  const lib = kind === 'multer-express' ? require('multer') : require('../..').multipart
  const app = kind === 'ours-uex' ? require('ultimate-express')() : require('express')()
  app.set('env', 'test')
  const upload = lib({
    storage: multerS3({
      s3: client,
      bucket,
      key: (req, file, cb) => {
        if (req.s3Key === undefined) req.s3Key = keyOf(req.params.id)
        cb(null, req.s3Key(file.originalname))
      }
    })
  }).any()
  app.post('/up/:id', upload, (req, res) => {
    res.json(req.files.map((f) => ({ key: f.key, size: f.size, etag: f.etag })))
  })
  app.use((err, req, res, next) => res.status(500).json(describe(err)))
  if (kind === 'ours-uex') {
    app.listen(0, '127.0.0.1', () => process.send({ port: app.port }))
  } else {
    const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
  }
}
