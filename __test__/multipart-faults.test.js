'use strict'
// Every way a multipart request can fail on the server's side, through both APIs
// (readMultipart on bare uWS; multipart() under ultimate-express and Express) and every
// disk storage: a full disk (a small tmpfs), a read-only one, a missing or unusable
// destination, the application's storage callbacks throwing or passing bad values at
// once or later, sinks that fail, close early or never drain, names that decode to a
// NUL. After each: one error for that request with its status and code (no server path
// in the answer), no file left, fds and native memory back to where they were, and the
// next request succeeds.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { execFileSync } = require('node:child_process')
const { Writable } = require('node:stream')
const uWS = require('uWebSockets.js')
const ultimateExpress = require('ultimate-express')
const express = require('express')
const multer = require('multer')
const uwsBody = require('..')
const { readMultipart, multipart } = uwsBody
const { request, bodyOf, sha256, sleep } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { formBody, contentType } = require('./helpers/multipart')
const { ENCODERS, header, ready } = require('./helpers/encodings')
const { readAfterPause } = require('./helpers/uws-build')

const KIB = 1024
const MIB = 1024 * KIB
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-faults-'))
const configs = new Map()
let nextId = 0

/** A storage (or options) by name, for a request: made fresh per request where it holds state. */
function register (config) {
  const id = String(++nextId)
  configs.set(id, config)
  return id
}

/** What a failed request answers: its status and code, and that its message names no path. */
function answerOf (err) {
  const status = err.status || err.statusCode || 500
  // A client sees an error's message only when the error says it may (expose).
  const message = err.expose ? err.message : ''
  return { status, body: JSON.stringify({ code: err.code, message }) }
}

function readRoute (res, req) {
  const { options } = configs.get(req.getHeader('x-id'))
  readMultipart(res, req, options()).then((result) => {
    const files = result.files.map((f) => ({ fieldname: f.fieldname, originalname: f.originalname, size: f.size, sha: f.buffer ? sha256(f.buffer) : f.path ? sha256(fs.readFileSync(f.path)) : undefined }))
    for (const f of result.files) if (f.path) fs.unlinkSync(f.path)
    if (!res.aborted) res.cork(() => res.end(JSON.stringify({ fields: result.fields, files })))
  }, (err) => {
    if (res.aborted) return
    const { status, body } = answerOf(err)
    res.cork(() => res.writeStatus(`${status} Error`).end(body))
  })
}

function mountMulter (app) {
  const made = new Map()
  app.post('/:id', (req, res, next) => {
    const id = req.params.id
    if (!made.has(id)) made.set(id, multipart(configs.get(id).options()).any())
    made.get(id)(req, res, (err) => {
      if (err) return next(err)
      const files = req.files.map((f) => ({ fieldname: f.fieldname, originalname: f.originalname, size: f.size, sha: f.buffer ? sha256(f.buffer) : f.path ? sha256(fs.readFileSync(f.path)) : undefined }))
      for (const f of req.files) if (f.path) fs.unlinkSync(f.path)
      res.json({ fields: { ...req.body }, files })
    })
  })
  app.use((err, req, res, next) => {
    const { status, body } = answerOf(err)
    res.status(status).type('json').send(body)
  })
}

let uwsPort, ultimatePort, expressPort, listenToken, ultimate, expressServer
test.before(async () => {
  await ready
  const app = uWS.App().post('/read', readRoute)
  await new Promise((resolve) => app.listen('127.0.0.1', 0, (t) => { listenToken = t; uwsPort = uWS.us_socket_local_port(t); resolve() }))
  ultimate = ultimateExpress()
  ultimate.set('env', 'test')
  mountMulter(ultimate)
  await new Promise((resolve) => ultimate.listen(0, '127.0.0.1', resolve))
  ultimatePort = ultimate.port
  const ex = express()
  ex.set('env', 'test')
  mountMulter(ex)
  expressServer = await new Promise((resolve) => { const s = ex.listen(0, '127.0.0.1', () => resolve(s)) })
  expressPort = expressServer.address().port
})
test.after(() => {
  uWS.us_listen_socket_close(listenToken)
  ultimate.close()
  expressServer.close()
  fs.rmSync(root, { recursive: true, force: true })
})

/** The three ways in: [label, send(id, body, extra)]. */
const APIS = [
  ['readMultipart', (id, body, extra = {}) => post(uwsPort, '/read', id, body, extra)],
  ['multipart() under ultimate-express', (id, body, extra = {}) => post(ultimatePort, `/${id}`, id, body, extra)],
  ['multipart() under Express', (id, body, extra = {}) => post(expressPort, `/${id}`, id, body, extra)]
]

async function post (port, p, id, body, { headers = {}, ...rest } = {}) {
  const r = await request(port, { path: p, body, headers: { 'x-id': id, 'content-type': contentType(), ...headers }, timeout: 30000, ...rest })
  let json = null
  try { json = JSON.parse(r.body) } catch {}
  return { ...r, json }
}

/** Storages that write into `dir`, by API: [label, () => options]. */
function diskStorages (api, dir, extra = {}) {
  if (api === 'readMultipart') return [['{ dest }', () => ({ storage: { dest: dir }, ...extra })]]
  const later = (value) => (req, file, cb) => setImmediate(cb, null, value)
  return [
    ['dest', () => ({ dest: dir, ...extra })],
    ['diskStorage', () => ({ storage: multipart.diskStorage({ destination: dir }), ...extra })],
    ['diskStorage, callbacks answering later', () => ({ storage: multipart.diskStorage({ destination: later(dir), filename: (req, file, cb) => setTimeout(cb, 1, null, `n-${Math.random().toString(36).slice(2)}`) }), ...extra })],
    ["multer's own DiskStorage", () => ({ storage: multer.diskStorage({ destination: dir }), ...extra })]
  ]
}

const openFds = () => fs.readdirSync('/proc/self/fd').length

/** After a failure: the request's answer, nothing left, the next request whole. */
async function assertClean (what, dir, send, id) {
  assert.deepEqual(fs.readdirSync(dir), [], `${what}: no file left`)
  const small = [{ name: 'f', filename: 'ok.txt', data: Buffer.from('fine') }, { name: 'a', value: '1' }]
  const next = await send(id, formBody(small))
  assert.equal(next.status, 200, `${what}: the next request: ${next.body}`)
}

function mountTmpfs (t, dir, options) {
  fs.mkdirSync(dir, { recursive: true })
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' })
    return true
  } catch (err) {
    const why = `cannot mount a tmpfs (${String(err.stderr || err.message).trim()}): needs root`
    if (process.env.CI) throw new Error(`CI runs as root, so this must run: ${why}`)
    t.skip(why)
    return false
  }
}

const umount = (dir) => { try { execFileSync('umount', [dir], { stdio: 'pipe' }) } catch {} }

test('a full disk: 500 ENOSPC, every byte written for the request removed, the next upload fits', async (t) => {
  const dir = path.join(root, 'full')
  if (!mountTmpfs(t, dir, 'size=2m')) return
  try {
    const fds = openFds()
    for (const [api, send] of APIS) {
      for (const [storage, options] of diskStorages(api, dir)) {
        const id = register({ options })
        const what = `${api}, ${storage}`
        // One file larger than the disk; then two that fit one at a time but not together.
        for (const parts of [[{ name: 'f', filename: 'big', data: bodyOf(3 * MIB) }],
          [{ name: 'f', filename: 'one', data: bodyOf(1536 * KIB, 1) }, { name: 'g', filename: 'two', data: bodyOf(1536 * KIB, 2) }]]) {
          const r = await send(id, formBody(parts))
          assert.equal(r.status, 500, `${what}: ${r.body}`)
          assert.equal(r.json.code, 'ENOSPC', what)
          assert.ok(!r.body.includes(dir), `${what}: the answer names no server path`)
          await assertClean(what, dir, send, id)
        }
      }
    }
    await sleep(50)
    assert.ok(openFds() <= fds + 2, `fds ${openFds()} against ${fds} before`)
  } finally {
    umount(dir)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a read-only disk and an unusable destination: 500 with the error\'s code, nothing left, the server up', async (t) => {
  const dir = path.join(root, 'ro')
  if (!mountTmpfs(t, dir, 'size=1m,ro')) return
  const writable = path.join(root, 'rw')
  fs.mkdirSync(writable, { recursive: true })
  try {
    const form = formBody([{ name: 'f', filename: 'x.bin', data: bodyOf(100 * KIB) }])
    for (const [api, send] of APIS) {
      for (const [storage, options] of diskStorages(api, dir)) {
        const r = await send(register({ options }), form)
        assert.deepEqual([r.status, r.json && r.json.code], [500, 'EROFS'], `${api}, ${storage}: ${r.body}`)
      }
      if (api === 'readMultipart') continue
      // The application's destination and filename callbacks, wrong in every way.
      const cases = [
        ['a destination that does not exist', { destination: (req, file, cb) => cb(null, path.join(root, 'nowhere')) }, 'ENOENT'],
        ['a destination callback passing an error later', { destination: (req, file, cb) => setImmediate(cb, Object.assign(new Error('no'), { code: 'E_APP' })) }, 'E_APP'],
        ['a destination callback throwing', { destination: () => { throw Object.assign(new Error('bug'), { code: 'E_BUG' }) } }, 'E_BUG'],
        ['a destination that is not a string', { destination: (req, file, cb) => cb(null, 42) }, undefined],
        ['a file name with a NUL, given later', { destination: writable, filename: (req, file, cb) => setImmediate(cb, null, 'a\0b') }, 'ERR_INVALID_ARG_VALUE'],
        ['a file name with a NUL, given at once', { destination: writable, filename: (req, file, cb) => cb(null, 'a\0b') }, 'ERR_INVALID_ARG_VALUE'],
        ['a filename callback throwing later', { destination: writable, filename: (req, file, cb) => setImmediate(() => { try { cb(null, 'a\0b') } catch (err) { throw new Error('escaped: ' + err.message) } }) }, 'ERR_INVALID_ARG_VALUE']
      ]
      for (const [what, storageOptions, code] of cases) {
        const id = register({ options: () => ({ storage: multipart.diskStorage(storageOptions) }) })
        const r = await send(id, form)
        assert.equal(r.status, 500, `${api}, ${what}: ${r.body}`)
        assert.equal(r.json.code, code, `${api}, ${what}`)
        assert.deepEqual(fs.readdirSync(writable), [], `${api}, ${what}: nothing left`)
      }
    }
  } finally {
    umount(dir)
  }
  // The server is still up on every API.
  for (const [api, send] of APIS) await assertClean(api, writable, send, register({ options: () => api === 'readMultipart' ? { storage: { dest: writable } } : { dest: writable } }))
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a name that decodes to a NUL or another control character is a 400, whatever the storage', async () => {
  const dir = path.join(root, 'names')
  fs.mkdirSync(dir, { recursive: true })
  const raw = (disposition) => Buffer.from(`--${'uwsbodyboundary'}\r\nContent-Disposition: form-data; ${disposition}\r\n\r\nx\r\n--uwsbodyboundary--`)
  const names = ["name=\"f\"; filename*=UTF-8''a%00b", "name=\"f\"; filename*=UTF-8''a%0Ab", "name=\"f\"; filename*=UTF-8''%1B%5B31m", "name=\"f\"; filename=\"x\"; filename*=UTF-8''..%00"]
  for (const [api, send] of APIS) {
    for (const [storage, options] of [...diskStorages(api, dir), ['memory', () => ({})]]) {
      const id = register({ options })
      for (const name of names) {
        const r = await send(id, raw(name), { headers: { 'content-type': 'multipart/form-data; boundary=uwsbodyboundary' } })
        assert.equal(r.status, 400, `${api}, ${storage}, ${name}: ${r.body}`)
        assert.equal(r.json.code, 'ERR_MULTIPART_HEADER', `${api}, ${storage}, ${name}`)
      }
      await assertClean(`${api}, ${storage}`, dir, send, id)
    }
  }
})

/** A Writable for readMultipart's storage function that fails in `how` after 100 KiB. */
function faultySink (how, record) {
  return () => {
    let bytes = 0
    const w = new Writable({
      highWaterMark: 16 * KIB,
      write (chunk, encoding, callback) {
        bytes += chunk.length
        if (bytes <= 100 * KIB) return callback()
        if (how === 'error') return callback(new Error('sink failed'))
        if (how === 'never') return // never calls back: the client stays paused
        if (how === 'destroy') return setImmediate(() => w.destroy())
        if (how === 'destroy-error') return setImmediate(() => w.destroy(new Error('sink destroyed')))
      }
    })
    record.push(w)
    return w
  }
}

test('readMultipart: a sink that fails, closes early or never drains fails the request at once (or at its timeout), and lets go of the client', async () => {
  const form = formBody([{ name: 'f', filename: 'x.bin', data: bodyOf(4 * MIB) }, { name: 'a', value: '1' }])
  const cases = [
    ['error', {}, 500, undefined],
    ['destroy-error', {}, 500, undefined],
    ['destroy', {}, 500, 'ERR_STREAM_PREMATURE_CLOSE'],
    ['never', { timeout: 300 }, 408, 'ERR_BODY_TIMEOUT']
  ]
  const fds = openFds()
  for (const chunked of [false, true]) {
    for (const [how, extra, status, code] of cases) {
      const sinks = []
      const id = register({ options: () => ({ storage: faultySink(how, sinks), ...extra }) })
      const started = Date.now()
      const r = await post(uwsPort, '/read', id, form, { chunked })
      assert.equal(r.status, status, `${how}: ${r.body}`)
      assert.equal(r.json.code, code, how)
      assert.ok(Date.now() - started < 5000, `${how}: answered in ${Date.now() - started} ms`)
      assert.ok(sinks.every((w) => w.destroyed), `${how}: every sink destroyed`)
    }
  }
  await sleep(50)
  assert.ok(openFds() <= fds + 2, `fds ${openFds()} against ${fds} before: sockets released`)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('multipart(): a storage engine that throws, fails later, or never calls back (timeout) is one error for the request', async () => {
  const form = formBody([{ name: 'f', filename: 'x.bin', data: bodyOf(2 * MIB) }, { name: 'g', filename: 'y.bin', data: bodyOf(10 * KIB) }])
  const engines = [
    ['throws in _handleFile', { _handleFile () { throw Object.assign(new Error('bug'), { code: 'E_BUG' }) }, _removeFile (req, file, cb) { cb(null) } }, 500, 'E_BUG', {}],
    ['calls back with an error later', { _handleFile (req, file, cb) { file.stream.resume(); setTimeout(cb, 5, Object.assign(new Error('later'), { code: 'E_LATER' })) }, _removeFile (req, file, cb) { cb(null) } }, 500, 'E_LATER', {}],
    ['destroys the stream it was given', { _handleFile (req, file, cb) { file.stream.on('error', cb); file.stream.on('close', () => cb(new Error('closed'))); file.stream.destroy() }, _removeFile (req, file, cb) { cb(null) } }, 500, undefined, {}],
    // Told through its destroyed stream, it still never calls back: the error goes out
    // once the engine's grace (5 s) has run out.
    ['never calls back', { _handleFile () {}, _removeFile (req, file, cb) { cb(null) } }, 408, 'ERR_BODY_TIMEOUT', { timeout: 300 }]
  ]
  for (const [api, send] of APIS.slice(1)) {
    for (const [what, storage, status, code, extra] of engines) {
      const started = Date.now()
      const r = await send(register({ options: () => ({ storage, ...extra }) }), form)
      assert.equal(r.status, status, `${api}, ${what}: ${r.body}`)
      assert.equal(r.json.code, code, `${api}, ${what}`)
      assert.ok(Date.now() - started < 8000, `${api}, ${what}: answered in ${Date.now() - started} ms`)
    }
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('compressed forms are decoded natively in both APIs, under the limits, bomb-safe', async () => {
  const dir = path.join(root, 'gz')
  fs.mkdirSync(dir, { recursive: true })
  const data = bodyOf(3 * MIB, 7).map((b) => b & 0x0f)
  const parts = [{ name: 'a', value: 'v' }, { name: 'f', filename: 'f.bin', data }]
  const form = formBody(parts)
  for (const [api, send] of APIS) {
    for (const [storage, options] of [['memory', () => ({})], ...diskStorages(api, dir).slice(0, 1)]) {
      const id = register({ options })
      for (const [name, encode] of Object.entries(ENCODERS)) {
        const body = encode(form)
        for (const chunked of [false, true]) {
          const r = await send(id, body, { headers: { 'content-encoding': header(name) }, chunked, chunkSize: 7000 })
          assert.equal(r.status, 200, `${api}, ${storage}, ${name}: ${r.body}`)
          assert.deepEqual(r.json.fields, { a: 'v' })
          assert.deepEqual(r.json.files.map((f) => [f.originalname, f.size, f.sha]), [['f.bin', data.length, sha256(data)]], `${api}, ${storage}, ${name}`)
        }
      }
      // A 64 MiB form in 70 KiB of gzip stops at the limit; a corrupt stream is a 400.
      const bomb = zlib.gzipSync(formBody([{ name: 'f', filename: 'z', data: Buffer.alloc(64 * MIB) }]), { level: 9 })
      const limited = register({ options: () => ({ ...options(), limit: MIB }) })
      const r = await send(limited, bomb, { headers: { 'content-encoding': 'gzip' } })
      assert.deepEqual([r.status, r.json.code], [413, 'ERR_BODY_TOO_LARGE'], `${api}, ${storage}: the bomb`)
      const corrupt = zlib.gzipSync(form)
      corrupt[corrupt.length - 6] ^= 0xff
      const c = await send(id, corrupt, { headers: { 'content-encoding': 'gzip' } })
      assert.deepEqual([c.status, c.json.code], [400, 'ERR_BODY_ENCODING_INVALID'], `${api}, ${storage}: corrupt`)
      assert.deepEqual(fs.readdirSync(dir), [])
    }
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('memory storage: once the form is complete and answered, a trickled epilogue holds none of it', async () => {
  const file = bodyOf(20 * MIB, 3)
  const form = formBody([{ name: 'f', filename: 'big', data: file }])
  for (const [api, port, p] of [['readMultipart', uwsPort, '/read'], ['multipart() under ultimate-express', ultimatePort, '/']]) {
    const id = register({ options: () => ({ limit: 64 * MIB }) })
    const net = require('node:net')
    const socket = net.connect(port, '127.0.0.1')
    const answered = new Promise((resolve) => {
      let got = ''
      socket.on('data', (d) => { got += d; if (got.includes('\r\n\r\n')) resolve(got) })
    })
    const epilogue = 'x'.repeat(4000)
    const route = p === '/read' ? '/read' : `/${id}`
    socket.write(`POST ${route} HTTP/1.1\r\nHost: x\r\nx-id: ${id}\r\ncontent-type: ${contentType()}\r\ncontent-length: ${form.length + epilogue.length}\r\n\r\n`)
    socket.write(form)
    const head = await answered
    assert.match(head, /^HTTP\/1.1 200/, api)
    // The client is still sending; the app has answered and dropped the files.
    socket.write(epilogue.slice(0, 10))
    const held = await bytesInUseAfterGc()
    assert.ok(held < MIB, `${api}: ${held} bytes held while the epilogue trickles`)
    socket.end(epilogue.slice(10))
    socket.destroy()
  }
  await sleep(50)
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('out of descriptors (EMFILE, under prlimit): 500 EMFILE, nothing left, and the next upload works', async (t) => {
  const { spawn } = require('node:child_process')
  const net = require('node:net')
  const dir = path.join(root, 'emfile')
  fs.mkdirSync(dir, { recursive: true })
  const child = spawn(process.execPath, [path.join(__dirname, 'helpers', 'upload-server.js'), dir], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const ports = await new Promise((resolve, reject) => {
      child.stdout.once('data', (d) => resolve(JSON.parse(d)))
      child.once('exit', (code) => reject(new Error(`the server exited (${code})`)))
    })
    const fdsOf = () => fs.readdirSync(`/proc/${child.pid}/fd`).map(Number)
    const limit = (soft) => execFileSync('prlimit', ['--pid', String(child.pid), `--nofile=${soft}:`], { stdio: 'pipe' })
    const usual = execFileSync('prlimit', ['--pid', String(child.pid), '--nofile', '--output=SOFT', '--noheadings'], { encoding: 'utf8' }).trim()
    const form = formBody([{ name: 'f', filename: 'a.bin', data: bodyOf(200 * KIB) }])
    for (const [api, port, p] of [['readMultipart', ports.uws, '/read'], ['multipart() under ultimate-express', ports.ultimate, '/multer']]) {
      // A kept-alive connection the server has accepted (its descriptor exists), then no
      // descriptor left: the lowest free number is the limit.
      const socket = net.connect(port, '127.0.0.1')
      await new Promise((resolve) => socket.once('connect', resolve))
      const send = (body) => new Promise((resolve) => {
        let got = Buffer.alloc(0)
        const onData = (d) => {
          got = Buffer.concat([got, d])
          const head = got.indexOf('\r\n\r\n')
          const length = /content-length: (\d+)/i.exec(got.subarray(0, head).toString())
          if (head >= 0 && length && got.length >= head + 4 + Number(length[1])) {
            socket.off('data', onData)
            resolve({ status: Number(got.toString().split(' ')[1]), body: got.subarray(head + 4).toString() })
          }
        }
        socket.on('data', onData)
        socket.write(`POST ${p} HTTP/1.1\r\nHost: x\r\ncontent-type: ${contentType()}\r\ncontent-length: ${body.length}\r\n\r\n`)
        socket.write(body)
      })
      assert.equal((await send(form)).status, 200, `${api}: before`)
      for (const f of fs.readdirSync(dir)) fs.unlinkSync(path.join(dir, f))
      const open = new Set(fdsOf())
      let free = 0
      while (open.has(free)) free++
      limit(free)
      let r
      try {
        r = await send(form)
      } finally {
        limit(usual)
      }
      assert.equal(r.status, 500, `${api}: ${r.body}`)
      assert.equal(JSON.parse(r.body).code, 'EMFILE', api)
      assert.deepEqual(fs.readdirSync(dir), [], `${api}: nothing left`)
      assert.equal((await send(form)).status, 200, `${api}: the next upload`)
      for (const f of fs.readdirSync(dir)) fs.unlinkSync(path.join(dir, f))
      socket.destroy()
    }
  } finally {
    child.kill()
  }
})

test('many small files into a slow engine: the client waits with them, memory stays bounded', async () => {
  // 2000 files of 100 KiB, each stored in 20 ms: only 8 are with the engine at once, and
  // while the others wait their turn the client is paused.
  let most = 0
  let storing = 0
  const slow = {
    _handleFile (req, file, cb) {
      most = Math.max(most, ++storing)
      const chunks = []
      file.stream.on('data', (d) => chunks.push(d.length))
      file.stream.on('end', () => setTimeout(() => { storing--; cb(null, { size: chunks.reduce((a, b) => a + b, 0) }) }, 20))
    },
    _removeFile (req, file, cb) { cb(null) }
  }
  const parts = Array.from({ length: 2000 }, (_, i) => ({ name: 'f', filename: `${i}`, data: bodyOf(100 * KIB, i) }))
  const body = formBody(parts)
  const id = register({ options: () => ({ storage: slow }) })
  const rss = process.memoryUsage().rss
  let peak = rss
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 5)
  const r = await post(ultimatePort, `/${id}`, id, body, { timeout: 120000 })
  clearInterval(sampler)
  assert.equal(r.status, 200, r.body)
  assert.equal(r.json.files.length, 2000)
  assert.ok(most <= 8, `${most} files with the engine at once`)
  // The form is 200 MiB; what the server holds is a few files' worth plus uWS's queue.
  assert.ok(peak - rss < 120 * MIB, `RSS grew by ${((peak - rss) / MIB).toFixed(0)} MiB`)
})

test('an engine that pipe()s file.stream on (as multer-s3 does) never completes a cut file: what it pipes into closes early, never ends, and the request ends at once: a limit mid-file, a client gone', async () => {
  const { PassThrough, finished } = require('node:stream')
  const net = require('node:net')
  const completed = []
  const failed = []
  let removed = 0
  // Pipes the stream into its own PassThrough (pipe() passes no destruction on) and
  // stores what comes out when that ends, failing if it closes first, as lib-storage does.
  // It listens for no 'error' on the PassThrough: destroying that with one would throw.
  const piping = {
    _handleFile (req, file, cb) {
      const out = new PassThrough()
      let size = 0
      out.on('data', (d) => { size += d.length })
      finished(out, { error: false }, (err) => {
        if (err) {
          failed.push(err.code)
          return cb(err)
        }
        completed.push([file.originalname, size])
        cb(null, { key: file.originalname })
      })
      file.stream.pipe(out)
    },
    _removeFile (req, file, cb) { removed++; cb(null) }
  }
  const form = formBody([{ name: 'f', filename: 'big', data: bodyOf(4 * MIB) }])
  for (const [api, send] of APIS.slice(1)) {
    failed.length = 0
    const started = Date.now()
    const r = await send(register({ options: () => ({ storage: piping, limits: { fileSize: MIB } }) }), form)
    assert.deepEqual([r.status, r.json.code], [413, 'LIMIT_FILE_SIZE'], `${api}: ${r.body}`)
    assert.deepEqual(failed, ['ERR_STREAM_PREMATURE_CLOSE'], `${api}: the engine's own stream closed early`)
    assert.ok(Date.now() - started < 3000, `${api}: answered after ${Date.now() - started} ms (the engine called back at once)`)
  }
  // A client that goes away mid-file.
  failed.length = 0
  const id = register({ options: () => ({ storage: piping }) })
  const socket = net.connect(ultimatePort, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(`POST /${id} HTTP/1.1\r\nHost: x\r\ncontent-type: ${contentType()}\r\ncontent-length: ${form.length}\r\n\r\n`)
  socket.write(form.subarray(0, 2 * MIB))
  await sleep(100)
  socket.destroy()
  for (let i = 0; i < 100 && failed.length === 0; i++) await sleep(20)
  assert.deepEqual(failed, ['ERR_STREAM_PREMATURE_CLOSE'], 'after the abort')
  assert.deepEqual(completed, [], 'no cut file completed')
  assert.equal(removed, 0, 'nothing stored, nothing to remove')
})

test('large files into an engine that stores each long after its stream ended: the client waits, memory stays bounded', async () => {
  // Each file is "stored" 300 ms after its last byte, holding its bytes meanwhile (an
  // object store sending its last parts).
  let held = 0
  let most = 0
  const slow = {
    _handleFile (req, file, cb) {
      const chunks = []
      file.stream.on('data', (d) => { chunks.push(d); held += d.length; most = Math.max(most, held) })
      file.stream.on('end', () => setTimeout(() => { const n = chunks.reduce((a, b) => a + b.length, 0); held -= n; cb(null, { size: n }) }, 300))
    },
    _removeFile (req, file, cb) { cb(null) }
  }
  const parts = Array.from({ length: 12 }, (_, i) => ({ name: 'f', filename: `${i}`, data: bodyOf(10 * MIB, i) }))
  const id = register({ options: () => ({ storage: slow }) })
  const r = await post(ultimatePort, `/${id}`, id, formBody(parts), { timeout: 120000 })
  assert.equal(r.status, 200, r.body)
  assert.equal(r.json.files.length, 12)
  // One file finishing at a time (10 MiB), the next arriving, and what uWS hands over.
  assert.ok(most <= 10 * MIB + 4 * MIB + readAfterPause + 2 * MIB, `the engine held ${(most / MIB).toFixed(1)} MiB at once`)
})
