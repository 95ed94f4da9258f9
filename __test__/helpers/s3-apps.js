'use strict'
// The S3 tests' servers: the same upload route on three contenders, every file stored by
// multer-s3 (unchanged) in a real bucket:
//   ours-uex        ultimate-express (uWS) + uws-body's multipart()
//   ours-express    Express 5 (node:http) + uws-body's multipart()
//   multer-express  Express 5 + multer: the reference
// POST /up/<id> with an `x-config` header (JSON, see storageOf and middlewareOf) answers
// { body, file, files } or { error }, and records the outcome of every request, answered
// or not (an aborted client gets no answer): the error, how many times the error handler
// ran, and what the bucket held under the request's prefix at that moment.
const express = require('express')
const ultimateExpress = require('ultimate-express')
const multer = require('multer')
const multerS3 = require('multer-s3')
const uwsBody = require('../..')
const { s3Client, listKeys, listUploads, freePort } = require('./garage')

const KINDS = ['ours-uex', 'ours-express', 'multer-express']

/** The S3 clients a request may name (config.client). */
async function clientsOf (garage) {
  const readOnly = garage.addKey({ read: true, write: false })
  return {
    good: garage.client(),
    // A port nothing listens on: connection refused.
    unreachable: s3Client({ endpoint: `http://127.0.0.1:${await freePort()}`, credentials: garage.credentials }),
    wrongSecret: garage.client({ credentials: { ...garage.credentials, secretAccessKey: 'f'.repeat(64) } }),
    readOnly: garage.client({ credentials: readOnly }),
    // For a store that stops answering: each request given 2 s, and one attempt.
    impatient: garage.client({ requestHandler: { requestTimeout: 2000, throwOnRequestTimeout: true }, maxAttempts: 1 }),
    // The error handler's look at the bucket: quick to give up on a store that is down.
    lister: garage.client({ requestHandler: { requestTimeout: 5000, throwOnRequestTimeout: true }, maxAttempts: 2 })
  }
}

/**
 * multer-s3 for a configuration: key `<kind>/<id>/<n>-<originalname>` (n: the file's
 * index in the request); config.bucket names another bucket (a string) or one per file
 * (an array, by index); config.failKeyAt makes the key callback fail for that file;
 * config.contentType 'auto' uses multer-s3's AUTO_CONTENT_TYPE (it pipes file.stream
 * through a PassThrough after sniffing the first chunk).
 */
function storageOf (config, clients, garage, prefix) {
  const bucketOf = (n) => Array.isArray(config.bucket) ? (config.bucket[n] || garage.bucket) : (config.bucket || garage.bucket)
  const index = new WeakMap()
  const numberOf = (req, file) => {
    if (!index.has(file)) {
      req.s3FilesSeen = (req.s3FilesSeen || 0) + 1
      index.set(file, req.s3FilesSeen - 1)
    }
    return index.get(file)
  }
  return multerS3({
    s3: clients[config.client || 'good'],
    bucket: (req, file, cb) => cb(null, bucketOf(numberOf(req, file))),
    key: (req, file, cb) => {
      const n = numberOf(req, file)
      if (config.failKeyAt === n) return setImmediate(cb, new Error(`no key for file ${n}`))
      cb(null, `${prefix(req)}/${n}-${file.originalname}`)
    },
    contentType: config.contentType === 'auto' ? multerS3.AUTO_CONTENT_TYPE : undefined
  })
}

function middlewareOf (lib, config, storage) {
  const m = lib({ storage, limits: config.limits })
  const [kind, name] = (config.strategy || 'any').split(':')
  if (kind === 'single') return m.single(name)
  if (kind === 'array') return m.array(name)
  return m.any()
}

/** What a stored file says, with the request's prefix replaced by <prefix>, all of its keys. */
function describeFile (file, prefix) {
  if (file === undefined) return undefined
  const out = {}
  for (const k of Object.keys(file).sort()) {
    const v = file[k]
    out[k] = typeof v === 'string' ? v.split(prefix).join('<prefix>') : v
  }
  return out
}

function describeError (err, prefix) {
  const out = { name: err.name, code: err.code, message: String(err.message).split(prefix).join('<prefix>'), field: err.field, status: err.status }
  if (err.$metadata) out.s3Status = err.$metadata.httpStatusCode
  if (err.storageErrors) out.storageErrors = err.storageErrors.length
  return out
}

async function mount (app, kind, { garage, clients, outcomes }) {
  const made = new Map()
  const prefixOf = (req) => `${kind}/${req.s3Id}`
  app.post('/up/:id', (req, res, next) => {
    req.s3Id = req.params.id
    const header = req.headers['x-config'] || '{}'
    if (!made.has(header)) {
      const config = JSON.parse(header)
      const lib = kind === 'multer-express' ? multer : uwsBody.multipart
      made.set(header, middlewareOf(lib, config, storageOf(config, clients, garage, prefixOf)))
    }
    made.get(header)(req, res, next)
  }, (req, res) => {
    const prefix = prefixOf(req)
    const result = {
      body: req.body,
      file: describeFile(req.file, prefix),
      files: Array.isArray(req.files) ? req.files.map((f) => describeFile(f, prefix)) : req.files
    }
    outcomes.set(`${kind}/${req.s3Id}`, { result, calls: 1 })
    res.json(result)
  })
  app.use(async (err, req, res, next) => {
    const prefix = prefixOf(req)
    const id = `${kind}/${req.s3Id}`
    const seen = outcomes.get(id)
    if (seen !== undefined) {
      seen.calls++
      return
    }
    const entry = { error: describeError(err, prefix), calls: 1 }
    outcomes.set(id, entry)
    // What the bucket holds for this request as its error is delivered.
    try {
      entry.atError = { keys: await listKeys(clients.lister, garage.bucket, prefix + '/'), uploads: (await listUploads(clients.lister, garage.bucket, prefix + '/')).map((u) => u.key) }
    } catch (listErr) {
      entry.atError = { unknown: `${listErr.name}: ${listErr.message}` }
    }
    entry.settled = true
    if (res.headersSent) return
    res.status(typeof err.status === 'number' ? err.status : 500).json({ error: entry.error })
  })
}

/**
 * Starts the contenders against `garage`: { ports: { kind: port }, outcomes, clients,
 * outcome(kind, id), close() }.
 */
async function startS3Apps (garage, { kinds = KINDS } = {}) {
  const clients = await clientsOf(garage)
  const outcomes = new Map()
  const ports = {}
  const closers = []
  for (const kind of kinds) {
    if (kind === 'ours-uex') {
      const app = ultimateExpress()
      app.set('env', 'test')
      await mount(app, kind, { garage, clients, outcomes })
      ports[kind] = await new Promise((resolve) => app.listen(0, '127.0.0.1', () => resolve(app.port)))
      closers.push(() => app.close())
    } else {
      const app = express()
      app.set('env', 'test')
      await mount(app, kind, { garage, clients, outcomes })
      const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
      ports[kind] = server.address().port
      closers.push(() => { server.closeAllConnections(); server.close() })
    }
  }
  return {
    ports,
    outcomes,
    clients,
    /** The outcome of request `id` on `kind` once its error handler has looked at the bucket (or it answered). */
    async outcome (kind, id, timeout = 15000) {
      const until = Date.now() + timeout
      for (;;) {
        const o = outcomes.get(`${kind}/${id}`)
        if (o !== undefined && (o.result || o.settled)) return o
        if (Date.now() > until) return { timedOut: true }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    close () {
      for (const c of closers) c()
      for (const c of Object.values(clients)) c.destroy()
    }
  }
}

module.exports = { startS3Apps, KINDS }
