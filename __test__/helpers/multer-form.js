'use strict'
// Multipart bodies for the multer tests: a seeded generator of forms (fields, files,
// unicode and `filename*` names, binary contents with CRLF and boundary-like bytes) and
// the normalised view of req.body / req.file(s) / errors both servers answer with.
const fs = require('node:fs')

const { sha256 } = require('./client')

/**
 * The body of a form. A part: { name?, filename?, filenameStar?, type?, data: Buffer,
 * headers?: extra raw header lines }. Header bytes are UTF-8, as browsers send them.
 */
function formBody (boundary, parts, { preamble = '', epilogue = '\r\n' } = {}) {
  const out = [Buffer.from(preamble)]
  for (const p of parts) {
    let disposition = 'Content-Disposition: form-data'
    if (p.name !== undefined) disposition += `; name="${p.name}"`
    if (p.filename !== undefined) disposition += `; filename="${p.filename}"`
    if (p.filenameStar !== undefined) disposition += `; filename*=UTF-8''${encodeURIComponent(p.filenameStar)}`
    const lines = [disposition]
    if (p.type !== undefined) lines.push(`Content-Type: ${p.type}`)
    for (const h of p.headers || []) lines.push(h)
    out.push(Buffer.from(`--${boundary}\r\n${lines.join('\r\n')}\r\n\r\n`, 'utf8'), p.data, Buffer.from('\r\n'))
  }
  out.push(Buffer.from(`--${boundary}--${epilogue}`))
  return Buffer.concat(out)
}

const FIELD_NAMES = ['q', 'title', 'a[b]', 'a[c]', 'a[]', 'x[0]', 'x[1]', 'a[b][c]', 'ünï', '名前', 'p%22q', 'z[', '[k]']
const FILE_FIELDS = ['f', 'g', 'docs', 'ünï']
const FILE_NAMES = ['a.txt', 'photo.png', 'dir/sub/x.bin', 'C:\\temp\\y.doc', 'ñandú.txt', '名.png', 'a%22b.txt', 'x', 'space name.pdf', '../../etc/passwd']
const TYPES = ['text/plain', 'application/octet-stream', 'image/png', 'text/plain; charset=utf-8', 'APPLICATION/JSON', undefined]
const TEXTS = ['', 'hello', 'héllo wörld', '名前は', 'line1\r\nline2', '--', 'a&b=c', '🙂 emoji', ' spaced ']

/** One generated case: the form, how it is sent, and the middleware's configuration. */
function generateCase (rnd, index) {
  const pick = (list) => list[Math.floor(rnd() * list.length)]
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1))
  const alnum = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
  let boundary = rnd() < 0.5 ? '----WebKitFormBoundary' : '-'.repeat(int(0, 6))
  for (let i = int(4, 16); i > 0; i--) boundary += pick(alnum)
  // Sequences close to a delimiter that are not one, whatever bytes surround them.
  const nearBoundary = [`\r\n--${boundary.slice(0, -1)}\x00`, `x--${boundary}`, `\r\n-${boundary}`, '\r\n', '\r\n\r\n', `\r\n--${boundary.slice(0, -1)}\r\n`]

  const binary = (size) => {
    const pieces = []
    let n = 0
    while (n < size) {
      if (rnd() < 0.1) {
        const s = Buffer.from(pick(nearBoundary))
        pieces.push(s)
        n += s.length
      } else {
        const len = Math.min(size - n, int(1, 4096))
        const b = Buffer.allocUnsafe(len)
        for (let i = 0; i < len; i++) b[i] = Math.floor(rnd() * 256)
        pieces.push(b)
        n += len
      }
    }
    return Buffer.concat(pieces).subarray(0, size)
  }

  const parts = []
  const nParts = int(0, 7)
  for (let i = 0; i < nParts; i++) {
    const r = rnd()
    if (r < 0.45) {
      const value = rnd() < 0.8 ? pick(TEXTS) + (rnd() < 0.3 ? pick(TEXTS) : '') : binary(int(0, 300)).toString('latin1').replace(/\r\n--/g, '')
      parts.push({ name: pick(FIELD_NAMES), data: Buffer.from(value, rnd() < 0.9 ? 'utf8' : 'latin1') })
    } else {
      const size = rnd() < 0.85 ? int(0, 3000) : int(20000, 150000)
      const part = { name: rnd() < 0.85 ? pick(FILE_FIELDS) : pick(FIELD_NAMES), data: binary(size) }
      const naming = rnd()
      if (naming < 0.7) part.filename = pick(FILE_NAMES)
      else if (naming < 0.85) part.filenameStar = pick(FILE_NAMES)
      else if (naming < 0.92) { part.filename = 'fallback.txt'; part.filenameStar = pick(FILE_NAMES) } else part.type = 'application/octet-stream' // a file without a name
      if (part.type === undefined) part.type = pick(TYPES)
      parts.push(part)
    }
    if (rnd() < 0.03) delete parts[parts.length - 1].name
  }

  const files = parts.filter((p) => p.filename !== undefined || p.filenameStar !== undefined || p.type === 'application/octet-stream')
  const fields = parts.filter((p) => !files.includes(p))
  const limits = {}
  if (rnd() < 0.5) {
    if (rnd() < 0.3 && files.length) limits.fileSize = Math.max(0, pick(files).data.length + int(-1, 1))
    if (rnd() < 0.3 && fields.length) limits.fieldSize = Math.max(0, pick(fields).data.length + int(-1, 1))
    if (rnd() < 0.2) limits.files = int(0, files.length + 1)
    if (rnd() < 0.2) limits.fields = int(0, fields.length + 1)
    if (rnd() < 0.2) limits.parts = int(0, parts.length + 1)
    if (rnd() < 0.15) limits.fieldNameSize = int(1, 6)
  }

  const strategies = () => [
    { kind: 'single', name: pick(FILE_FIELDS) },
    { kind: 'array', name: pick(FILE_FIELDS), maxCount: rnd() < 0.5 ? undefined : int(0, 3) },
    { kind: 'fields', fields: [{ name: 'f', maxCount: int(0, 3) }, { name: 'g' }, { name: 'docs', maxCount: 2 }] },
    { kind: 'none' },
    { kind: 'any' },
    { kind: 'any' }
  ]
  let strategy = pick(strategies())
  const filter = pick(['none', 'none', 'none', 'rejectPng', 'async', 'asyncRejectOdd', 'syncError'])
  if (filter.startsWith('async') && limits.fileSize !== undefined) {
    // A file over fileSize fails when its filter accepts it, later than its bytes:
    // before or after an error in a later part depending on how the bytes were cut into
    // reads (for multer as here). So such cases have no other cause of error.
    strategy = { kind: 'any' }
    for (const key of Object.keys(limits)) if (key !== 'fileSize') delete limits[key]
    for (const p of parts) if (p.name === undefined) p.name = 'f'
  }
  // An asynchronous refusal gives the field's slot back when it answers, which is before
  // or after the next file's head depending on how the bytes were cut into reads, for
  // multer as here: refusing filters are used only where no field has a maxCount.
  const counted = strategy.kind !== 'any' && strategy.kind !== 'none'
  const filterUsed = filter === 'asyncRejectOdd' && counted ? 'async' : filter

  const body = formBody(boundary, parts, { preamble: rnd() < 0.1 ? 'preamble\r\n' : '', epilogue: pick(['', '\r\n', '\r\nepilogue']) })
  const cuts = []
  for (let i = int(0, 6); i > 0; i--) cuts.push(int(1, Math.max(1, body.length - 1)))
  cuts.sort((a, b) => a - b)
  const quoted = rnd() < 0.3
  return {
    index,
    contentType: `multipart/form-data; boundary=${quoted ? `"${boundary}"` : boundary}`,
    body,
    cuts,
    pause: rnd() < 0.3 ? 1 : 0,
    config: { strategy, limits: Object.keys(limits).length ? limits : undefined, filter: filterUsed }
  }
}

/** The fileFilter a configuration names (the same one for both libraries). */
function fileFilterOf (name) {
  switch (name) {
    case 'rejectPng': return (req, file, cb) => cb(null, file.mimetype !== 'image/png')
    case 'async': return (req, file, cb) => setTimeout(() => cb(null, true), 1)
    case 'asyncRejectOdd': return (req, file, cb) => setImmediate(() => cb(null, file.originalname.length % 2 === 0))
    case 'syncError': return (req, file, cb) => cb(file.originalname.includes('x') ? new Error('refused by filter') : null, true)
    default: return undefined
  }
}

/** The middleware for a configuration, from `lib` (multer, or uws-body's multipart). */
function middlewareOf (lib, config, storage) {
  const m = lib({ limits: config.limits, fileFilter: fileFilterOf(config.filter), storage })
  const s = config.strategy
  switch (s.kind) {
    case 'single': return m.single(s.name)
    case 'array': return m.array(s.name, s.maxCount)
    case 'fields': return m.fields(s.fields)
    case 'none': return m.none()
    default: return m.any()
  }
}

function normalFile (file, dest) {
  if (file === undefined) return undefined
  const out = { keys: Object.keys(file).sort().join(',') }
  for (const k of ['fieldname', 'originalname', 'encoding', 'mimetype', 'size']) out[k] = file[k]
  if (file.buffer) out.sha = sha256(file.buffer)
  if (file.path) {
    out.sha = sha256(fs.readFileSync(file.path))
    out.inDest = file.destination === dest && file.path.startsWith(dest + require('node:path').sep)
    out.filenameLength = file.filename.length
  }
  return out
}

/** What a request produced, in the same form from either server. */
function normalResult (req, err, dest) {
  if (err) {
    return {
      error: {
        name: err.name,
        code: err.code,
        field: err.field,
        filename: err.filename,
        message: err.message,
        storageErrors: err.storageErrors ? err.storageErrors.length : undefined
      }
    }
  }
  let files = req.files
  if (Array.isArray(files)) files = files.map((f) => normalFile(f, dest))
  else if (files) files = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, v.map((f) => normalFile(f, dest))]))
  return {
    body: req.body,
    bodyProto: req.body === undefined ? 'none' : Object.getPrototypeOf(req.body) === null ? 'null' : 'object',
    file: normalFile(req.file, dest),
    files
  }
}

module.exports = { formBody, generateCase, middlewareOf, normalResult, fileFilterOf, sha256 }
