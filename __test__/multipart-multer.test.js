'use strict'
// multipart() against multer 2: the same request bytes go to ultimate-express with
// uws-body's multipart() and to Express 5 (node:http) with multer, and both must build
// the same req.body, req.file(s) (names, types, sizes, encodings, bytes by hash) or the
// same error (name, code, field, message). SEED=<n> replays a run; MULTER_CASES=<n> sets
// how many generated cases run (150 by default).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const http = require('node:http')
const ultimateExpress = require('ultimate-express')
const express = require('express')
const multer = require('multer')
const uwsBody = require('..')
const { request } = require('./helpers/client')
const { readAfterPause } = require('./helpers/uws-build')
const { random } = require('./helpers/random')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { formBody, generateCase, middlewareOf, normalResult, sha256 } = require('./helpers/multer-form')

const SEED = Number(process.env.SEED) || (Date.now() % 1e9)
const CASES = Number(process.env.MULTER_CASES) || 150

/**
 * An app that runs, for a request to /<id>, the middleware `configs[id]` made by
 * `make(config, id)`, and answers 200 with normalResult (errors included, so the status
 * multer does not set is left out of the comparison; `status` carries it apart).
 */
function mount (app, configs, make, dest) {
  const made = new Map()
  app.use((req, res, next) => {
    const id = req.url.split('/')[1]
    if (!made.has(id)) made.set(id, make(configs.get(id), id))
    made.get(id)(req, res, (err) => {
      const result = normalResult(req, err, dest && path.join(dest, id))
      result.status = err ? err.status : undefined
      res.statusCode = 200
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(result))
    })
  })
  return app
}

async function startBoth (configs, { makeOurs, makeMulter, destOurs, destMulter, oursOnExpress = false } = {}) {
  const makeOursOrDefault = makeOurs || ((c) => middlewareOf(uwsBody.multipart, c))
  let ours, oursPort
  if (oursOnExpress) {
    ours = http.createServer(mount(express(), configs, makeOursOrDefault, destOurs))
    await new Promise((resolve) => ours.listen(0, '127.0.0.1', resolve))
    oursPort = ours.address().port
  } else {
    ours = mount(ultimateExpress(), configs, makeOursOrDefault, destOurs)
    oursPort = await new Promise((resolve) => ours.listen(0, '127.0.0.1', () => resolve(ours.port)))
  }
  const theirs = http.createServer(mount(express(), configs, makeMulter || ((c) => middlewareOf(multer, c)), destMulter))
  await new Promise((resolve) => theirs.listen(0, '127.0.0.1', resolve))
  return {
    oursPort,
    theirsPort: theirs.address().port,
    close () { ours.close(); theirs.close() }
  }
}

async function send (port, id, c) {
  const r = await request(port, {
    path: `/${id}`,
    headers: { 'content-type': c.contentType },
    body: c.body,
    cuts: c.cuts,
    pause: c.pause
  })
  assert.equal(r.status, 200, `case ${id}: ${r.body}`)
  return JSON.parse(r.body)
}

/** multer sets no status; uws-body adds 413 for limits and 400 for the others. */
function expectedStatus (error) {
  if (!error) return undefined
  if (error.name !== 'MulterError') return undefined
  return ['LIMIT_UNEXPECTED_FILE', 'MISSING_FIELD_NAME', 'INVALID_FIELD_NAME'].includes(error.code) ? 400 : 413
}

test(`multipart() answers as multer 2 on ${CASES} generated requests (SEED=${SEED})`, async (t) => {
  const rnd = random(SEED)
  const cases = []
  const configs = new Map()
  for (let i = 0; i < CASES; i++) {
    const c = generateCase(rnd, i)
    cases.push(c)
    configs.set(String(i), c.config)
  }
  const servers = await startBoth(configs)
  const tally = { ok: 0, errors: new Map() }
  try {
    for (const c of cases) {
      const theirs = await send(servers.theirsPort, c.index, c)
      const ours = await send(servers.oursPort, c.index, c)
      const status = ours.status
      delete ours.status
      delete theirs.status
      assert.deepEqual(ours, theirs, `case ${c.index} (SEED=${SEED}): ${JSON.stringify(c.config)}`)
      if (ours.error && ours.error.name === 'MulterError') assert.equal(status, expectedStatus(ours.error), `case ${c.index}: status`)
      if (ours.error) tally.errors.set(ours.error.code, (tally.errors.get(ours.error.code) || 0) + 1)
      else tally.ok++
    }
  } finally {
    servers.close()
  }
  t.diagnostic(`accepted ${tally.ok}; errors ${JSON.stringify(Object.fromEntries(tally.errors))}`)
  // The generator reaches both outcomes, and more than one kind of error.
  assert.ok(tally.ok > CASES / 4, `accepted: ${tally.ok}`)
  assert.ok(tally.errors.size >= 4, `error codes seen: ${[...tally.errors.keys()]}`)
  assert.equal(await bytesInUseAfterGc(), 0)
})

/** Runs `cases` on both servers and requires the same answers; returns them (ours). */
async function compare (servers, cases, check = () => {}) {
  const results = []
  for (const c of cases) {
    const theirs = await send(servers.theirsPort, c.index, c)
    const ours = await send(servers.oursPort, c.index, c)
    delete ours.status
    delete theirs.status
    assert.deepEqual(ours, theirs, `case ${c.index} (SEED=${SEED}): ${JSON.stringify(c.config)}`)
    await check(c, ours)
    results.push(ours)
  }
  return results
}

test(`under plain Express 5 (node:http) too, multipart() answers as multer (SEED=${SEED})`, async () => {
  const rnd = random(SEED + 1)
  const cases = []
  const configs = new Map()
  for (let i = 0; i < 50; i++) {
    const c = generateCase(rnd, i)
    cases.push(c)
    configs.set(String(i), c.config)
  }
  const servers = await startBoth(configs, { oursOnExpress: true })
  try {
    await compare(servers, cases)
  } finally {
    servers.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test(`disk storage: the same files on disk as multer's, and none left after a failure (SEED=${SEED})`, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-multer-'))
  const destOurs = path.join(root, 'ours')
  const destMulter = path.join(root, 'multer')
  const rnd = random(SEED + 2)
  const cases = []
  const configs = new Map()
  for (let i = 0; i < 60; i++) {
    const c = generateCase(rnd, i)
    // Mostly any(): files get stored (and, when a later part fails, removed).
    if (i % 3 !== 0) c.config.strategy = { kind: 'any' }
    cases.push(c)
    configs.set(String(i), c.config)
  }
  // Ours with its own diskStorage, with `dest`, with multer's DiskStorage as a foreign
  // engine (fed through file.stream), and with asynchronous destination and filename
  // callbacks; multer with its own.
  const makeOurs = (config, id) => {
    const dir = path.join(destOurs, id)
    fs.mkdirSync(dir, { recursive: true })
    // Callbacks that answer later: the file's bytes wait (bounded) for its name.
    const later = uwsBody.multipart.diskStorage({
      destination: (req, file, cb) => setImmediate(cb, null, dir),
      filename: (req, file, cb) => setTimeout(cb, 2, null, require('node:crypto').randomBytes(16).toString('hex'))
    })
    const storage = [uwsBody.multipart.diskStorage({ destination: dir }), undefined, multer.diskStorage({ destination: dir }), later][Number(id) % 4]
    if (storage === undefined) return middlewareOf((options) => uwsBody.multipart({ ...options, dest: dir }), config)
    return middlewareOf(uwsBody.multipart, config, storage)
  }
  const makeMulter = (config, id) => middlewareOf(multer, config, multer.diskStorage({ destination: path.join(destMulter, id) }))
  const servers = await startBoth(configs, { makeOurs, makeMulter, destOurs, destMulter })
  let stored = 0
  let failed = 0
  try {
    await compare(servers, cases, (c, result) => {
      const mine = fs.readdirSync(path.join(destOurs, String(c.index)))
      const theirs = fs.readdirSync(path.join(destMulter, String(c.index)))
      assert.equal(mine.length, theirs.length, `case ${c.index}: files on disk ${JSON.stringify(c.config)} ${JSON.stringify(result).slice(0, 300)}`)
      if (result.error) {
        assert.deepEqual(mine, [], `case ${c.index}: a failed upload leaves nothing`)
        failed++
      } else {
        stored += mine.length
      }
    })
  } finally {
    servers.close()
    fs.rmSync(root, { recursive: true, force: true })
  }
  assert.ok(stored > 10 && failed > 5, `stored ${stored}, failed ${failed}`)
})

/** An ultimate-express app with `routes(app)`, answering errors with status and code. */
async function ultimateApp (routes) {
  const app = ultimateExpress()
  routes(app)
  app.use((err, req, res, next) => {
    res.status(err.status || 500).json({ name: err.name, code: err.code, status: err.status, message: err.message })
  })
  const port = await new Promise((resolve) => app.listen(0, '127.0.0.1', () => resolve(app.port)))
  return { app, port }
}

test('bad input: 400/413 with the reason, never a crash, nothing written outside dest', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-multer-bad-'))
  const dest = path.join(root, 'dest')
  const { app, port } = await ultimateApp((app) => {
    const disk = uwsBody.multipart({ dest })
    app.post('/disk', disk.any(), (req, res) => res.json(req.files.map((f) => ({ originalname: f.originalname, path: f.path, size: f.size }))))
    app.post('/none', uwsBody.multipart().none(), (req, res) => res.json({ n: req.body.a.length }))
    app.post('/parts', uwsBody.multipart({ limits: { parts: 1000 } }).none(), (req, res) => res.json({ n: req.body.a.length }))
  })
  const post = (route, contentType, body) => request(port, { path: route, headers: { 'content-type': contentType }, body })
  const answer = async (route, contentType, body) => {
    const r = await post(route, contentType, body)
    return { status: r.status, code: JSON.parse(r.body).code }
  }
  const part = (extra = '', data = 'x') => `--b\r\nContent-Disposition: form-data; name="f"${extra}\r\n\r\n${data}\r\n`
  try {
    assert.deepEqual(await answer('/disk', 'multipart/form-data', Buffer.from(part() + '--b--')), { status: 400, code: 'ERR_MULTIPART_BOUNDARY' })
    assert.deepEqual(await answer('/disk', `multipart/form-data; boundary=${'b'.repeat(71)}`, Buffer.from(part() + '--b--')), { status: 400, code: 'ERR_MULTIPART_BOUNDARY' })
    assert.deepEqual(await answer('/disk', 'multipart/form-data; boundary=b', Buffer.from(part('; filename="a.txt"'))), { status: 400, code: 'ERR_MULTIPART_TRUNCATED' })
    assert.deepEqual(await answer('/disk', 'multipart/form-data; boundary=b', Buffer.from('--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--')), { status: 400, code: 'ERR_MULTIPART_HEADER' })
    assert.deepEqual(await answer('/disk', 'multipart/form-data; boundary=b', Buffer.from(part(`; filename="a.txt"\r\nX-Pad: ${'p'.repeat(20000)}`) + '--b--')), { status: 413, code: 'LIMIT_HEADER_SIZE' })
    // A NUL or another control character in a header value is a malformed header.
    assert.deepEqual(await answer('/disk', 'multipart/form-data; boundary=b', Buffer.from(part('; filename="a\0b.txt"') + '--b--')), { status: 400, code: 'ERR_MULTIPART_HEADER' })
    // Path names are cut to their last segment (busboy's rule), and disk storage names
    // files itself: whatever the client calls a file, it lands in dest.
    for (const name of ['../../escape.txt', '..\\..\\escape.txt', '/etc/passwd', '..', 'x'.repeat(10000)]) {
      const r = await post('/disk', 'multipart/form-data; boundary=b', Buffer.from(part(`; filename="${name}"`, 'data') + '--b--'))
      assert.equal(r.status, 200, r.body)
      for (const f of JSON.parse(r.body)) {
        assert.equal(path.dirname(f.path), dest)
        assert.ok(!f.originalname.includes('/') && !f.originalname.includes('\\'), f.originalname)
      }
    }
    assert.deepEqual(fs.readdirSync(root), ['dest'], 'nothing written beside dest')
    assert.equal(fs.readdirSync(dest).length, 4, 'one file per named upload ("..": no name, skipped)')
    // 100 000 tiny parts: read whole without a limit, refused at the limit with one.
    const many = Buffer.from('--b\r\nContent-Disposition: form-data; name="a[]"\r\n\r\n1\r\n'.repeat(100000) + '--b--')
    const all = await post('/none', 'multipart/form-data; boundary=b', many)
    assert.deepEqual({ status: all.status, body: JSON.parse(all.body) }, { status: 200, body: { n: 100000 } })
    assert.deepEqual(await answer('/parts', 'multipart/form-data; boundary=b', many), { status: 413, code: 'LIMIT_PART_COUNT' })
  } finally {
    app.close()
    fs.rmSync(root, { recursive: true, force: true })
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('requests that are not multipart pass through untouched; multipart/mixed is a 415', async () => {
  const { app, port } = await ultimateApp((app) => {
    app.post('/any', uwsBody.multipart().any(), uwsBody.json(), (req, res) => res.json({ body: req.body, files: req.files === undefined }))
  })
  try {
    const r = await request(port, { path: '/any', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"a":1}') })
    assert.deepEqual(JSON.parse(r.body), { body: { a: 1 }, files: true })
    const mixed = await request(port, { path: '/any', headers: { 'content-type': 'multipart/mixed; boundary=b' }, body: Buffer.from('--b--') })
    assert.equal(mixed.status, 415)
  } finally {
    app.close()
  }
})

test('a storage engine slower than the client pauses the client (uWS res.pause) and gets every byte', async () => {
  const size = 24 << 20
  const data = Buffer.alloc(size)
  for (let i = 0; i < size; i += 4096) data[i] = i & 0xff
  let pauses = 0
  let resumes = 0
  let mostBuffered = 0
  // Reads 256 KiB every 2 ms: far slower than a loopback client.
  const slow = {
    _handleFile (req, file, cb) {
      const hash = require('node:crypto').createHash('sha256')
      let n = 0
      const pump = () => {
        mostBuffered = Math.max(mostBuffered, file.stream.readableLength)
        let piece
        while (n % (256 << 10) < (255 << 10) && (piece = file.stream.read()) !== null) { hash.update(piece); n += piece.length }
        if (file.stream.readableEnded) return
        n += 1 << 10
        setTimeout(pump, 2)
      }
      file.stream.on('end', () => cb(null, { size: n, sha: hash.digest('hex') }))
      pump()
    },
    _removeFile (req, file, cb) { cb(null) }
  }
  const { app, port } = await ultimateApp((app) => {
    app.post('/slow', (req, res, next) => {
      const uwsRes = req._res
      const { pause, resume } = uwsRes
      uwsRes.pause = function () { pauses++; return pause.call(this) }
      uwsRes.resume = function () { resumes++; return resume.call(this) }
      next()
    }, uwsBody.multipart({ storage: slow }).single('f'), (req, res) => res.json({ sha: req.file.sha }))
  })
  try {
    const body = formBody('b', [{ name: 'f', filename: 'big.bin', data }])
    const r = await request(port, { path: '/slow', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body, timeout: 60000 })
    assert.equal(r.status, 200, r.body)
    assert.equal(JSON.parse(r.body).sha, sha256(data))
  } finally {
    app.close()
  }
  assert.ok(pauses > 0 && resumes >= pauses, `paused ${pauses}, resumed ${resumes}`)
  // The stream holds at most its high-water mark (Node's Readable default, as multer's)
  // plus what uWS hands over after pause() on this build (helpers/uws-build.js).
  const mark = require('node:stream').getDefaultHighWaterMark(false)
  assert.ok(mostBuffered <= mark + readAfterPause, `file.stream held ${mostBuffered} bytes`)
})

test('next runs in the caller\'s async context, on success and on error, under both frameworks', async () => {
  const { AsyncLocalStorage } = require('node:async_hooks')
  const als = new AsyncLocalStorage()
  const routes = (app) => {
    app.use((req, res, next) => als.run({ id: req.headers['x-id'] }, next))
    app.post('/ctx', uwsBody.multipart({ limits: { fileSize: 3 }, fileFilter: (req, file, cb) => setImmediate(cb, null, true) }).any(), (req, res) => res.json({ id: als.getStore().id }))
    app.use((err, req, res, next) => res.status(err.status).json({ id: als.getStore().id, code: err.code }))
  }
  const ue = ultimateExpress()
  routes(ue)
  const uePort = await new Promise((resolve) => ue.listen(0, '127.0.0.1', () => resolve(ue.port)))
  const ex = express()
  routes(ex)
  const server = http.createServer(ex)
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    for (const port of [uePort, server.address().port]) {
      for (const [id, data, expected] of [['ok', 'abc', { id: 'ok' }], ['big', 'abcd', { id: 'big', code: 'LIMIT_FILE_SIZE' }]]) {
        const body = formBody('b', [{ name: 'f', filename: 'a.txt', data: Buffer.from(data) }])
        const r = await request(port, { path: '/ctx', headers: { 'content-type': 'multipart/form-data; boundary=b', 'x-id': id }, body, cuts: [10, 60], pause: 2 })
        assert.deepEqual(JSON.parse(r.body), expected)
      }
    }
  } finally {
    ue.close()
    server.close()
  }
})

test('memory storage: files answered at once are views of one block, its native memory freed after GC', async () => {
  const { app, port } = await ultimateApp((app) => {
    const describe = (req, res) => res.json({
      shared: req.files[0].buffer.buffer === req.files[1].buffer.buffer,
      native: uwsBody.stats().bytesInUse >= 11,
      bytes: req.files.map((f) => f.buffer.toString())
    })
    app.post('/sync', uwsBody.multipart().any(), describe)
    app.post('/async', uwsBody.multipart({ fileFilter: (req, file, cb) => setImmediate(cb, null, true) }).any(), describe)
  })
  try {
    const body = formBody('b', [{ name: 'f', filename: 'a', data: Buffer.from('first') }, { name: 'f', filename: 'b', data: Buffer.from('second') }])
    const send = (route) => request(port, { path: route, headers: { 'content-type': 'multipart/form-data; boundary=b' }, body }).then((r) => JSON.parse(r.body))
    assert.deepEqual(await send('/sync'), { shared: true, native: true, bytes: ['first', 'second'] })
    // After an asynchronous answer the bytes come from the parser's JS Buffers.
    assert.deepEqual((await send('/async')).bytes, ['first', 'second'])
  } finally {
    app.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})
