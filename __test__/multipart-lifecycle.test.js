'use strict'
// The multipart lifecycle (lib/multipart/lifecycle.js): its table, pair by pair, against
// one written out here; then the engine driven into each state and hit by each failure
// (the client going away, a limit, a malformed form, a storage engine failing at once or
// later, the timeout). After each: one outcome for the request (the first error, or done
// when the failure can no longer arrive), every file an engine began removed, the source
// not left paused, nothing held. Then the failures that can reach a real uWS server,
// through readMultipart, while a file is with its engine and after the body is read.
const test = require('node:test')
const assert = require('node:assert/strict')
const { MultipartEngine } = require('../lib/multipart/engine')
const lifecycle = require('../lib/multipart/lifecycle')
const { readOptions } = require('../lib/multipart/options')
const { parseLimits } = require('../lib/multipart/limits')

const { READING, STORING, FAILING, REMOVING, ENDED } = lifecycle
const { REFUSED, BODY_READ, IDLE, FAILED, GRACE_OVER, REMOVED } = lifecycle

test('the table: every state and event, what it leads to or that it is ignored', () => {
  const expected = {
    [READING]: { [REFUSED]: ENDED, [BODY_READ]: STORING, [IDLE]: null, [FAILED]: FAILING, [GRACE_OVER]: null, [REMOVED]: null },
    [STORING]: { [REFUSED]: null, [BODY_READ]: null, [IDLE]: ENDED, [FAILED]: FAILING, [GRACE_OVER]: null, [REMOVED]: null },
    [FAILING]: { [REFUSED]: null, [BODY_READ]: null, [IDLE]: REMOVING, [FAILED]: null, [GRACE_OVER]: REMOVING, [REMOVED]: null },
    [REMOVING]: { [REFUSED]: null, [BODY_READ]: null, [IDLE]: null, [FAILED]: null, [GRACE_OVER]: null, [REMOVED]: ENDED },
    [ENDED]: { [REFUSED]: null, [BODY_READ]: null, [IDLE]: null, [FAILED]: null, [GRACE_OVER]: null, [REMOVED]: null }
  }
  assert.deepEqual(lifecycle.STATES, Object.keys(expected))
  for (const state of lifecycle.STATES) {
    assert.deepEqual(lifecycle.EVENTS, Object.keys(expected[state]))
    for (const event of lifecycle.EVENTS) {
      assert.equal(lifecycle.next(state, event), expected[state][event], `${event} in ${state}`)
    }
  }
  // ENDED is reached from every state, and left by nothing.
  const reached = new Set([READING])
  for (let grew = true; grew;) {
    grew = false
    for (const state of reached) {
      for (const to of Object.values(lifecycle.TRANSITIONS[state])) if (!reached.has(to)) { reached.add(to); grew = true }
    }
  }
  assert.deepEqual([...reached].sort(), [...lifecycle.STATES].sort())
  assert.deepEqual(lifecycle.TRANSITIONS[ENDED], {})
})

test('the form goes on while reading and storing only: from failing on nothing new starts', () => {
  const goesOn = Object.fromEntries(lifecycle.STATES.map((state) => [state, lifecycle.goesOn(state)]))
  assert.deepEqual(goesOn, { [READING]: true, [STORING]: true, [FAILING]: false, [REMOVING]: false, [ENDED]: false })
})

const B = 'LiFeCyClE'
const CONTENT_TYPE = `multipart/form-data; boundary=${B}`
const LIMIT = 4096
const TIMEOUT = 40
const filePart = (name) => `--${B}\r\nContent-Disposition: form-data; name="f"; filename="${name}"\r\n\r\n`
const nextPart = (name) => `\r\n${filePart(name)}`
const END = `\r\n--${B}--\r\n`
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const ticks = async () => { for (let i = 0; i < 5; i++) await new Promise(setImmediate) }

/** A storage engine the test answers for: each file's callback, each removal's, is held until said. */
function heldStorage ({ holdRemovals = false } = {}) {
  const storage = {
    handled: [],
    removed: [],
    removals: [],
    throwNext: false,
    thrown: 0,
    _handleFile (req, file, cb) {
      if (storage.throwNext) {
        storage.thrown++
        throw new Error('storage error at once')
      }
      file.path = `/held/${file.originalname}`
      const entry = { file, bytes: 0, answered: false }
      entry.answer = (err) => {
        if (entry.answered) return
        entry.answered = true
        if (err) cb(err)
        else cb(null, { size: entry.bytes })
      }
      storage.handled.push(entry)
      file.stream.on('data', (b) => { entry.bytes += b.length })
    },
    _removeFile (req, file, cb) {
      storage.removed.push(file.path)
      if (holdRemovals) storage.removals.push(cb)
      else cb(null)
    },
    /** The first file not answered yet, answered. */
    answerNext (err) {
      const entry = storage.handled.find((e) => !e.answered)
      if (entry !== undefined) entry.answer(err)
    },
    answerAll () {
      for (const entry of storage.handled) entry.answer(null)
      for (const cb of storage.removals.splice(0)) cb(null)
    }
  }
  return storage
}

function open ({ timeout = 0, holdRemovals = false } = {}) {
  const storage = heldStorage({ holdRemovals })
  const outcomes = []
  const adapter = {
    field () {},
    fileBegin () { return null },
    fileStored () {},
    fileDropped () {},
    done () { outcomes.push('done') },
    fail (err) { outcomes.push(err) }
  }
  const calls = []
  const source = { pause () { calls.push('pause') }, resume () { calls.push('resume') } }
  const options = readOptions({ storage, limit: LIMIT, timeout, highWaterMark: 16 })
  const engine = new MultipartEngine(options, {
    contentType: CONTENT_TYPE,
    contentLength: undefined,
    contentEncoding: undefined,
    limits: parseLimits(undefined),
    fileFilter: null,
    req: null
  }, adapter)
  assert.equal(engine.start(source), true)
  const write = (text, last = false) => engine.write(Buffer.from(text, 'latin1'), last)
  return { engine, storage, outcomes, calls, write }
}

// How each state is reached, and the error that put it there (if any).
const STATES = {
  // A file with its engine, its bytes still arriving.
  [READING]: (ctx) => {
    ctx.write(filePart('a') + 'x'.repeat(100))
  },
  // The body read; STORING_MAX files with their engines, one more waiting for its turn.
  [STORING]: (ctx) => {
    let body = filePart('a0') + 'x'.repeat(10)
    for (let i = 1; i < 9; i++) body += nextPart(`a${i}`) + 'x'.repeat(10)
    ctx.write(body + END, true)
  },
  // The client went away mid-file; the engine waits for the file's engine.
  [FAILING]: (ctx) => {
    ctx.write(filePart('a') + 'x'.repeat(100))
    ctx.engine.abort()
    return 'ECONNABORTED'
  },
  // The same, the engine has called back: the removal of its file is under way.
  [REMOVING]: (ctx) => {
    ctx.write(filePart('a') + 'x'.repeat(100))
    ctx.engine.abort()
    ctx.storage.answerNext(null)
    return 'ECONNABORTED'
  },
  // Done: the form read and its file stored.
  [ENDED]: (ctx) => {
    ctx.write(filePart('a') + 'x'.repeat(10) + END, true)
    ctx.storage.answerNext(null)
    return 'done'
  }
}

// Each failure as it arrives, and what it is when it counts.
const FAILURES = {
  'client abort': { hit: (ctx) => ctx.engine.abort(), code: 'ECONNABORTED' },
  limit: { hit: (ctx) => ctx.write('z'.repeat(LIMIT + 1)), code: 'ERR_BODY_TOO_LARGE', needsBody: true },
  'parse error': { hit: (ctx) => ctx.write('cut', true), code: 'ERR_MULTIPART_TRUNCATED', needsBody: true },
  // The next file handed to its engine: a new part, or in STORING the one waiting its turn.
  'storage error at once': {
    hit: (ctx) => {
      ctx.storage.throwNext = true
      if (ctx.engine.ending.state === STORING) ctx.storage.answerNext(null)
      else ctx.write(nextPart('b') + 'y')
      ctx.storage.throwNext = false
    },
    message: 'storage error at once'
  },
  'storage error later': { hit: (ctx) => ctx.storage.answerNext(new Error('storage error later')), message: 'storage error later' },
  timeout: { hit: () => sleep(TIMEOUT * 2), code: 'ERR_BODY_TIMEOUT', timeout: true }
}

for (const [state, reach] of Object.entries(STATES)) {
  for (const [name, failure] of Object.entries(FAILURES)) {
    test(`${name} in ${state}`, async () => {
      const ctx = open({ timeout: failure.timeout ? TIMEOUT : 0, holdRemovals: state === REMOVING })
      const before = reach(ctx)
      assert.equal(ctx.engine.ending.state, state)
      await failure.hit(ctx)
      // What was held is answered; a late storage error in REMOVING is then a second answer.
      ctx.storage.answerAll()
      await ticks()
      ctx.storage.answerAll()
      await ticks()

      assert.equal(ctx.outcomes.length, 1, 'one outcome for the request')
      const outcome = ctx.outcomes[0]
      // A failure that can no longer arrive (the body is read) changes nothing.
      const counts = state === READING || (state === STORING && !failure.needsBody)
      if (before !== undefined && before !== 'done') {
        assert.equal(outcome.code, before, 'the first error wins')
      } else if (before === 'done' || !counts) {
        assert.equal(outcome, 'done')
      } else if (failure.code !== undefined) {
        assert.equal(outcome.code, failure.code)
      } else {
        assert.equal(outcome.message, failure.message)
      }
      assert.equal(ctx.engine.ending.state, ENDED)
      if (outcome !== 'done') {
        const began = ctx.storage.handled.map((e) => e.file.path)
        for (const path of began) assert.ok(ctx.storage.removed.includes(path), `${path} removed`)
        assert.ok(Array.isArray(outcome.storageErrors))
      } else {
        assert.deepEqual(ctx.storage.removed, [])
      }
      const paused = ctx.calls.filter((c) => c === 'pause').length
      if (paused > 0) assert.equal(ctx.calls.at(-1), 'resume', 'the source is not left paused')
      assert.equal(ctx.engine.upload, null)
      assert.equal(ctx.engine.files.valve.source, null)
      assert.equal(ctx.engine.files.turns.waiting.length, 0)
      assert.equal(ctx.engine.files.flowing.size, 0)
      assert.equal(ctx.engine.ending.outcome, null)
    })
  }
}

test('refused up front: ENDED at once, start() answers with the error, the adapter hears nothing', () => {
  const ctx = open()
  const err = ctx.engine.refuse(new Error('refused'))
  assert.equal(err.message, 'refused')
  assert.equal(ctx.engine.ending.state, ENDED)
  ctx.engine.abort()
  ctx.write('anything', true)
  assert.deepEqual(ctx.outcomes, [])
})

test('an engine that never calls back: the grace runs out, the error goes out, its file is removed when it does', async () => {
  const ctx = open()
  ctx.write(filePart('a') + 'x'.repeat(100))
  ctx.engine.abort()
  assert.equal(ctx.engine.ending.state, FAILING)
  await sleep(5200)
  assert.equal(ctx.outcomes.length, 1)
  assert.equal(ctx.outcomes[0].code, 'ECONNABORTED')
  assert.deepEqual(ctx.storage.removed, [])
  ctx.storage.answerNext(null)
  assert.deepEqual(ctx.storage.removed, ['/held/a'])
  assert.equal(ctx.outcomes.length, 1)
})

test('a removal that throws is one of the error\'s storageErrors, not a second outcome', async () => {
  const ctx = open()
  ctx.storage._removeFile = () => { throw new Error('cannot remove') }
  ctx.write(filePart('a') + 'x'.repeat(100))
  ctx.engine.abort()
  ctx.storage.answerNext(null)
  await ticks()
  assert.equal(ctx.outcomes.length, 1)
  assert.equal(ctx.outcomes[0].code, 'ECONNABORTED')
  assert.deepEqual(ctx.outcomes[0].storageErrors.map((e) => [e.message, e.field]), [['cannot remove', 'f']])
})

test('a filter that answers after the failure: its file is dropped, still one error', async () => {
  const ctx = open()
  let answer = null
  ctx.engine.files.fileFilter = (file, cb) => { answer = cb }
  ctx.write(filePart('a') + 'x'.repeat(100))
  ctx.engine.abort()
  assert.equal(ctx.engine.ending.state, FAILING)
  answer(null, true)
  await ticks()
  assert.equal(ctx.outcomes.length, 1)
  assert.equal(ctx.outcomes[0].code, 'ECONNABORTED')
  assert.deepEqual(ctx.storage.handled, [])
})

// The same failures over the wire: readMultipart on a real uWS server, the form sent in
// chunks (chunked: a declared length over the limit would be refused before reading).
const net = require('node:net')
const uWS = require('uWebSockets.js')
const { readMultipart } = require('..')

const WIRE_TIMEOUT = 600
const requests = new Map()
let server = null

test.before(() => new Promise((resolve, reject) => {
  const app = uWS.App()
  app.post('/form', (res, req) => {
    const ctx = requests.get(req.getHeader('x-id'))
    readMultipart(res, req, { storage: ctx.storage, limit: LIMIT, timeout: ctx.timeout, highWaterMark: 16 }).then(() => {
      ctx.outcomes.push('done')
      if (!res.aborted) res.cork(() => res.end('done'))
    }, (err) => {
      ctx.outcomes.push(err)
      if (!res.aborted) res.cork(() => res.writeStatus(`${err.status || 500} Error`).end(String(err.code)))
    })
  })
  app.listen('127.0.0.1', 0, (token) => {
    if (!token) return reject(new Error('uWS could not listen'))
    server = { port: uWS.us_socket_local_port(token), close: () => uWS.us_listen_socket_close(token) }
    resolve()
  })
}))
test.after(() => server.close())

let nextId = 0
function wire ({ timeout = 0 } = {}) {
  const id = String(++nextId)
  const ctx = { storage: heldStorage(), outcomes: [], timeout, answer: '' }
  requests.set(id, ctx)
  const socket = net.connect(server.port, '127.0.0.1')
  socket.on('data', (d) => { ctx.answer += d.toString('latin1') })
  socket.on('error', () => {})
  socket.write(`POST /form HTTP/1.1\r\nHost: x\r\nx-id: ${id}\r\nContent-Type: ${CONTENT_TYPE}\r\nTransfer-Encoding: chunked\r\n\r\n`)
  ctx.socket = socket
  ctx.send = (text) => socket.write(`${Buffer.byteLength(text, 'latin1').toString(16)}\r\n${text}\r\n`, 'latin1')
  ctx.ended = false
  ctx.end = () => {
    ctx.ended = true
    socket.write('0\r\n\r\n')
  }
  return ctx
}

async function until (check, what) {
  for (let i = 0; i < 400 && !check(); i++) await sleep(5)
  assert.ok(check(), what)
}

const WIRE_STATES = {
  [READING]: async (ctx) => {
    ctx.send(filePart('a') + 'x'.repeat(100))
    await until(() => ctx.storage.handled.length === 1, 'the file reached its engine')
  },
  [STORING]: async (ctx) => {
    let body = filePart('a0') + 'x'.repeat(10)
    for (let i = 1; i < 9; i++) body += nextPart(`a${i}`) + 'x'.repeat(10)
    ctx.send(body + END)
    ctx.end()
    await until(() => ctx.storage.handled.length === 8, 'eight files with their engines')
    await sleep(20)
  }
}

const WIRE_FAILURES = {
  'client abort': { hit: (ctx) => ctx.socket.destroy(), code: 'ECONNABORTED' },
  limit: { hit: (ctx) => ctx.send('z'.repeat(LIMIT + 1)), code: 'ERR_BODY_TOO_LARGE', status: 413, reading: true },
  'parse error': { hit: (ctx) => ctx.end(), code: 'ERR_MULTIPART_TRUNCATED', status: 400, reading: true },
  'storage error at once': {
    hit: async (ctx) => {
      ctx.storage.throwNext = true
      if (ctx.storage.handled.length === 8) ctx.storage.answerNext(null)
      else ctx.send(nextPart('b') + 'y')
      await until(() => ctx.storage.thrown === 1, 'the engine threw')
      ctx.storage.throwNext = false
    },
    message: 'storage error at once',
    status: 500
  },
  'storage error later': { hit: (ctx) => ctx.storage.answerNext(new Error('storage error later')), message: 'storage error later', status: 500 },
  timeout: { hit: () => sleep(WIRE_TIMEOUT + 100), code: 'ERR_BODY_TIMEOUT', status: 408, timeout: true }
}

for (const [state, reach] of Object.entries(WIRE_STATES)) {
  for (const [name, failure] of Object.entries(WIRE_FAILURES)) {
    // Once the body has ended, nothing more of it can arrive.
    if (failure.reading && state !== READING) continue
    test(`over uWS: ${name} in ${state}`, async () => {
      const ctx = wire({ timeout: failure.timeout ? WIRE_TIMEOUT : 0 })
      await reach(ctx)
      assert.deepEqual(ctx.outcomes, [], 'nothing settled before the failure')
      await failure.hit(ctx)
      await sleep(30)
      // The rest of the body is dropped before the error goes out (lib/refusal/refusal.js), and
      // what the engines hold is answered: it goes out once they have.
      if (!ctx.ended && !ctx.socket.destroyed) ctx.end()
      ctx.storage.answerAll()
      await until(() => ctx.outcomes.length > 0, 'an outcome')
      ctx.storage.answerAll()
      await sleep(30)
      assert.equal(ctx.outcomes.length, 1, 'one outcome for the request')
      const err = ctx.outcomes[0]
      if (failure.code !== undefined) assert.equal(err.code, failure.code)
      else assert.equal(err.message, failure.message)
      for (const entry of ctx.storage.handled) assert.ok(ctx.storage.removed.includes(entry.file.path), `${entry.file.path} removed`)
      if (failure.status !== undefined) {
        await until(() => ctx.answer.includes('\r\n\r\n'), 'an answer')
        assert.match(ctx.answer, new RegExp(`^HTTP/1.1 ${failure.status} `))
      }
      ctx.socket.destroy()
    })
  }
}

test('over uWS: after all of them, a form is read whole', async () => {
  const ctx = wire()
  ctx.send(filePart('a') + 'x'.repeat(10) + END)
  ctx.end()
  await until(() => ctx.storage.handled.length === 1, 'the file reached its engine')
  ctx.storage.answerAll()
  await until(() => ctx.outcomes.length > 0, 'an outcome')
  assert.deepEqual(ctx.outcomes, ['done'])
  await until(() => ctx.answer.endsWith('done'), 'the answer')
  ctx.socket.destroy()
})

test('over uWS: an engine that calls back before its file ended does not hold the client', async () => {
  // highWaterMark 16: more than 8 x 16 bytes of files with their engines, not stored yet,
  // pause the client (lib/multipart/turns.js). A file whose engine has already called
  // back is stored, and its bytes must not count there.
  const ctx = wire()
  try {
    await stalledBefore(ctx)
  } finally {
    ctx.socket.destroy()
  }
})

async function stalledBefore (ctx) {
  ctx.send(filePart('a') + 'x'.repeat(400))
  await until(() => ctx.storage.handled.length === 1, 'the file reached its engine')
  ctx.storage.answerNext(null)
  await sleep(20)
  ctx.send(nextPart('b') + 'y')
  await until(() => ctx.storage.handled.length === 2, 'the second file reached its engine')
  await sleep(20)
  ctx.send(END)
  ctx.end()
  await sleep(50)
  ctx.storage.answerAll()
  await until(() => ctx.outcomes.length > 0, 'an outcome: the rest of the form was read')
  assert.deepEqual(ctx.outcomes, ['done'])
}
