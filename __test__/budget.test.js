'use strict'
// The process's memory budget (setMemoryBudget, src/core/budget.rs, lib/body/budget.js) over
// real servers on 127.0.0.1: bodies held at once past the budget are refused with 503
// ERR_BODY_BUDGET and a Retry-After, a declared length before its bytes are read, an
// unknown one as it grows; every reader honours it; and the reservations come back to 0
// after finish, abort, error and timeout.
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const uWS = require('uWebSockets.js')
const ultimateExpress = require('ultimate-express')
const express = require('express')
const uwsBody = require('..')
const { readBody, readText, bodyStream, readMultipart, BodyAccumulator, answerError, setMemoryBudget, stats } = uwsBody
const { request, bodyOf: randomBytes, sha256, sleep } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { unchunk } = require('./helpers/early-clients')

const KIB = 1024
const MIB = 1024 * KIB
const BUDGET = MIB

// Bodies of ASCII letters, read alike as bytes and as text.
const bodyOf = (size, seed) => Buffer.from(randomBytes(size, seed).map((b) => 0x61 + (b % 26)))
const ok = (res, body) => { if (!res.aborted) res.cork(() => res.end(`${body.length} ${sha256(body)}`)) }
const fail = (res, err) => answerError(res, err)

/** A uWS server whose routes read the body each way and answer errors with answerError. */
function startServer () {
  const app = uWS.App()
  const route = (path, read) => app.post(path, (res, req) => read(res, req))
  route('/body', (res, req) => readBody(res, req, { limit: '8mb', timeout: Number(req.getHeader('x-timeout')) || undefined }).then((b) => ok(res, b), (e) => fail(res, e)))
  route('/text', (res, req) => readText(res, req, { limit: '8mb' }).then((t) => ok(res, Buffer.from(t)), (e) => fail(res, e)))
  route('/acc', (res, req) => {
    const acc = new BodyAccumulator({ limit: '8mb', contentLength: req.getHeader('content-length') })
    res.onAborted(() => { res.aborted = true; acc.abort() })
    if (acc.error) return answerError(res, acc.error, { bodyEnded: false })
    res.onData((chunk, isLast) => {
      if (acc.error) return
      if (!acc.push(chunk)) return answerError(res, acc.error, { bodyEnded: isLast })
      if (isLast) ok(res, acc.finish())
    })
  })
  route('/stream', (res, req) => {
    const parts = []
    bodyStream(res, req, { highWaterMark: 64 * KIB }).on('data', (d) => parts.push(d)).on('end', () => ok(res, Buffer.concat(parts))).on('error', (e) => fail(res, e))
  })
  route('/form', (res, req) => readMultipart(res, req, { limits: { fileSize: 8 * MIB } }).then(({ files }) => ok(res, files[0].buffer), (e) => fail(res, e)))
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (token) => {
      if (!token) return reject(new Error('no listen'))
      resolve({ port: uWS.us_socket_local_port(token), close: () => uWS.us_listen_socket_close(token) })
    })
  })
}

/**
 * A client that sends its head and the first `first` bytes of `body`, then waits:
 * rest() sends the remainder, close() goes away. `done` resolves with the answer
 * ({ status, headers, body }) or { closed: true }.
 */
function slowUpload (port, path, body, { chunked = false, first = 1024, headers = {} } = {}) {
  const socket = net.connect(port, '127.0.0.1')
  const head = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  const encode = (piece) => chunked ? Buffer.concat([Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n')]) : piece
  head.push(chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`)
  const received = []
  let answered = false
  const done = new Promise((resolve) => {
    const settle = () => resolve(parse(Buffer.concat(received)) || { closed: true })
    socket.on('data', (d) => {
      received.push(d)
      const answer = parse(Buffer.concat(received))
      if (answer) { answered = true; resolve(answer); socket.destroy() }
    })
    socket.on('close', settle)
    socket.on('error', settle)
  })
  const opened = new Promise((resolve) => socket.on('connect', () => {
    socket.write(head.join('\r\n') + '\r\n\r\n')
    if (first > 0) socket.write(encode(body.subarray(0, first)))
    resolve()
  }))
  return {
    done,
    opened,
    // A body refused before its rest is sent is answered already: the rest is not sent
    // then (the answer waiting in the socket would be lost to the reset).
    async rest () {
      await sleep(20)
      if (!answered && !socket.destroyed) socket.write(Buffer.concat([encode(body.subarray(first)), Buffer.from(chunked ? '0\r\n\r\n' : '')]))
      return done
    },
    close () { socket.destroy(); return done }
  }
}

function parse (raw) {
  const end = raw.indexOf('\r\n\r\n')
  if (end < 0) return null
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n')
  const headers = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const status = Number(lines[0].split(' ')[1])
  if (/chunked/i.test(headers['transfer-encoding'] || '')) {
    // A chunked answer (write() on uWS).
    const chunked = unchunk(raw, end + 4)
    return chunked === null ? null : { status, headers, body: chunked.body.toString() }
  }
  const length = Number(headers['content-length'] || 0)
  if (raw.length < end + 4 + length) return null
  return { status, headers, body: raw.subarray(end + 4, end + 4 + length).toString() }
}

/** Waits until the server's reservations reach `bytes` at least (the slow uploads began). */
async function reservedAtLeast (bytes) {
  for (let i = 0; i < 200 && stats().budgetReserved < bytes; i++) await sleep(10)
  assert.ok(stats().budgetReserved >= bytes, `reserved ${stats().budgetReserved} < ${bytes}`)
}

// A native block stays reserved until it is back in the pool: its Buffer collected.
async function settledToZero () {
  assert.equal(await bytesInUseAfterGc(), 0)
  for (let i = 0; i < 200 && stats().budgetReserved !== 0; i++) await sleep(10)
  assert.equal(stats().budgetReserved, 0, 'every reservation came back')
}

const BOUNDARY = 'b0undary'
/** A form of one file field `f`. */
function formOf (file) {
  return Buffer.concat([Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`), file, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)])
}

function assertRefused (answer, what) {
  assert.equal(answer.status, 503, `${what}: ${JSON.stringify(answer)}`)
  assert.equal(JSON.parse(answer.body).code, 'ERR_BODY_BUDGET', what)
  assert.equal(answer.headers['retry-after'], '1', what)
}

let server
test.before(async () => {
  server = await startServer()
  setMemoryBudget(BUDGET)
})
test.after(() => {
  server.close()
  setMemoryBudget(Infinity)
})

test('stats() reports the budget; Infinity turns it off', () => {
  const s = stats()
  assert.equal(s.memoryBudget, BUDGET)
  assert.equal(typeof s.budgetRefusals, 'number')
  assert.throws(() => setMemoryBudget(-1), TypeError)
  assert.throws(() => setMemoryBudget('1mb'), TypeError)
})

for (const [path, size] of [['/body', 700 * KIB], ['/body', 150 * KIB], ['/text', 700 * KIB], ['/acc', 700 * KIB], ['/acc', 150 * KIB]]) {
  test(`${path}, ${size / KIB} KiB declared: admitted whole or refused before its bytes; back to 0 after`, async () => {
    const big = bodyOf(size)
    const held = slowUpload(server.port, path, big)
    await held.opened
    await reservedAtLeast(size)
    const refusals = stats().budgetRefusals
    // A second body of the same length cannot fit while the first is held: 503, the
    // client still sending its head and first bytes gets it (linger's rule).
    const second = slowUpload(server.port, path, bodyOf(BUDGET - size + 1, 7), { first: 0 })
    assertRefused(await second.done, path)
    assert.equal(stats().budgetRefusals, refusals + 1)
    // The first is whole and intact.
    const first = await held.rest()
    assert.deepEqual([first.status, first.body], [200, `${size} ${sha256(big)}`])
    await settledToZero()
    // And now the same body fits.
    const again = bodyOf(BUDGET - size + 1, 7)
    assert.equal((await request(server.port, { path, body: again })).body, `${again.length} ${sha256(again)}`)
    await settledToZero()
  })
}

test('a body of unknown length reserves as it grows: a step that does not fit refuses it mid-body', async () => {
  const big = bodyOf(800 * KIB)
  const held = slowUpload(server.port, '/body', big)
  await held.opened
  await reservedAtLeast(800 * KIB)
  const chunked = bodyOf(600 * KIB, 3)
  const grown = slowUpload(server.port, '/body', chunked, { chunked: true, first: 256 * KIB })
  assertRefused(await grown.done, 'chunked')
  assert.equal((await held.rest()).body, `${big.length} ${sha256(big)}`)
  await settledToZero()
  // Alone, it fits.
  assert.equal((await request(server.port, { path: '/body', body: chunked, chunked: true })).body, `${chunked.length} ${sha256(chunked)}`)
  await settledToZero()
})

test('the reservations come back after an abort and a timeout', async () => {
  for (const size of [100 * KIB, 700 * KIB]) {
    const gone = slowUpload(server.port, '/body', bodyOf(size))
    await gone.opened
    await reservedAtLeast(size)
    await gone.close()
    await settledToZero()
    // readBody checks its deadline as each chunk arrives.
    const late = slowUpload(server.port, '/body', bodyOf(size), { headers: { 'x-timeout': 100 } })
    await late.opened
    await reservedAtLeast(size)
    await sleep(150)
    assert.equal((await late.rest()).status, 408)
    await settledToZero()
  }
})

test('bodyStream and readMultipart honour it', async () => {
  const held = slowUpload(server.port, '/body', bodyOf(800 * KIB))
  await held.opened
  await reservedAtLeast(800 * KIB)
  // The stream reserves what it may buffer (its mark and what uWS delivers after a pause).
  assertRefused(await request(server.port, { path: '/stream', body: bodyOf(300 * KIB), withHeaders: true }), 'stream')
  // A memory-stored file grows its arena: a step refused.
  const boundary = BOUNDARY
  const file = bodyOf(400 * KIB, 5)
  const form = formOf(file)
  assertRefused(await request(server.port, { path: '/form', body: form, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, withHeaders: true }), 'form')
  await held.rest()
  await settledToZero()
  assert.equal((await request(server.port, { path: '/stream', body: file })).body, `${file.length} ${sha256(file)}`)
  assert.equal((await request(server.port, { path: '/form', body: form, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } })).body, `${file.length} ${sha256(file)}`)
  await settledToZero()
})

for (const [name, make] of [['ultimate-express', ultimateExpress], ['Express', express]]) {
  test(`the four parsers and multipart() under ${name}: next(err) with status 503 and the Retry-After`, async () => {
    const app = make()
    app.set('env', 'test')
    const errs = []
    for (const kind of ['json', 'raw', 'text', 'urlencoded']) {
      app.post(`/${kind}`, uwsBody[kind]({ limit: '8mb', type: '*/*' }), (req, res) => res.send('read'))
    }
    // multipart() with its memory storage: the form's arena grows past what is left.
    app.post('/form', uwsBody.multipart().single('f'), (req, res) => res.send(`${req.file.size} ${sha256(req.file.buffer)}`))
    // Each framework's own error answer: the Retry-After reaches the client under both.
    app.use((err, req, res, next) => {
      errs.push(err)
      next(err)
    })
    const port = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(app.port ?? s.address().port))
      app.closeServer = () => (s && s.close ? s.close() : app.close())
    })
    try {
      const held = slowUpload(server.port, '/body', bodyOf(800 * KIB))
      await held.opened
      await reservedAtLeast(800 * KIB)
      for (const kind of ['json', 'raw', 'text', 'urlencoded']) {
        const answer = await request(port, { path: `/${kind}`, body: Buffer.alloc(200 * KIB, 0x31), headers: { 'content-type': 'application/octet-stream' }, withHeaders: true })
        assert.equal(answer.status, 503, kind)
        assert.equal(answer.headers['retry-after'], '1', kind)
      }
      const file = bodyOf(400 * KIB, 9)
      const form = { path: '/form', body: formOf(file), headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, withHeaders: true }
      const refused = await request(port, form)
      assert.deepEqual([refused.status, refused.headers['retry-after']], [503, '1'], 'multipart()')
      assert.deepEqual(errs.map((e) => [e.status, e.code, e.headers]), Array(5).fill([503, 'ERR_BODY_BUDGET', { 'Retry-After': '1' }]))
      await held.rest()
      await settledToZero()
      assert.equal((await request(port, form)).body, `${file.length} ${sha256(file)}`)
      await settledToZero()
    } finally {
      app.closeServer()
    }
  })
}

test('many concurrent bodies over the budget: each is 200 intact or 503 ERR_BODY_BUDGET', async () => {
  const bodies = Array.from({ length: 24 }, (_, i) => bodyOf([20 * KIB, 150 * KIB, 300 * KIB][i % 3], i))
  const answers = await Promise.all(bodies.map((body, i) => {
    const u = slowUpload(server.port, ['/body', '/text', '/acc'][i % 3], body, { chunked: i % 2 === 1 })
    return u.opened.then(() => sleep(50)).then(() => u.rest())
  }))
  let admitted = 0
  for (const [i, a] of answers.entries()) {
    if (a.status === 200) {
      admitted++
      assert.equal(a.body, `${bodies[i].length} ${sha256(bodies[i])}`)
    } else {
      assertRefused(a, `body ${i}`)
    }
  }
  assert.ok(admitted > 0 && admitted < bodies.length, `${admitted} admitted`)
  await settledToZero()
})

test('a worker\'s reservations count in the process and come back when it ends', async () => {
  const { Worker } = require('node:worker_threads')
  const worker = new Worker(`
    const { parentPort } = require('node:worker_threads')
    const { BodyAccumulator } = require(${JSON.stringify(require.resolve('..'))})
    const held = [new BodyAccumulator({ limit: '8mb', contentLength: 600 * 1024 }), new BodyAccumulator({ limit: '8mb', contentLength: 100 * 1024 })]
    // (A body read in JS reserves with its first bytes.)
    for (const acc of held) acc.push(new Uint8Array(1))
    parentPort.postMessage(held.map((a) => a.error && a.error.code))
    setInterval(() => {}, 1000)
  `, { eval: true })
  const codes = await new Promise((resolve) => worker.once('message', resolve))
  assert.deepEqual(codes, [null, null])
  assert.equal(stats().memoryBudget, BUDGET, 'a thread that loads the package later sets no default over it')
  assert.ok(stats().budgetReserved >= 700 * KIB)
  const refused = new BodyAccumulator({ limit: '8mb', contentLength: 400 * KIB })
  assert.equal(refused.error && refused.error.code, 'ERR_BODY_BUDGET')
  await worker.terminate()
  await settledToZero()
})

test('setMemoryBudget(Infinity): no refusals', async () => {
  setMemoryBudget(Infinity)
  try {
    assert.equal(stats().memoryBudget, Infinity)
    const bodies = Array.from({ length: 6 }, (_, i) => bodyOf(700 * KIB, i))
    const answers = await Promise.all(bodies.map((body) => {
      const u = slowUpload(server.port, '/body', body)
      return u.opened.then(() => sleep(50)).then(() => u.rest())
    }))
    assert.deepEqual(answers.map((a) => a.body), bodies.map((b) => `${b.length} ${sha256(b)}`))
  } finally {
    setMemoryBudget(BUDGET)
  }
  await settledToZero()
})

test('the default budget is a quarter of the memory the process may use', () => {
  const { defaultBudget } = require('../lib/body/budget')
  const inChild = require('node:child_process').execFileSync(process.execPath, ['-e', `
    const { stats } = require(${JSON.stringify(require.resolve('..'))})
    console.log(JSON.stringify([stats().memoryBudget, require(${JSON.stringify(require.resolve('../lib/body/budget'))}).defaultBudget()]))`], { encoding: 'utf8' })
  const [applied, computed] = JSON.parse(inChild)
  assert.equal(applied, computed, 'applied at load')
  const os = require('node:os')
  const constrained = process.constrainedMemory?.() || 0
  const memory = constrained > 0 && constrained < os.totalmem() ? constrained : os.totalmem()
  assert.equal(defaultBudget(), Math.floor(memory / 4))
})

test('a BodyAccumulator dropped without finish() or abort() gives its reservation back when collected', async () => {
  // What bodies hold (stats() leaves out the thread's idle credit; no native body is open here).
  const held = () => stats().budgetReserved
  const before = held()
  const open = new BodyAccumulator({ contentLength: 4000, limit: '1mb' })
  assert.equal(held(), before, 'nothing is reserved before the first bytes')
  open.abort()
  ;(() => {
    const acc = new BodyAccumulator({ contentLength: 4000, limit: '1mb' })
    assert.ok(acc.push(new Uint8Array(1000)))
    assert.equal(held(), before + 4000, 'the declared length is reserved with its first bytes')
  })()
  for (let i = 0; i < 100 && held() !== before; i++) {
    global.gc()
    await new Promise(setImmediate)
  }
  assert.equal(held(), before, 'the dropped body\'s reservation came back')
})

test('in a small container the pool keeps at most an eighth of its memory idle, unless setPoolLimit said otherwise', () => {
  const MiB = 1024 * 1024
  const out = require('node:child_process').execFileSync(process.execPath, ['-e', `
    process.constrainedMemory = () => 512 * ${MiB}
    const { stats, setPoolLimit } = require(${JSON.stringify(require.resolve('..'))})
    const first = stats()
    setPoolLimit(10 * ${MiB})
    const { Worker } = require('node:worker_threads')
    const w = new Worker('process.constrainedMemory = () => 256 * ${MiB}; require(' + JSON.stringify(${JSON.stringify(require.resolve('..'))}) + ')', { eval: true })
    w.on('exit', () => console.log(JSON.stringify([first.poolLimit, first.memoryBudget, stats().poolLimit])))`], { encoding: 'utf8' })
  assert.deepEqual(JSON.parse(out), [64 * MiB, 128 * MiB, 10 * MiB])
})
