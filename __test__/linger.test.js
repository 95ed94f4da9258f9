'use strict'
// lib/plan/linger.js and lib/refusal/'s pieces: the `linger` option, answerError's answers (their status,
// headers and body, at once and past the bound) over a real uWS server, and the
// program's mistakes. What reaches clients that are still sending is in
// early-answer.test.js.
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const uWS = require('uWebSockets.js')
const { readBody, answerError, BodyError, MulterError } = require('..')
const { parseLinger, LINGER_BYTES, LINGER_TIMEOUT, LINGER_IDLE } = require('../lib/plan/linger')
const { Drain } = require('../lib/refusal/drain')
const { parseOne } = require('./helpers/early-clients')

test('the linger option: defaults, false, bytes as a number or a string, and the program\'s mistakes as TypeErrors', () => {
  assert.deepEqual(parseLinger(undefined), { bytes: LINGER_BYTES, timeout: LINGER_TIMEOUT, idle: LINGER_IDLE, errorAtOnce: false })
  assert.deepEqual(parseLinger(null), { bytes: 64 * 1024 * 1024, timeout: 10000, idle: 1000, errorAtOnce: false })
  assert.deepEqual(parseLinger(false), { bytes: 0, timeout: 0, idle: 0, errorAtOnce: false })
  assert.deepEqual(parseLinger({ bytes: '4mb' }), { bytes: 4 * 1024 * 1024, timeout: 10000, idle: 1000, errorAtOnce: false })
  assert.deepEqual(parseLinger({ bytes: 0, timeout: 0 }), { bytes: 0, timeout: 0, idle: 1000, errorAtOnce: false })
  assert.deepEqual(parseLinger({ timeout: 2500, idle: 400 }), { bytes: LINGER_BYTES, timeout: 2500, idle: 400, errorAtOnce: false })
  for (const bad of [true, 'yes', 5, { bytes: ' 10kb ' }, { bytes: {} }, { timeout: Infinity }, { timeout: -1 }, { timeout: '10s' }, { timeout: 2 ** 31 }, { idle: -1 }, { idle: '1s' }, { idle: Infinity }]) {
    assert.throws(() => parseLinger(bad), TypeError, JSON.stringify(bad))
  }
  // Where the APIs take it.
  assert.throws(() => readBody({ onData () {}, onAborted () {} }, {}, { linger: true }), /linger must be false or/)
  assert.throws(() => require('..').json({ linger: { timeout: Infinity } }), /cannot be waited for forever/)
})

test('a Drain counts what comes, ends at the last chunk, a byte bound, a time bound or an abort, once', async () => {
  const outcomes = []
  const d = new Drain({ bytes: 10, timeout: 10000, idle: 10000 }, -1, (o) => outcomes.push(o))
  d.chunk(new ArrayBuffer(4), false)
  d.chunk(new Uint8Array(6), false)
  assert.equal(d.outcome, null)
  d.chunk(new ArrayBuffer(1), false)
  assert.deepEqual(outcomes, ['bound'])
  d.chunk(new ArrayBuffer(1), true)
  d.abort()
  assert.deepEqual(outcomes, ['bound'])
  assert.equal(d.dropped, 11)

  const ended = new Drain({ bytes: 10, timeout: 10000, idle: 10000 }, 3, (o) => outcomes.push(o))
  ended.chunk(new ArrayBuffer(3), true)
  const aborted = new Drain({ bytes: 10, timeout: 10000, idle: 10000 }, -1, (o) => outcomes.push(o))
  aborted.abort()
  // Values with no byteLength (or a throwing one) count as nothing.
  const odd = new Drain({ bytes: 10, timeout: 10000, idle: 10000 }, -1, (o) => outcomes.push(o))
  const buffer = new ArrayBuffer(8)
  const view = new DataView(buffer)
  structuredClone(buffer, { transfer: [buffer] }) // its getters now throw
  for (const v of [null, 'text', 42, {}, view]) odd.chunk(v, false)
  assert.equal(odd.dropped, 0)
  odd.abort()
  assert.deepEqual(outcomes, ['bound', 'ended', 'aborted', 'aborted'])

  // A declared rest over the byte bound, or no time at all, is past the bound at once
  // (on the next tick, never from the constructor).
  const past = []
  const over = new Drain({ bytes: 10, timeout: 10000, idle: 10000 }, 11, (o) => past.push(['over', o]))
  const none = new Drain({ bytes: 0, timeout: 0, idle: 0 }, -1, (o) => past.push(['none', o]))
  assert.deepEqual(past, [])
  await new Promise((resolve) => process.nextTick(resolve))
  assert.deepEqual(past, [['over', 'bound'], ['none', 'bound']])
  assert.equal(over.outcome, 'bound')
  assert.equal(none.outcome, 'bound')

  // The drain's timer is unref'd (a refused body never keeps a process alive): this one
  // keeps the test's.
  const alive = setTimeout(() => {}, 5000)
  const timed = await new Promise((resolve) => {
    const started = Date.now()
    const t = new Drain({ bytes: 10, timeout: 50, idle: 1000 }, -1, (o) => resolve([o, Date.now() - started]))
    t.chunk(new ArrayBuffer(1), false)
  })
  assert.equal(timed[0], 'bound')
  assert.ok(timed[1] >= 45, `the time bound after ${timed[1]} ms`)
  // The idle bound: bytes every 30 ms hold it off; 80 ms without any end it.
  const idle = await new Promise((resolve) => {
    const started = Date.now()
    const d = new Drain({ bytes: 1000, timeout: 5000, idle: 80 }, -1, (o) => resolve([o, Date.now() - started]))
    const every = setInterval(() => d.chunk(new ArrayBuffer(1), false), 30)
    setTimeout(() => clearInterval(every), 200)
  })
  clearTimeout(alive)
  assert.equal(idle[0], 'bound')
  assert.ok(idle[1] >= 250 && idle[1] < 1000, `the idle bound after ${idle[1]} ms (the last byte at ~180-210)`)
})

/**
 * One request on a raw socket; resolves with the parsed answer (or { closed: true }).
 * `later`: more of it, written 150 ms after the rest.
 */
function exchange (port, request, later = null) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let got = Buffer.alloc(0)
    socket.on('data', (d) => {
      got = Buffer.concat([got, d])
      const r = parseOne(got)
      if (r !== null) {
        socket.destroy()
        resolve({ ...r, raw: got.toString('latin1') })
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve({ closed: true, raw: got.toString('latin1') }))
    socket.on('connect', () => {
      socket.write(request)
      if (later !== null) setTimeout(() => socket.write(later), 150)
    })
  })
}

function post (path, body, headers = '') {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n${headers}\r\n${body}`
}

test('answerError\'s answers: status, JSON body with the stable code, nothing internal leaked, your own body and headers; past the bound a closing answer (Connection: close), its body exactly as written', async (t) => {
  const errors = {
    '/body': new BodyError('request entity too large', { status: 413, code: 'ERR_BODY_TOO_LARGE', type: 'entity.too.large' }),
    '/multer': new MulterError('LIMIT_FILE_SIZE', 'avatar'),
    '/internal': Object.assign(new Error('ENOSPC: no space left on device, write /var/secret/path'), { code: 'ENOSPC' }),
    '/hidden': Object.assign(new Error('not for you'), { status: 404, expose: false, code: 'SECRET' }),
    '/weird': Object.assign(new Error('x'), { status: 299, code: 'bad code with spaces' }),
    '/thrown': 'a string was thrown'
  }
  const app = uWS.App()
  for (const [path, error] of Object.entries(errors)) {
    app.post(path, (res, req) => {
      readBody(res, req).then(() => answerError(res, error), (err) => answerError(res, err))
    })
  }
  app.post('/custom', (res, req) => {
    readBody(res, req).then(() => answerError(res, errors['/body'], { body: 'too big, sorry', headers: { 'retry-after': 30 } }))
  })
  app.post('/buffer', (res, req) => {
    readBody(res, req).then(() => answerError(res, errors['/body'], { body: Buffer.from('{"e":1}'), contentType: 'application/problem+json' }))
  })
  app.post('/refused', (res, req) => {
    readBody(res, req, { limit: 4, linger: false }).catch((err) => answerError(res, err))
  })
  const mistakes = []
  app.post('/mistakes', (res, req) => {
    readBody(res, req).then(() => {
      // Types are the program's mistakes (a header it cannot send is left out: below).
      for (const bad of [[{}, errors['/body']], [res, errors['/body'], 5], [res, errors['/body'], { body: 5 }], [res, errors['/body'], { headers: 'x' }], [res, errors['/body'], { nope: 1 }]]) {
        try {
          answerError(...bad)
          mistakes.push('no throw')
        } catch (err) {
          mistakes.push(err instanceof TypeError ? 'TypeError' : err.message)
        }
      }
      res.cork(() => res.end('after the mistakes'))
    })
  })
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve(uWS.us_socket_local_port(token))))
  const json = (r) => JSON.parse(r.body)
  try {
    const body = await exchange(port, post('/body', 'abc'))
    assert.equal(body.status, 413)
    assert.match(body.raw, /^HTTP\/1\.1 413 Payload Too Large\r\n/)
    assert.equal(body.headers['content-type'], 'application/json; charset=utf-8')
    assert.deepEqual(json(body), { status: 413, code: 'ERR_BODY_TOO_LARGE', message: 'request entity too large' })
    assert.equal(body.headers.connection, undefined, 'a body that ended keeps its connection')

    assert.deepEqual(json(await exchange(port, post('/multer', 'abc'))), { status: 413, code: 'LIMIT_FILE_SIZE', message: 'File too large' })
    const internal = await exchange(port, post('/internal', 'abc'))
    assert.equal(internal.status, 500)
    assert.deepEqual(json(internal), { status: 500, code: 'ERR_INTERNAL', message: 'Internal Server Error' })
    assert.deepEqual(json(await exchange(port, post('/hidden', 'abc'))), { status: 404, message: 'Not Found' })
    assert.deepEqual(json(await exchange(port, post('/weird', 'abc'))), { status: 500, code: 'ERR_INTERNAL', message: 'Internal Server Error' })
    assert.deepEqual(json(await exchange(port, post('/thrown', 'abc'))), { status: 500, code: 'ERR_INTERNAL', message: 'Internal Server Error' })

    const custom = await exchange(port, post('/custom', 'abc'))
    assert.equal(custom.body, 'too big, sorry')
    assert.equal(custom.headers['content-type'], 'text/plain; charset=utf-8')
    assert.equal(custom.headers['retry-after'], '30')
    const buffer = await exchange(port, post('/buffer', 'abc'))
    assert.equal(buffer.body, '{"e":1}')
    assert.equal(buffer.headers['content-type'], 'application/problem+json')

    // linger: false: the closing answer, written whole through writeStatus.
    const refused = await exchange(port, post('/refused', 'too long a body'))
    t.diagnostic(JSON.stringify(refused.raw))
    assert.equal(refused.status, 413)
    assert.equal(refused.headers.connection, 'close')
    // Framed as uWS frames end(body): its length and Date (held-framing.test.js has every call).
    assert.equal(refused.headers['transfer-encoding'], undefined)
    assert.equal(refused.headers['content-length'], String(refused.body.length))
    assert.match(refused.headers.date, / GMT$/)
    assert.equal(refused.body, '{"status":413,"code":"ERR_BODY_TOO_LARGE","message":"request entity too large"}')

    const after = await exchange(port, post('/mistakes', 'abc'))
    assert.equal(after.body, 'after the mistakes')
    assert.deepEqual(mistakes, Array(5).fill('TypeError'))
  } finally {
    app.close()
  }
})

test('answerError does nothing once res.aborted is set, and an answer written by hand while the rest is dropped goes out as written', async () => {
  const app = uWS.App()
  let calls = 0
  app.post('/aborted', (res, req) => {
    readBody(res, req).then(() => {
      res.aborted = true
      answerError(res, new Error('x'))
      calls++
      res.aborted = false
      res.cork(() => res.end('answered by hand'))
    })
  })
  // Refused mid-body past the time bound (100 ms), answered by hand: a closing answer.
  app.post('/by-hand', (res, req) => {
    readBody(res, req, { limit: 4, linger: { bytes: '1mb', timeout: 100 } }).catch((err) => {
      res.cork(() => res.writeStatus(`${err.status} Error`).end('by hand'))
      calls++
    })
  })
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve(uWS.us_socket_local_port(token))))
  try {
    assert.equal((await exchange(port, post('/aborted', 'abc'))).body, 'answered by hand')
    const byHand = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      let got = ''
      socket.on('data', (d) => { got += d })
      socket.on('close', () => resolve(got))
      socket.on('connect', () => {
        socket.write('POST /by-hand HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789')
        // Past the drain's 100 ms: its timer must not throw at a response already answered.
        setTimeout(() => socket.end(), 300)
      })
    })
    assert.match(byHand, /^HTTP\/1\.1 413 Error\r\n/)
    assert.equal(parseOne(Buffer.from(byHand, 'latin1')).body, 'by hand')
    assert.equal(calls, 2)
  } finally {
    app.close()
  }
})

// Every code point whose low byte is CR, LF or NUL: a writer that keeps only the low byte
// of each character (latin1) turns them into a line break in the answer's head.
function splitters () {
  const out = []
  for (let hi = 0; hi <= 0x10ff; hi++) {
    for (const lo of [0x0a, 0x0d, 0x00]) out.push((hi << 8) | lo)
  }
  return out
}

test('answerError leaves out a header it cannot write as sent, on every answer path, and warns once per name: every code point whose low byte is CR, LF or NUL, and anything outside visible ASCII', { timeout: 20000 }, async () => {
  const err = new BodyError('request entity too large', { status: 413, code: 'ERR_BODY_TOO_LARGE', type: 'entity.too.large' })
  const values = [...splitters().map((cp) => `https://a.example${String.fromCodePoint(cp)}Set-Cookie: session=attacker`), 'caf\u00e9', '\u007f', 'a\u2028b', '\ud83d\ude00']
  const bad = Object.fromEntries(values.map((v, i) => [`x-bad-${i}`, v]))
  const warnings = []
  const onWarning = (w) => { if (w.code === 'UWS_BODY_HEADER_LEFT_OUT') warnings.push(w.message) }
  process.on('warning', onWarning)
  const app = uWS.App()
  const thrown = []
  const answer = (res, e, o) => {
    try {
      answerError(res, e, { ...o, headers: { 'access-control-allow-origin': 'https://a.example', ...bad, 'bad name': 'v', 'Content-Length': '1', 'x-tab': 'a\tb ~' } })
    } catch (caught) {
      thrown.push(caught)
    }
  }
  // The body ended: uWS's writeHeader.
  app.post('/ended', (res, req) => {
    readBody(res, req).then(() => answer(res, err))
  })
  // Refused within the bound: held until the rest is dropped, then writeHeader.
  app.post('/drained', (res, req) => {
    readBody(res, req, { limit: 4 }).catch((e) => answer(res, e))
  })
  // Refused past the bound: the closing answer, written whole through writeStatus.
  app.post('/bound', (res, req) => {
    readBody(res, req, { limit: 4, linger: false }).catch((e) => answer(res, e))
  })
  // A body the application reads itself, refused before its end.
  app.post('/own', (res, req) => {
    res.onAborted(() => {})
    answer(res, err, { bodyEnded: false, linger: false })
  })
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve(uWS.us_socket_local_port(token))))
  try {
    for (const path of ['/ended', '/drained', '/bound', '/own']) {
      const r = await exchange(port, post(path, 'too long a body'))
      const name = path.slice(1)
      assert.equal(r.status, 413, `${name}: ${JSON.stringify(r.raw)}`)
      assert.doesNotMatch(r.raw, /set-cookie|x-bad|bad name|caf/i, name)
      assert.equal(r.headers['access-control-allow-origin'], 'https://a.example', name)
      assert.equal(r.headers['x-tab'], 'a\tb ~', name)
      assert.deepEqual(JSON.parse(r.body), { status: 413, code: 'ERR_BODY_TOO_LARGE', message: 'request entity too large' }, name)
    }
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(thrown, [])
    // Once per name, however many answers left it out, up to a bound (64 names).
    assert.equal(warnings.length, 64)
    assert.equal(new Set(warnings).size, 64)
    assert.match(warnings[0], /left out the header "x-bad-0"/)
  } finally {
    process.removeListener('warning', onWarning)
    app.close()
  }
})

test('answerError on a response already answered does nothing: after the application\'s own answer, a second answerError, within the bound and after it', { timeout: 20000 }, async () => {
  const err = new BodyError('request entity too large', { status: 413, code: 'ERR_BODY_TOO_LARGE', type: 'entity.too.large' })
  const app = uWS.App()
  const thrown = []
  const guard = (fn) => { try { fn() } catch (e) { thrown.push(e) } }
  // The body ended: the application answered, then answerError (twice).
  app.post('/answered', (res, req) => {
    readBody(res, req).then(() => {
      res.cork(() => res.writeStatus('418 Teapot').end('mine'))
      guard(() => answerError(res, err))
      guard(() => answerError(res, err))
    })
  })
  app.post('/twice', (res, req) => {
    readBody(res, req).then(() => {
      guard(() => answerError(res, err))
      guard(() => answerError(res, new Error('second')))
    })
  })
  // Refused, within the bound: its own 413, then answerError; the rest comes later.
  app.post('/held', (res, req) => {
    readBody(res, req, { limit: 4, linger: { errorAtOnce: true } }).catch((e) => {
      res.cork(() => res.writeStatus('413 Payload Too Large').end('my own 413'))
      guard(() => answerError(res, e))
    })
  })
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve(uWS.us_socket_local_port(token))))
  try {
    const answered = await exchange(port, post('/answered', 'abc'))
    assert.equal(answered.status, 418)
    assert.equal(answered.body, 'mine')
    const twice = await exchange(port, post('/twice', 'abc'))
    assert.equal(twice.status, 413)
    assert.equal(JSON.parse(twice.body).code, 'ERR_BODY_TOO_LARGE')
    const held = await exchange(port, 'POST /held HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n0123456789', '0123456789')
    assert.equal(held.status, 413)
    assert.equal(held.body, 'my own 413')
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(thrown.map(String), [])
  } finally {
    app.close()
  }
})

test('the error reaches the application once the rest is dropped: at the body\'s end, at the time bound, or at once with errorAtOnce; the answer then goes out whatever wrote it', async () => {
  const app = uWS.App()
  const waited = {}
  for (const [name, linger] of [['/bound', { timeout: 300 }], ['/end', { timeout: 5000 }], ['/once', { timeout: 300, errorAtOnce: true }]]) {
    app.post(name, (res, req) => {
      const started = Date.now()
      readBody(res, req, { limit: 4, linger }).catch((err) => {
        waited[name] = Date.now() - started
        res.cork(() => res.writeStatus('413 Payload Too Large').end(err.code))
      })
    })
  }
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve(uWS.us_socket_local_port(token))))
  // 10 of 100 declared bytes at once; the rest 150 ms later, or never.
  const send = (path, rest) => exchange(port, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789`, rest ? 'x'.repeat(90) : null)
  try {
    const bound = await send('/bound', false)
    assert.equal(bound.status, 413)
    assert.equal(bound.body, 'ERR_BODY_TOO_LARGE')
    assert.equal(bound.headers.connection, 'close')
    assert.ok(waited['/bound'] >= 280 && waited['/bound'] < 1500, `rejected ${waited['/bound']} ms after the refusal, the time bound 300`)
    const end = await send('/end', true)
    assert.equal(end.body, 'ERR_BODY_TOO_LARGE')
    assert.equal(end.headers.connection, undefined, 'a body that ended keeps its connection')
    assert.ok(waited['/end'] >= 140 && waited['/end'] < 1500, `rejected ${waited['/end']} ms after the refusal, the rest sent after 150`)
    const once = await send('/once', false)
    assert.equal(once.body, 'ERR_BODY_TOO_LARGE')
    assert.ok(waited['/once'] < 100, `rejected ${waited['/once']} ms after the refusal`)
  } finally {
    app.close()
  }
})

/**
 * Declares `declared` bytes, sends `sent` and then nothing (half-closing after
 * `halfCloseAfter` ms if given); resolves with the answer and when it came.
 */
function stall (port, path, declared, sent, halfCloseAfter = null) {
  return new Promise((resolve) => {
    const started = Date.now()
    const socket = net.connect(port, '127.0.0.1')
    let got = Buffer.alloc(0)
    let answer = null
    socket.on('data', (d) => {
      got = Buffer.concat([got, d])
      if (answer === null) {
        const r = parseOne(got)
        if (r !== null) {
          answer = { ...r, ms: Date.now() - started }
          if (halfCloseAfter === null) socket.destroy()
        }
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve(answer || { closed: true, ms: Date.now() - started }))
    socket.on('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`)
      socket.write(Buffer.alloc(sent, 0x61))
      if (halfCloseAfter !== null) setTimeout(() => socket.end(), halfCloseAfter)
    })
    // Bounded: the default time bound is 10 s.
    setTimeout(() => socket.destroy(), 15000).unref()
  })
}

test('a client that stops sending after a refusal gets its answer once it is idle for linger.idle, not at linger.timeout: a closing answer, and the error reaches the application then', async (t) => {
  const app = uWS.App()
  const rejected = {}
  const route = (path, read) => app.post(path, (res, req) => {
    const started = Date.now()
    read(res, req).catch((err) => {
      rejected[path] = Date.now() - started
      answerError(res, err)
    })
  })
  route('/limit', (res, req) => readBody(res, req, { limit: '1mb' }))
  // A headers object for req: 100 of 5,000 declared bytes, refused by a 50-byte limit.
  route('/headers', (res, req) => readBody(res, { 'content-length': req.getHeader('content-length') }, { limit: 50 }))
  route('/idle', (res, req) => readBody(res, req, { limit: 50, linger: { idle: 300 } }))
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve(uWS.us_socket_local_port(token))))
  try {
    const limit = await stall(port, '/limit', 2 * 1024 * 1024, 64 * 1024)
    t.diagnostic(`2 MiB declared to a 1 MiB limit, 64 KiB sent: ${JSON.stringify({ status: limit.status, ms: limit.ms, connection: limit.headers?.connection })}`)
    assert.equal(limit.status, 413)
    assert.equal(JSON.parse(limit.body).code, 'ERR_BODY_TOO_LARGE')
    assert.equal(limit.headers.connection, 'close')
    assert.ok(limit.ms >= 900 && limit.ms < 3000, `answered after ${limit.ms} ms (idle bound 1000, time bound 10000)`)
    assert.ok(rejected['/limit'] >= 900 && rejected['/limit'] < 3000, `rejected after ${rejected['/limit']} ms`)

    const headers = await stall(port, '/headers', 5000, 100)
    assert.equal(headers.status, 413)
    assert.ok(headers.ms < 3000, `answered after ${headers.ms} ms`)

    const idle = await stall(port, '/idle', 5000, 100)
    assert.equal(idle.status, 413)
    assert.ok(idle.ms >= 250 && idle.ms < 1500, `linger.idle 300: answered after ${idle.ms} ms`)
  } finally {
    app.close()
  }
})
