'use strict'
// readMultipart over the wire: a real uWS server on 127.0.0.1, forms sent with and
// without content-length in any cutting, every file checked by sha256 in each storage
// (memory, disk, the caller's Writable), every limit at its value and one past it, bad
// input, aborts (no file left on disk, no native memory left), and backpressure.
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Writable } = require('node:stream')
const { AsyncLocalStorage } = require('node:async_hooks')
const { request, bodyOf, sha256, sleep } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { readAfterPause, drainsAfterPause } = require('./helpers/uws-build')
const { startServer } = require('./helpers/server')
const { formBody, contentType, trickyBytes } = require('./helpers/multipart')
const { random } = require('./helpers/random')
const { readMultipart, BodyError } = require('..')

const KIB = 1024
const MIB = 1024 * KIB

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-mp-'))
const seen = new Map()
const options = new Map()

/** The storage named by x-storage: memory, disk (into `dir`), slow (a slow Writable), handler. */
function storageFor (kind, record) {
  if (kind === 'disk') return { dest: dir }
  if (kind === 'missing') return { dest: path.join(dir, 'does-not-exist') }
  if (kind === 'memory') return 'memory'
  if (kind === 'handler' || kind === 'slow' || kind === 'failing') {
    return (file) => {
      const hash = crypto.createHash('sha256')
      const entry = { file, hash, bytes: 0, destroyed: false, finished: false }
      record.streams.push(entry)
      const w = new Writable({
        highWaterMark: 64 * KIB,
        write (chunk, encoding, callback) {
          hash.update(chunk)
          entry.bytes += chunk.length
          record.maxInFlight = Math.max(record.maxInFlight, w.writableLength)
          if (kind === 'failing' && entry.bytes > 100 * KIB) return callback(new Error('disk full'))
          if (kind === 'slow') setTimeout(callback, 2)
          else callback()
        },
        final (callback) {
          entry.finished = true
          entry.digest = hash.digest('hex')
          callback()
        },
        destroy (error, callback) {
          entry.destroyed = true
          callback(error)
        }
      })
      return w
    }
  }
  return undefined
}

function route (res, req) {
  const id = req.getHeader('x-id')
  const record = { paused: 0, resumed: 0, maxInFlight: 0, streams: [], result: null, error: null, paths: [] }
  seen.set(id, record)
  const pause = res.pause.bind(res)
  const resume = res.resume.bind(res)
  res.pause = () => { record.paused++; return pause() }
  res.resume = () => { record.resumed++; return resume() }
  const opts = { ...(options.get(id) || {}) }
  opts.storage = storageFor(req.getHeader('x-storage'), record)
  readMultipart(res, req, opts).then((result) => {
    // Kept without the Buffers: the memory checks need them collected.
    record.result = { fields: result.fields, files: result.files.map(({ buffer, ...f }) => ({ ...f, shared: buffer && buffer.buffer === result.files[0].buffer.buffer })) }
    const files = result.files.map((f, i) => {
      let digest
      if (f.buffer) digest = sha256(f.buffer)
      else if (f.path) {
        record.paths.push(f.path)
        digest = sha256(fs.readFileSync(f.path))
        fs.unlinkSync(f.path)
      } else {
        // The handler was called once per file, in order, with what the entry says.
        const s = record.streams[i]
        assert.deepEqual(s.file, { fieldname: f.fieldname, originalname: f.originalname, encoding: f.encoding, mimetype: f.mimetype })
        assert.ok(s.finished)
        digest = s.digest
      }
      return { fieldname: f.fieldname, originalname: f.originalname, mimetype: f.mimetype, encoding: f.encoding, size: f.size, digest }
    })
    if (!res.aborted) res.cork(() => res.end(JSON.stringify({ fields: result.fields, files })))
  }, (err) => {
    record.error = err
    if (!res.aborted) res.cork(() => res.writeStatus(`${err.status || 500} Error`).end(`${err.status || 500} ${err.code}`, true))
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

let nextId = 0
/** Sends `body` to readMultipart with `opts`; resolves with the answer and what the server saw. */
async function send (body, { opts, storage = 'memory', boundary, type, headers = {}, ...rest } = {}) {
  const id = String(++nextId)
  if (opts) options.set(id, opts)
  const h = { 'x-id': id, 'x-storage': storage, 'content-type': type !== undefined ? type : contentType(boundary), ...headers }
  const r = await request(port, { path: '/mp', body, headers: h, timeout: 120000, ...rest })
  // The record is complete once the promise settled (an abort settles after the answer).
  for (let i = 0; i < 200 && seen.get(id) && !seen.get(id).result && !seen.get(id).error; i++) await sleep(10)
  return { ...r, seen: seen.get(id), json: r.status === 200 ? JSON.parse(r.body) : null }
}

const filesLeft = () => fs.readdirSync(dir).filter((n) => n !== 'does-not-exist')

/** The answer a correct reader gives for `parts` (names and contents as sent, in order). */
function expected (parts) {
  const fields = Object.create(null)
  const files = []
  for (const p of parts) {
    if (p.filename !== undefined || p.type === 'application/octet-stream') {
      // A file part without a file name is no file (an empty file input), as for multer.
      if (p.filename) files.push({ fieldname: p.name, originalname: p.filename, mimetype: p.type ?? 'text/plain', encoding: '7bit', size: p.data.length, digest: sha256(p.data) })
    } else if (fields[p.name] === undefined) fields[p.name] = p.value
    else if (typeof fields[p.name] === 'string') fields[p.name] = [fields[p.name], p.value]
    else fields[p.name].push(p.value)
  }
  return { fields: { ...fields }, files }
}

function sameForm (r, parts, what) {
  assert.equal(r.status, 200, `${what}: ${r.body}`)
  assert.deepEqual(r.json, expected(parts), what)
}

const STORAGES = ['memory', 'disk', 'handler']

test('forms from no part to many, in every storage, with and without content-length, cut anywhere', async () => {
  const next = random(7)
  const b = 'XbOuNdArYx'
  const forms = [
    [],
    [{ name: 'a', value: '' }],
    [{ name: 'a', value: 'one' }, { name: 'a', value: 'two' }, { name: 'a', value: 'three' }, { name: 'é', value: 'ünï' }],
    [{ name: 'empty', filename: 'e.bin', data: Buffer.alloc(0) }],
    [{ name: 'f', filename: 'tricky.bin', type: 'application/octet-stream', data: trickyBytes(200 * KIB, next, b) }, { name: 'x', value: `x--${b}\r\n--${b.slice(0, -1)}-\r\n-` }],
    [{ name: 'f', filename: 'big.bin', type: 'image/png', data: bodyOf(3 * MIB + 7, 3) }, { name: 'g', filename: 'small', data: Buffer.from('\r\n--' + b.slice(0, 5) + '\r\n-') }, { name: 'octet', type: 'application/octet-stream', data: bodyOf(1000) }]
  ]
  for (const parts of forms) {
    const body = formBody(parts, b)
    for (const storage of STORAGES) {
      sameForm(await send(body, { storage }), parts, `${storage}, ${parts.length} parts`)
      sameForm(await send(body, { storage, chunked: true, chunkSize: 1 + Math.floor(next() * 70000) }), parts, `${storage} chunked`)
      const cuts = Array.from({ length: 12 }, () => Math.floor(next() * body.length)).sort((x, y) => x - y)
      sameForm(await send(body, { storage, cuts, pause: 1 }), parts, `${storage} cut at ${cuts}`)
    }
  }
  // A body that starts with its first delimiter, one with a preamble and an epilogue.
  const parts = [{ name: 'a', value: 'x' }]
  sameForm(await send(Buffer.concat([Buffer.from('preamble\r\n'), formBody(parts, b), Buffer.from('epilogue')])), parts, 'preamble')
  assert.deepEqual(filesLeft(), [])
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a 64 MiB file, hash-checked, in memory and on disk, with and without content-length', async () => {
  const data = bodyOf(64 * MIB, 11)
  const parts = [{ name: 'before', value: 'v' }, { name: 'big', filename: 'big.bin', data }, { name: 'after', value: 'w' }]
  const body = formBody(parts)
  sameForm(await send(body, { opts: { limit: 65 * MIB } }), parts, 'memory')
  sameForm(await send(body, { storage: 'disk' }), parts, 'disk')
  sameForm(await send(body, { storage: 'disk', chunked: true, chunkSize: 300000 }), parts, 'disk chunked')
  sameForm(await send(body, { storage: 'handler', chunked: true, chunkSize: 1 << 20 }), parts, 'handler chunked')
  assert.deepEqual(filesLeft(), [])
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('memory storage: files are ranges of one Buffer, bounded by a default limit of 64 MiB', async () => {
  const parts = [{ name: 'a', filename: 'a', data: bodyOf(1000) }, { name: 'b', filename: 'b', data: bodyOf(2000) }]
  const r = await send(formBody(parts))
  sameForm(r, parts, 'two files')
  assert.deepEqual(r.seen.result.files.map((f) => f.shared), [true, true])
  const big = formBody([{ name: 'f', filename: 'f', data: Buffer.alloc(64 * MIB) }])
  const declared = await send(big)
  assert.equal(declared.body, '413 ERR_BODY_TOO_LARGE')
  assert.equal(declared.seen.error.received, 0)
  const chunked = await send(big, { chunked: true, chunkSize: 1 << 20 })
  assert.equal(chunked.body, '413 ERR_BODY_TOO_LARGE')
  assert.equal(chunked.seen.error.limit, 64 * MIB)
  // Disk and handler storage have none by default.
  sameForm(await send(formBody([{ name: 'f', filename: 'f', data: Buffer.alloc(65 * MIB) }]), { storage: 'disk' }), [{ name: 'f', filename: 'f', data: Buffer.alloc(65 * MIB) }], 'disk')
  assert.deepEqual(filesLeft(), [])
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('the client going away mid-file: rejected once, files unlinked, Writables destroyed, memory freed', async () => {
  const parts = [{ name: 'first', filename: 'first.bin', data: bodyOf(2 * MIB) }, { name: 'second', filename: 'second.bin', data: bodyOf(8 * MIB, 2) }]
  const body = formBody(parts)
  for (const storage of [...STORAGES, 'slow']) {
    for (const chunked of [false, true]) {
      const r = await send(body, { storage, chunked, chunkSize: 100000, stopAfter: 5 * MIB, pause: 30 })
      assert.ok(r.closed, JSON.stringify(r))
      assert.equal(r.seen.error.code, 'ECONNABORTED', storage)
      assert.ok(r.seen.error instanceof BodyError)
      if (storage === 'handler' || storage === 'slow') {
        assert.ok(r.seen.streams.length >= 1)
        const open = r.seen.streams.filter((s) => !s.finished)
        assert.ok(open.length >= 1 && open.every((s) => s.destroyed), `${storage}: unfinished streams destroyed`)
      }
      assert.deepEqual(filesLeft(), [], `${storage}: no file left`)
    }
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('every limit: at its value the form passes, one past it is refused with multer\'s code', async () => {
  const cases = [
    ['fileSize', 100, (n) => [{ name: 'f', filename: 'f', data: Buffer.alloc(n, 1) }], 'LIMIT_FILE_SIZE'],
    ['fieldSize', 100, (n) => [{ name: 'v', value: 'x'.repeat(n) }], 'LIMIT_FIELD_VALUE'],
    ['fieldNameSize', 10, (n) => [{ name: 'n'.repeat(n), value: 'v' }], 'LIMIT_FIELD_KEY'],
    ['fields', 3, (n) => Array.from({ length: n }, (_, i) => ({ name: `v${i}`, value: 'v' })), 'LIMIT_FIELD_COUNT'],
    ['files', 3, (n) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, filename: 'f', data: Buffer.from('x') })), 'LIMIT_FILE_COUNT'],
    ['parts', 4, (n) => Array.from({ length: n }, (_, i) => i % 2 ? { name: `v${i}`, value: 'v' } : { name: `f${i}`, filename: 'f', data: Buffer.from('x') }), 'LIMIT_PART_COUNT'],
    ['headerPairs', 3, (n) => [{ headers: 'Content-Disposition: form-data; name="h"\r\n' + 'X-A: 1\r\n'.repeat(n - 1), name: 'h', value: 'v' }], 'LIMIT_HEADER_PAIRS'],
    ['headerSize', 200, (n) => { const line = 'Content-Disposition: form-data; name="h"\r\n'; return [{ headers: line + 'X-Pad: ' + 'p'.repeat(n - line.length - 11) + '\r\n', name: 'h', value: 'v' }] }, 'LIMIT_HEADER_SIZE']
  ]
  for (const [name, value, make, code] of cases) {
    for (const storage of STORAGES) {
      const ok = make(value)
      const okBody = formBody(ok)
      sameForm(await send(okBody, { storage, opts: { limits: { [name]: value } } }), ok, `${name} at ${value}`)
      const over = formBody(make(value + 1))
      const r = await send(over, { storage, opts: { limits: { [name]: value } } })
      assert.equal(r.body, `413 ${code}`, `${name} at ${value + 1}, ${storage}`)
      assert.equal(r.seen.error.status, 413)
      assert.equal(r.seen.error.limit, value)
      assert.deepEqual(filesLeft(), [], `${name}: no file left`)
    }
  }
  // The error names the part it happened in.
  const r = await send(formBody([{ name: 'photo', filename: 'p.jpg', data: Buffer.alloc(500) }]), { opts: { limits: { fileSize: 10 } } })
  assert.equal(r.seen.error.field, 'photo')
  // The total: a declared length over `limit` before any byte, a chunked one as it crosses.
  const big = formBody([{ name: 'f', filename: 'f', data: Buffer.alloc(MIB) }])
  for (const storage of STORAGES) {
    assert.equal((await send(big, { storage, opts: { limit: 100000 } })).body, '413 ERR_BODY_TOO_LARGE')
    assert.equal((await send(big, { storage, opts: { limit: 100000 }, chunked: true, chunkSize: 30000 })).body, '413 ERR_BODY_TOO_LARGE')
  }
  assert.deepEqual(filesLeft(), [])
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('bad input gets the right error, no file is left, and the server lives on', async () => {
  const parts = [{ name: 'f', filename: 'f.bin', data: bodyOf(300 * KIB) }, { name: 'a', value: 'v' }]
  const good = formBody(parts)
  const cases = [
    ['not multipart', good, { type: 'application/json' }, '415 ERR_MULTIPART_CONTENT_TYPE'],
    ['no content-type', good, { type: '' }, '415 ERR_MULTIPART_CONTENT_TYPE'],
    ['NUL in a header value (a file name)', formBody([{ name: 'f', filename: 'a\0b', data: Buffer.from('x') }]), {}, '400 ERR_MULTIPART_HEADER'],
    ['a control character in a file name', formBody([{ name: 'f', filename: 'a\x01b', data: Buffer.from('x') }]), {}, '400 ERR_MULTIPART_HEADER'],
    ['no boundary', good, { type: 'multipart/form-data' }, '400 ERR_MULTIPART_BOUNDARY'],
    ['a boundary over 70 characters', formBody(parts, 'b'.repeat(71)), { type: contentType('b'.repeat(71)) }, '400 ERR_MULTIPART_BOUNDARY'],
    ['an encoding nobody decodes', good, { headers: { 'content-encoding': 'compress' } }, '415 ERR_BODY_ENCODING_UNSUPPORTED'],
    ['gzip that is not', good, { headers: { 'content-encoding': 'gzip' } }, '400 ERR_BODY_ENCODING_INVALID'],
    ['no final delimiter', formBody(parts, undefined, { end: false }), {}, '400 ERR_MULTIPART_TRUNCATED'],
    ['cut in a file', good.subarray(0, 1000), {}, '400 ERR_MULTIPART_TRUNCATED'],
    ['the wrong boundary', good, { type: contentType('other') }, '400 ERR_MULTIPART_TRUNCATED'],
    ['a part without Content-Disposition', formBody([{ headers: 'Content-Type: text/plain\r\n', value: 'v' }]), {}, '400 ERR_MULTIPART_HEADER'],
    ['a folded header', formBody([{ headers: 'Content-Disposition: form-data;\r\n name="a"\r\n', value: 'v' }]), {}, '400 ERR_MULTIPART_HEADER'],
    ['headers over 16 KiB', formBody([{ headers: 'Content-Disposition: form-data; name="a"\r\nX: ' + 'x'.repeat(17000) + '\r\n', value: 'v' }]), {}, '413 LIMIT_HEADER_SIZE'],
    ['a field over 1 MiB', formBody([{ name: 'a', value: 'x'.repeat(MIB + 1) }]), {}, '413 LIMIT_FIELD_VALUE']
  ]
  for (const [what, body, extra, answer] of cases) {
    for (const storage of STORAGES) {
      const r = await send(body, { storage, ...extra })
      assert.equal(r.body, answer, `${what} (${storage})`)
      assert.ok(r.seen.error instanceof BodyError, what)
      assert.deepEqual(filesLeft(), [], `${what}: no file left`)
    }
  }
  // A missing dest is made, as multer makes its `dest`.
  sameForm(await send(good, { storage: 'missing' }), parts, 'a dest that did not exist')
  assert.ok(fs.statSync(path.join(dir, 'does-not-exist')).isDirectory())
  for (const f of fs.readdirSync(path.join(dir, 'does-not-exist'))) fs.unlinkSync(path.join(dir, 'does-not-exist', f))
  // The caller's Writable failing fails the request; the other streams are destroyed.
  const failing = await send(formBody([{ name: 'f', filename: 'f', data: bodyOf(MIB) }]), { storage: 'failing' })
  assert.equal(failing.body, '500 undefined')
  assert.equal(failing.seen.error.message, 'disk full')
  sameForm(await send(good), parts, 'and the server still answers')
  assert.deepEqual(filesLeft(), [])
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('100 000 tiny parts: refused at a parts limit, read whole without one', async () => {
  const form = (n) => formBody(Array.from({ length: n }, (_, i) => i % 2 ? { name: 'f', value: String(i) } : { name: 't', filename: `${i}`, data: Buffer.from([i & 0xff]) }))
  const body = form(100000)
  for (const storage of STORAGES) {
    const refused = await send(body, { storage, opts: { limits: { parts: 1000 } } })
    assert.equal(refused.body, '413 LIMIT_PART_COUNT')
    assert.deepEqual(filesLeft(), [], `${storage}: no file left`)
  }
  // On disk, 10 000: each file is a few fs calls (50 000 files took 13 s here).
  for (const [storage, n] of [['memory', 100000], ['handler', 100000], ['disk', 10000]]) {
    const r = await send(n === 100000 ? body : form(n), { storage, chunked: storage === 'handler', chunkSize: 65536 })
    assert.equal(r.status, 200, r.body)
    assert.equal(r.json.files.length, n / 2)
    assert.equal(r.json.fields.f.length, n / 2)
    assert.equal(r.json.files[4999].digest, sha256(Buffer.from([9998 & 0xff])))
  }
  assert.deepEqual(filesLeft(), [])
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('file names are data: ../ and 10 000 characters never reach the file system', async () => {
  const names = ['../../etc/passwd', '..\\..\\boot.ini', 'x'.repeat(10000), '..', 'dir/.', 'quote%22and%0Anewline']
  for (const storage of ['disk', 'memory']) {
    for (const name of names) {
      const r = await send(formBody([{ name: 'f', filename: name, data: Buffer.from('x') }]), { storage })
      assert.equal(r.status, 200, `${JSON.stringify(name.slice(0, 40))}: ${r.body}`)
      const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1)
      if (base === '.' || base === '..') {
        // Only a path, no name: no file, as for multer.
        assert.deepEqual(r.seen.result.files, [], name)
        continue
      }
      assert.equal(r.seen.result.files[0].originalname, base.replace('%22', '"').replace('%0A', '\n'))
      if (storage === 'disk') assert.match(path.basename(r.seen.paths[0]), /^[0-9a-f]{32}$/)
    }
    // preservePath keeps the whole name.
    const kept = await send(formBody([{ name: 'f', filename: 'a/b\\c', data: Buffer.from('x') }]), { storage, opts: { preservePath: true } })
    assert.equal(kept.seen.result.files[0].originalname, 'a/b\\c')
  }
  assert.deepEqual(filesLeft(), [])
})

test('names: latin1 by default as busboy, utf8 when asked, filename* decoded', async () => {
  const utf8 = (s) => Buffer.from(s, 'utf8').toString('latin1')
  const body = formBody([{ name: utf8('名前'), value: 'é' }, { name: utf8('ファイル'), filename: utf8('résumé.pdf'), data: Buffer.from('x') }, { name: 'star', filenameStar: "UTF-8''%E2%82%AC%20rates.txt", filename: 'fallback.txt', data: Buffer.from('y') }])
  const latin1 = await send(body)
  assert.deepEqual(Object.keys(latin1.seen.result.fields), [utf8('名前')])
  assert.equal(latin1.seen.result.fields[utf8('名前')], 'é')
  assert.equal(latin1.seen.result.files[0].originalname, utf8('résumé.pdf'))
  const decoded = await send(body, { opts: { defParamCharset: 'utf8' } })
  assert.deepEqual(Object.keys(decoded.seen.result.fields), ['名前'])
  assert.equal(decoded.seen.result.files[0].fieldname, 'ファイル')
  assert.equal(decoded.seen.result.files[0].originalname, 'résumé.pdf')
  assert.equal(decoded.seen.result.files[1].originalname, '€ rates.txt')
  assert.equal(latin1.seen.result.files[1].originalname, '€ rates.txt')
})

test('a slow Writable pauses the client: bytes in flight stay bounded, and the file is whole', async () => {
  const data = bodyOf(16 * MIB, 5)
  const parts = [{ name: 'f', filename: 'f', data }]
  for (const chunked of [false, true]) {
    const r = await send(formBody(parts), { storage: 'slow', chunked, chunkSize: 65536 })
    sameForm(r, parts, 'slow')
    // Fewer, larger pauses where uWS drains the socket's queue after pause().
    assert.ok(r.seen.paused >= (drainsAfterPause ? 2 : 10), `paused ${r.seen.paused}`)
    assert.ok(r.seen.resumed >= r.seen.paused, `resumed ${r.seen.resumed}`)
    // The Writable's 64 KiB mark and the file stream's, plus what uWS hands over after
    // pause() on this build.
    assert.ok(r.seen.maxInFlight <= 64 * KIB + 512 * KIB + readAfterPause, `in flight ${r.seen.maxInFlight}`)
  }
  // Disk: paused whenever more than highWaterMark waits for the disk.
  const r = await send(formBody(parts), { storage: 'disk', opts: { highWaterMark: 0 } })
  sameForm(r, parts, 'disk')
  assert.ok(r.seen.paused >= 1, `paused ${r.seen.paused}`)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('timeout: 408 for a form still arriving, its files removed', async () => {
  const body = formBody([{ name: 'f', filename: 'f', data: bodyOf(200 * KIB) }])
  for (const storage of STORAGES) {
    const cuts = Array.from({ length: 20 }, (_, i) => i * 10000)
    const r = await send(body, { storage, cuts, pause: 30, opts: { timeout: 150 } })
    assert.equal(r.body, '408 ERR_BODY_TIMEOUT', storage)
    assert.deepEqual(filesLeft(), [], storage)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('onAborted is called, and the program\'s mistakes are TypeErrors thrown at the call', async () => {
  let called = 0
  const res = { onData () {}, onAborted (fn) { this.abort = fn }, pause () {}, resume () {} }
  const p = readMultipart(res, { 'content-type': contentType() }, { onAborted: () => called++ })
  res.abort()
  await assert.rejects(p, { code: 'ECONNABORTED' })
  assert.equal(called, 1)
  assert.equal(res.aborted, true)
  const headers = { 'content-type': contentType() }
  // A content-length uWS would not pass (a headers object may hold anything).
  await assert.rejects(readMultipart(res, { ...headers, 'content-length': '1e3' }), { code: 'ERR_BODY_INVALID_LENGTH', status: 400 })
  assert.throws(() => readMultipart({}, headers), TypeError)
  assert.throws(() => readMultipart(res, null), TypeError)
  assert.throws(() => readMultipart(res, headers, { limits: { fileSizes: 1 } }), /unknown limit/)
  assert.throws(() => readMultipart(res, headers, { limits: { fileSize: -1 } }), TypeError)
  assert.throws(() => readMultipart(res, headers, { storage: { dest: '' } }), TypeError)
  assert.throws(() => readMultipart(res, headers, { storage: 'disk' }), TypeError)
  assert.throws(() => readMultipart(res, headers, { defParamCharset: 'nope' }), /unknown charset "nope"/)
  assert.throws(() => readMultipart(res, headers, { limt: 1 }), /unknown readMultipart option "limt" \(did you mean "limit"\?\)/)
  assert.throws(() => readMultipart(res, headers, { limits: { fileSize: 1.5 } }), /Expected limits.fileSize to be a non-negative integer or Infinity/)
  assert.throws(() => readMultipart(res, headers, { preservePath: 'yes' }), TypeError)
  assert.throws(() => readMultipart(res, headers, { limit: ' 10kb ' }), TypeError)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('the storage function and onAborted run in the caller\'s async context', async () => {
  const als = new AsyncLocalStorage()
  const stores = []
  const fake = () => {
    const res = { onData (f) { res.data = f }, onAborted (f) { res.abort = f }, pause () {}, resume () {} }
    return res
  }
  const body = formBody([{ name: 'f', filename: 'f', data: Buffer.from('x') }])
  const chunk = body.buffer.slice(body.byteOffset, body.byteOffset + body.length)
  const res = fake()
  const storage = () => {
    stores.push(als.getStore())
    return new Writable({ write (c, e, cb) { cb() } })
  }
  const read = als.run('caller', () => readMultipart(res, { 'content-type': contentType() }, { storage }))
  // uWS calls onData from no request's context: here, from outside als.run.
  res.data(chunk, true)
  assert.equal((await read).files.length, 1)
  const gone = fake()
  const aborted = als.run('caller', () => readMultipart(gone, { 'content-type': contentType() }, { onAborted: () => stores.push(als.getStore()) }))
  gone.abort()
  await assert.rejects(aborted, { code: 'ECONNABORTED' })
  assert.deepEqual(stores, ['caller', 'caller'])
})
