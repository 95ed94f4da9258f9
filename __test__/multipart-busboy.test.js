'use strict'
// readMultipart against busboy 1.6, the parser under multer: seeded random forms (fields
// and files, binary contents full of CRLF and pieces of the boundary, unicode names in
// UTF-8 bytes and in RFC 8187 `filename*`, random limits), each fed whole to busboy in
// this process and sent to readMultipart over uWS on 127.0.0.1 in a random cutting,
// with and without content-length. Fields, file bytes (sha256), names, mimetypes and
// encodings must be the same, and so must the refusals: busboy is given the limits as
// multer 2.5 gives them (fileSize, fieldSize and parts plus one: readMultipart's limits
// are inclusive maxima), and readMultipart's code must be one busboy reported (busboy
// reports some limits a part later than readMultipart stops, so the first may differ).
// MULTIPART_SEED replays a run, MULTIPART_CASES sets its length (default 200).
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Writable } = require('node:stream')
const busboy = require('busboy')
const { request, sha256 } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { startServer } = require('./helpers/server')
const { randomForm, contentType } = require('./helpers/multipart')
const { readMultipart } = require('..')

const SEED = Number(process.env.MULTIPART_SEED) || (Date.now() % 1000000)
const CASES = Number(process.env.MULTIPART_CASES) || 200
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-mpdiff-'))
const options = new Map()

// The WHATWG escapes multer 2.5 and readMultipart turn back in names.
const unescapeName = (s) => s.replace(/%0A|%0D|%22/gi, (m) => ({ '%0A': '\n', '%0D': '\r', '%22': '"' })[m.toUpperCase()])

function addField (fields, name, value) {
  if (fields[name] === undefined) fields[name] = value
  else if (typeof fields[name] === 'string') fields[name] = [fields[name], value]
  else fields[name].push(value)
}

/** What busboy (configured as multer 2.5 configures it) makes of `body`: { fields, files } or { codes }. */
function viaBusboy (body, type, { limits = {}, defParamCharset }) {
  return new Promise((resolve) => {
    const given = { ...limits }
    for (const key of ['fileSize', 'fieldSize', 'parts']) if (given[key] !== undefined) given[key] += 1
    if (given.fieldSize === undefined) given.fieldSize = 1024 * 1024 + 1
    delete given.fieldNameSize
    const bb = busboy({ headers: { 'content-type': type }, limits: given, defParamCharset })
    const fields = Object.create(null)
    const files = []
    const codes = new Set()
    // readMultipart counts a name's bytes as sent (multer: its characters once decoded).
    const nameTooLong = (name) => limits.fieldNameSize !== undefined && Buffer.byteLength(name, defParamCharset === 'utf8' ? 'utf8' : 'latin1') > limits.fieldNameSize
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) codes.add('LIMIT_FIELD_VALUE')
      if (nameTooLong(name)) codes.add('LIMIT_FIELD_KEY')
      addField(fields, unescapeName(name), value)
    })
    bb.on('file', (name, stream, info) => {
      // A file part without a file name (or one that is only a path) is no file, as for
      // multer: dropped, and not held to fileSize.
      if (!info.filename) return stream.resume()
      if (nameTooLong(name)) codes.add('LIMIT_FIELD_KEY')
      const hash = crypto.createHash('sha256')
      let size = 0
      const file = { fieldname: unescapeName(name), originalname: unescapeName(info.filename), mimetype: info.mimeType, encoding: info.encoding }
      files.push(file)
      stream.on('data', (d) => { hash.update(d); size += d.length })
      stream.on('limit', () => codes.add('LIMIT_FILE_SIZE'))
      stream.on('end', () => { file.size = size; file.digest = hash.digest('hex') })
    })
    bb.on('partsLimit', () => codes.add('LIMIT_PART_COUNT'))
    bb.on('filesLimit', () => codes.add('LIMIT_FILE_COUNT'))
    bb.on('fieldsLimit', () => codes.add('LIMIT_FIELD_COUNT'))
    bb.on('error', (err) => { codes.add(`busboy: ${err.message}`); resolve({ codes }) })
    bb.on('close', () => resolve(codes.size > 0 ? { codes } : { fields: { ...fields }, files }))
    bb.end(body)
  })
}

function route (res, req) {
  const id = req.getHeader('x-id')
  const { opts, storage } = options.get(id)
  options.delete(id)
  const digests = []
  let store
  if (storage === 'disk') store = { dest: dir }
  else if (storage === 'handler') {
    store = () => {
      const hash = crypto.createHash('sha256')
      const entry = {}
      digests.push(entry)
      return new Writable({
        write (chunk, encoding, callback) { hash.update(chunk); callback() },
        final (callback) { entry.digest = hash.digest('hex'); callback() }
      })
    }
  }
  readMultipart(res, req, { ...opts, storage: store }).then((result) => {
    const files = result.files.map((f, i) => {
      let digest
      if (f.buffer) digest = sha256(f.buffer)
      else if (f.path) {
        digest = sha256(fs.readFileSync(f.path))
        fs.unlinkSync(f.path)
      } else digest = digests[i].digest
      return { fieldname: f.fieldname, originalname: f.originalname, mimetype: f.mimetype, encoding: f.encoding, size: f.size, digest }
    })
    if (!res.aborted) res.cork(() => res.end(JSON.stringify({ fields: result.fields, files })))
  }, (err) => {
    if (!res.aborted) res.cork(() => res.writeStatus(`${err.status || 500} Error`).end(JSON.stringify({ code: err.code }), true))
  })
}

let port, server
test.before(async () => {
  server = await startServer({ '/mp': route })
  port = server.port
})
test.after(() => {
  server.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Limits near what the form holds, so that some are broken and some met exactly. */
function randomLimits (form, next) {
  if (next() < 0.4) return undefined
  const files = form.parts.filter((p) => p.data !== undefined)
  const fields = form.parts.filter((p) => p.data === undefined)
  const near = (n) => Math.max(0, n + Math.floor(next() * 3) - 1)
  const limits = {}
  if (next() < 0.4 && files.length) limits.fileSize = near(Math.max(...files.map((f) => f.data.length)))
  if (next() < 0.3 && fields.length) limits.fieldSize = near(Math.max(...fields.map((f) => Buffer.byteLength(f.value))))
  if (next() < 0.3) limits.files = near(files.length)
  if (next() < 0.3) limits.fields = near(fields.length)
  if (next() < 0.3) limits.parts = near(form.parts.length)
  if (next() < 0.2 && form.parts.length) limits.fieldNameSize = near(Math.max(...form.parts.map((p) => p.nameBytes.length)))
  return limits
}

test(`readMultipart and busboy agree on ${CASES} random forms (MULTIPART_SEED=${SEED})`, async () => {
  let refused = 0
  let files = 0
  for (let i = 0; i < CASES; i++) {
    const seed = SEED * 1000 + i
    const form = randomForm(seed, { maxFile: i % 20 === 0 ? 1024 * 1024 : 64 * 1024 })
    const next = form.next
    const type = contentType(form.boundary)
    const opts = { limits: randomLimits(form, next), defParamCharset: next() < 0.5 ? 'utf8' : undefined }
    const storage = ['memory', 'disk', 'handler'][Math.floor(next() * 3)]
    const want = await viaBusboy(form.body, type, opts)
    const id = String(i)
    options.set(id, { opts, storage })
    const chunked = next() < 0.5
    const cuts = Array.from({ length: Math.floor(next() * 6) }, () => Math.floor(next() * form.body.length)).sort((a, b) => a - b)
    const r = await request(port, { path: '/mp', body: form.body, chunked, chunkSize: 1 + Math.floor(next() * 20000), cuts, headers: { 'x-id': id, 'content-type': type }, timeout: 60000 })
    const got = JSON.parse(r.body)
    const what = `case ${i} (MULTIPART_SEED=${SEED}, form seed ${seed}, ${storage}, limits ${JSON.stringify(opts.limits)}, charset ${opts.defParamCharset})`
    if (want.codes) {
      refused++
      assert.ok(got.code !== undefined, `${what}: busboy refused (${[...want.codes]}), readMultipart read ${r.body.slice(0, 300)}`)
      assert.ok(want.codes.has(got.code), `${what}: readMultipart ${got.code}, busboy ${[...want.codes]}`)
    } else {
      assert.equal(r.status, 200, `${what}: ${r.body}`)
      assert.deepEqual(got, want, what)
      files += want.files.length
    }
  }
  assert.ok(refused > CASES / 10 && refused < CASES * 0.9, `${refused} of ${CASES} refused: the limits should break some forms and not others`)
  assert.ok(files > CASES, `${files} files compared`)
  assert.deepEqual(fs.readdirSync(dir), [])
  assert.equal(await bytesInUseAfterGc(), 0)
})
