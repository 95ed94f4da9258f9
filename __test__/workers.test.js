'use strict'
// Threads and lifetimes: the addon in several worker threads at once, workers and the
// process going away with native Buffers alive, and released memory never readable.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { spawnSync } = require('node:child_process')
const { BodyAccumulator, stats } = require('..')
const { request, bodyOf, sha256 } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const MIB = 1024 * 1024
const zlib = require('node:zlib')
const WORKER = path.join(__dirname, 'helpers', 'worker-server.js')
const STREAM_WORKER = path.join(__dirname, 'helpers', 'worker-stream-server.js')

const start = (workerData, file = WORKER) => {
  const worker = new Worker(file, { workerData })
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => resolve({ worker, ...m }))
    worker.once('error', reject)
  })
}
const exited = (worker) => new Promise((resolve) => worker.once('exit', resolve))

test('four worker threads, each with its own uWS app, read concurrent uploads correctly', async () => {
  const workers = await Promise.all([1, 2, 3, 4].map(() => start({ mode: 'serve' })))
  const jobs = []
  for (const [i, w] of workers.entries()) {
    for (const size of [0, 100, 70000, MIB + 1, 5 * MIB]) {
      const body = bodyOf(size, i * 10 + size)
      jobs.push(request(w.port, { body, chunked: size % 2 === 1 }).then((r) => assert.deepEqual(r, { status: 200, body: `${size} ${sha256(body)}` })))
    }
  }
  await Promise.all(jobs)
  for (const w of workers) {
    const gone = exited(w.worker)
    await fetch(`http://127.0.0.1:${w.port}/close`, { headers: { connection: 'close' } })
    assert.equal(await gone, 0, 'the thread ended by itself')
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('a worker that exits (or is terminated) with native Buffers alive frees them', async () => {
  for (const how of ['exit', 'terminate']) {
    const before = await bytesInUseAfterGc()
    const w = await start({ mode: 'keep-buffers', wait: how === 'terminate' })
    assert.ok(stats().bytesInUse >= before + 8 * 3 * MIB, 'the worker holds its Buffers')
    const gone = exited(w.worker)
    if (how === 'terminate') await w.worker.terminate()
    else w.worker.postMessage('end')
    await gone // 'exit': the thread has nothing left to run and ends by itself
    assert.equal(await bytesInUseAfterGc(), before, `${how}: freed with the worker's environment`)
  }
})

test('bodyStream in a worker thread with its own uWS app: bodies with and without content-length, encoded or not, hash-checked', async () => {
  const w = await start({ mode: 'serve' }, STREAM_WORKER)
  const jobs = []
  for (const size of [0, 1, 70000, 3 * MIB + 5, 6 * MIB]) {
    const body = bodyOf(size, size + 7)
    const want = { status: 200, body: `${size} ${sha256(body)}` }
    for (const chunked of [false, true]) {
      jobs.push(request(w.port, { path: '/stream', body, chunked, chunkSize: 100000 }).then((r) => assert.deepEqual(r, want, `${size} chunked ${chunked}`)))
    }
    const gzip = zlib.gzipSync(body)
    jobs.push(request(w.port, { path: '/stream', body: gzip, headers: { 'content-encoding': 'gzip' }, chunked: size % 2 === 1 }).then((r) => assert.deepEqual(r, want, `${size} gzip`)))
  }
  await Promise.all(jobs)
  const corrupt = zlib.gzipSync(bodyOf(MIB))
  corrupt[corrupt.length - 6] ^= 1
  assert.equal((await request(w.port, { path: '/stream', body: corrupt, headers: { 'content-encoding': 'gzip' } })).body, '400 encoding.invalid')
  const gone = exited(w.worker)
  await fetch(`http://127.0.0.1:${w.port}/close`, { headers: { connection: 'close' } })
  assert.equal(await gone, 0, 'the thread ended by itself')
  assert.equal(await bytesInUseAfterGc(), 0)
})

// Terminating a worker whose uWS app still has a socket open aborts the process on this
// uWS build (uv_loop_close with open handles, or a segfault), with a bare onData handler
// and no uws-body at all: so the worker here has no uWS. Its streams are fed by stand-in
// responses and left mid-body, which is what termination finds of bodyStream's.
test('terminating a worker with bodyStreams mid-body (client paused, encoded bytes held) frees them and leaves the process running', async () => {
  for (let i = 0; i < 3; i++) {
    const before = await bytesInUseAfterGc()
    const w = await start({ mode: 'open' }, STREAM_WORKER)
    const gone = exited(w.worker)
    try {
      assert.ok(w.held > MIB, `the worker's streams hold encoded bytes: ${w.held}`)
      assert.ok(stats().bytesInUse >= before + w.held, `${stats().bytesInUse} ${before} ${w.held}`)
    } finally {
      await w.worker.terminate()
    }
    assert.equal(await gone, 1, 'terminated')
    assert.equal(await bytesInUseAfterGc(), before, 'freed with the worker\'s environment')
  }
})

test('the process exits cleanly with native Buffers and unfinished bodies alive', () => {
  const script = `
    const { BodyAccumulator } = require(${JSON.stringify(path.join(__dirname, '..'))})
    const kept = []
    for (let i = 0; i < 20; i++) {
      const acc = new BodyAccumulator({ contentLength: 2 * 1024 * 1024, limit: '8mb' })
      acc.push(Buffer.alloc(2 * 1024 * 1024, i))
      kept.push(acc.finish(), new BodyAccumulator({ contentLength: 5000000, limit: '8mb' }))
    }
    globalThis.kept = kept
    process.exit(${'${code}'})` // eslint-disable-line no-template-curly-in-string
  for (const code of [0, 3]) {
    const r = spawnSync(process.execPath, ['-e', script.replace('${code}', String(code))], { encoding: 'utf8', timeout: 20000 }) // eslint-disable-line no-template-curly-in-string
    assert.equal(r.status, code, r.stderr)
    assert.equal(r.signal, null)
    assert.equal(r.stderr, '')
  }
})

// In a plain function: an async test's frame may keep its last Buffer alive across the GC.
function readRounds (seen, from, to) {
  for (let round = from; round < to; round++) {
    const acc = new BodyAccumulator({ contentLength: 2 * MIB, limit: '8mb' })
    acc.push(Buffer.alloc(2 * MIB, round + 1))
    const buf = acc.finish()
    // Keep a view of every third body; the others become garbage and their memory is
    // recycled into later bodies.
    if (round % 3 === 2) seen.push([round + 1, new Uint8Array(buf.buffer, buf.byteOffset + 100, 10)])
  }
}

// A live view keeps its body's memory: it still reads its own bytes.
function checkViews (seen) {
  for (const [byte, view] of seen) {
    assert.ok(view.length === 10 && view.every((b) => b === byte), `a view of body ${byte} shows someone else's bytes`)
  }
}

test('recycled memory is never readable through an old Buffer or view', async () => {
  const seen = []
  for (let i = 0; i < 30; i += 3) {
    readRounds(seen, i, i + 3)
    global.gc()
    await new Promise(setImmediate)
    checkViews(seen)
  }
  seen.length = 0
  assert.equal(await bytesInUseAfterGc(), 0)
})
