'use strict'
// The answer to a refused body, held until its rest is dropped (lib/refusal/held-answer.js), goes
// out framed as uWS frames the same calls: on every path (the body drained to its end, a
// linger bound passed, linger: false, the client gone), on bare uWS and under
// ultimate-express. Read on a raw socket: the whole answer's bytes against uWS's own answer
// to the same calls (its Date's value aside), then what the connection does after it.
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const uWS = require('uWebSockets.js')
const { readBody, answerError, json, BodyError } = require('..')
const { GRACE_MS } = require('../lib/refusal/refusal')

const TOO_LARGE = new BodyError('request entity too large', { status: 413, code: 'ERR_BODY_TOO_LARGE', type: 'entity.too.large' })
const S413 = '413 Payload Too Large'
const later = (fn) => setTimeout(fn, 50)

// Answers as a handler writes them on a uWS response: `rest` is written 50 ms later (the
// body may have ended meanwhile, or the bound passed).
const SCRIPTS = {
  statusEnd: { now: (res) => res.writeStatus(S413).writeHeader('x-a', '1').end('mine') },
  endClose: { now: (res) => res.writeStatus(S413).end('mine', true), after: 'close' },
  answerError: { now: (res, err) => answerError(res, err) },
  endEmpty: { now: (res) => res.writeStatus(S413).end() },
  bytes: { now: (res) => res.writeStatus(Buffer.from(S413)).writeHeader(new Uint8Array([0x78]), 'y').end(new Uint8Array([0xff, 0x00, 0x0d])) },
  writeEnd: { now: (res) => { res.writeStatus(S413).write('mi'); res.write(''); res.end('ne') } },
  tryEnd: { now: (res) => { res.writeStatus(S413).tryEnd('mi', 4); res.tryEnd('ne', 4) } },
  ewbNone: { now: (res) => res.writeStatus(S413).endWithoutBody() },
  ewbLength: { now: (res) => res.writeStatus(S413).endWithoutBody(4), after: 'pending' },
  // uWS writes the first status only, and a header before any status makes it 200.
  twoStatus: { now: (res) => res.writeStatus(S413).writeStatus('500 Other').end('mine') },
  headerFirst: { now: (res) => res.writeHeader('x-a', '1').writeStatus(S413).end('mine') },
  // Begun while held, ended later.
  writeLater: { now: (res) => res.writeStatus(S413).write('mi'), rest: (res) => res.end('ne') },
  tryEndLater: { now: (res) => res.writeStatus(S413).tryEnd('mi', 4), rest: (res) => res.tryEnd('ne', 4) }
}

// ultimate-express's own calls on uWS's response, from its Response.
const UE = {
  send: (res) => res.status(413).send('mine'),
  json: (res) => res.status(413).json({ code: 'ERR_BODY_TOO_LARGE' }),
  chunks: (res) => { res.status(413); res.write('mi'); res.end('ne') },
  // tryEnd('mi', 4), then end('ne'): uWS then still sees the answer pending.
  sized: (res) => { res.status(413).set('content-length', '4'); res.write('mi'); res.end('ne') }
}

function run (script, res, err) {
  res.cork(() => script.now(res, err))
  if (script.rest) later(() => { if (!res.aborted) res.cork(() => script.rest(res)) })
}

// How each path reads the body on bare uWS. `stall`: the client sends 64 KiB of 2 MiB and
// then nothing (past the idle bound); else it sends the whole 64 KiB it declares.
const MODES = {
  ended: { options: { limit: 1024 }, stall: false },
  endedHeld: { options: { limit: 1024, linger: { errorAtOnce: true } }, stall: false },
  bound: { options: { limit: 1024, linger: { idle: 200 } }, stall: true },
  boundHeld: { options: { limit: 1024, linger: { idle: 200, errorAtOnce: true } }, stall: true },
  none: { options: { limit: 1024, linger: false }, stall: true }
}
const UE_MODES = {
  ended: { options: { limit: 1024 }, stall: false },
  endedHeld: { options: { limit: 1024, linger: { errorAtOnce: true } }, stall: false },
  bound: { options: { limit: 1024, linger: { idle: 200 } }, stall: true },
  none: { options: { limit: 1024, linger: false }, stall: true }
}

const aborted = []

function startUws () {
  const app = uWS.App()
  app.get('/control/:script', (res, req) => {
    const script = SCRIPTS[req.getParameter(0)]
    res.onAborted(() => { res.aborted = true })
    run(script, res, TOO_LARGE)
  })
  app.post('/next', (res) => res.end('next'))
  app.get('/next', (res) => res.end('next'))
  for (const [mode, { options }] of Object.entries(MODES)) {
    app.post(`/${mode}/:script`, (res, req) => {
      const script = SCRIPTS[req.getParameter(0)]
      readBody(res, req, options).catch((err) => run(script, res, err))
    })
  }
  // The client goes away while the answer is held: nothing of it stays on the response.
  app.post('/aborted', (res, req) => {
    readBody(res, req, { limit: 1024, linger: { errorAtOnce: true } }).catch(() => {
      if (!res.aborted) res.cork(() => res.writeStatus(S413).write('mi'))
      const check = () => {
        if (!res.aborted) return setTimeout(check, 10)
        aborted.push(['writeStatus', 'writeHeader', 'write', 'end', 'endWithoutBody', 'tryEnd', 'getWriteOffset'].filter((name) => Object.hasOwn(res, name)))
      }
      check()
    })
  })
  return new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve({ port: uWS.us_socket_local_port(token), close: () => app.close() })))
}

function startUltimate () {
  // Required here: loading ultimate-express switches uWS's `uWebSockets: 20` header off
  // for the whole process, and the bare uWS test runs first, with it.
  const app = require('ultimate-express')()
  app.get('/control/:script', (req, res) => UE[req.params.script](res))
  app.get('/next', (req, res) => res.send('next'))
  for (const [mode, { options }] of Object.entries(UE_MODES)) {
    app.post(`/${mode}/:script`, json(options), (req, res) => res.send('accepted'))
  }
  app.use((err, req, res, next) => UE[req.path.split('/').pop()](res, err))
  return new Promise((resolve) => app.listen(0, '127.0.0.1', () => resolve({ port: app.port, close: () => app.close() })))
}

/**
 * One conversation on a raw socket: `request` (head and body, as bytes) written at once,
 * then `after` 300 ms after the first byte of the answer (its last part is written 50 ms
 * after its first). Resolves with every byte received, and
 * whether the server closed the connection (and when, from the first byte received), or
 * the client stopped waiting `quiet` ms after the last byte.
 */
function converse (port, request, { after = null, quiet = 400, abort = false } = {}) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let got = Buffer.alloc(0)
    let firstAt = null
    let timer = null
    let done = false
    const finish = (closed) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ raw: got, closed, closedAfter: closed && firstAt !== null ? Date.now() - firstAt : null })
    }
    // Quiet from the first byte on; before it, up to 3 s (a loaded machine).
    const idle = () => {
      clearTimeout(timer)
      if (quiet !== Infinity) timer = setTimeout(() => finish(false), firstAt === null ? 3000 : quiet)
    }
    socket.on('data', (d) => {
      if (firstAt === null) {
        firstAt = Date.now()
        if (after !== null) setTimeout(() => { if (!done) socket.write(after) }, 300)
      }
      got = Buffer.concat([got, d])
      idle()
    })
    socket.on('error', () => {})
    socket.on('end', () => finish(true))
    socket.on('close', () => finish(true))
    socket.on('connect', () => {
      socket.write(request)
      if (abort) setTimeout(() => finish(false), 100)
    })
    // Bounded: the slowest path answers within a second and closes GRACE_MS later.
    setTimeout(() => finish(false), GRACE_MS + 4000).unref()
    idle()
  })
}

const KIB64 = 64 * 1024
function post (path, declared, sent) {
  return Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`), Buffer.alloc(sent, 0x20)])
}

const DATE = /\r\nDate: (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT\r\n/g

/** The bytes as latin1 text, the value of each Date header as uWS writes it masked. */
function masked (raw) {
  return raw.toString('latin1').replace(DATE, '\r\nDate: <date>\r\n')
}

/**
 * uWS's answer as the closing answer: its connection headers out, `Connection: close`
 * where uWS's end(body, true) writes it (after the application's headers, before Date),
 * and without uWS's `uWebSockets: 20` header (ultimate-express switches it off).
 */
function closing (control) {
  const head = control.slice(0, control.indexOf('\r\nDate: <date>\r\n') + 2)
  const kept = head.split('\r\n').filter((line) => !/^connection:/i.test(line)).join('\r\n')
  return kept + 'Connection: close\r\n' + control.slice(head.length).replace('\r\nuWebSockets: 20\r\n', '\r\n')
}

async function control (port, name) {
  const r = await converse(port, `GET /control/${name} HTTP/1.1\r\nHost: x\r\n\r\n`, { quiet: 300 })
  const text = masked(r.raw)
  assert.equal(text.split('\r\nDate: <date>\r\n').length, 2, `control ${name}: one Date header as uWS writes it: ${JSON.stringify(text)}`)
  return text
}

const NEXT = 'GET /next HTTP/1.1\r\nHost: x\r\n\r\n'

/**
 * Checks one held answer against uWS's own for the same calls. `after`: what uWS does
 * after its own answer: 'next' (keep-alive: it answers the next request), 'close'
 * (end(…, true)), 'pending' (a length written and not reached, as endWithoutBody(4): uWS
 * still sees the answer pending and answers nothing more on the connection).
 */
async function check (t, port, path, stall, expected, after) {
  const name = path
  if (!stall) {
    // The whole body: the answer as uWS's own, then the next request on the connection.
    const r = await converse(port, post(path, KIB64, KIB64), { after: after === 'next' ? NEXT : null })
    const text = masked(r.raw)
    assert.ok(text.startsWith(expected), `${name}: framed as uWS frames the same calls:\n  got      ${JSON.stringify(text)}\n  expected ${JSON.stringify(expected)}`)
    const rest = text.slice(expected.length)
    // The next answer, by its length or (ultimate-express on newer Node) chunked.
    if (after === 'next') assert.match(rest, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n(?:next|4\r\nnext\r\n0\r\n\r\n)$/, `${name}: keep-alive in step, the next request answered: ${JSON.stringify(rest)}`)
    else assert.equal(rest, '', `${name}: nothing after the answer`)
    assert.equal(r.closed, after === 'close', `${name}: ${after === 'close' ? 'closed, as end(body, true) does' : 'kept open'}`)
    return
  }
  // 64 KiB of 2 MiB, then nothing: past the bound, the closing answer, then the close.
  const r = await converse(port, post(path, 2 * 1024 * 1024, KIB64), { quiet: Infinity })
  const text = masked(r.raw)
  const want = closing(expected)
  t.diagnostic(`${name}: ${JSON.stringify(text.slice(0, 120))}`)
  assert.ok(text.startsWith(want), `${name}: framed as uWS frames the same calls, as a closing answer:\n  got      ${JSON.stringify(text)}\n  expected ${JSON.stringify(want)}`)
  // writeStatus() ends what it writes with a CRLF: after a body framed by its length,
  // that CRLF follows the answer (clients ignore it on a closing connection).
  assert.ok(['', '\r\n'].includes(text.slice(want.length)), `${name}: nothing but a CRLF after the answer: ${JSON.stringify(text.slice(want.length))}`)
  assert.equal(r.closed, true, `${name}: closed by the server`)
  assert.ok(r.closedAfter >= GRACE_MS - 300 && r.closedAfter < GRACE_MS + 1500, `${name}: closed ${r.closedAfter} ms after the answer (grace ${GRACE_MS})`)
}

test('bare uWS: every held answer goes out as uWS frames the same calls, whether the body ended, a bound passed or linger is false', { timeout: 60000 }, async (t) => {
  const server = await startUws()
  try {
    const controls = {}
    for (const name of Object.keys(SCRIPTS)) controls[name] = await control(server.port, name)
    // Content-Length where uWS writes it, chunked where it does.
    assert.match(controls.statusEnd, /\r\nContent-Length: 4\r\n\r\nmine$/)
    assert.match(controls.writeEnd, /\r\nTransfer-Encoding: chunked\r\n/)
    const checks = []
    for (const [mode, { stall }] of Object.entries(MODES)) {
      for (const name of Object.keys(SCRIPTS)) {
        // The client that stops sending reads an answer it can end: endWithoutBody()
        // without a length ends with the connection.
        checks.push(check(t, server.port, `/${mode}/${name}`, stall, controls[name], SCRIPTS[name].after || 'next').then(() => null, (err) => err))
      }
    }
    const failed = (await Promise.all(checks)).filter((e) => e !== null)
    for (const err of failed.slice(0, 8)) t.diagnostic(err.message)
    assert.equal(failed.length, 0, `${failed.length} of ${checks.length} answers framed otherwise than uWS frames them`)
  } finally {
    server.close()
  }
})

test('under ultimate-express: its answer, held on uWS\'s response, goes out as uWS frames ultimate-express\'s calls', { timeout: 60000 }, async (t) => {
  const server = await startUltimate()
  try {
    const controls = {}
    for (const name of Object.keys(UE)) controls[name] = await control(server.port, name)
    assert.match(controls.send, /\r\nContent-Length: 4\r\n\r\nmine$/)
    assert.match(controls.sized, /\r\nContent-Length: 4\r\n\r\nmine$/)
    assert.match(controls.chunks, /\r\nTransfer-Encoding: chunked\r\n/)
    const checks = []
    for (const [mode, { stall }] of Object.entries(UE_MODES)) {
      for (const name of Object.keys(UE)) checks.push(check(t, server.port, `/${mode}/${name}`, stall, controls[name], name === 'sized' ? 'pending' : 'next').then(() => null, (err) => err))
    }
    const failed = (await Promise.all(checks)).filter((e) => e !== null)
    for (const err of failed.slice(0, 8)) t.diagnostic(err.message)
    assert.equal(failed.length, 0, `${failed.length} of ${checks.length} answers framed otherwise than uWS frames them`)
  } finally {
    server.close()
  }
})

test('a client gone while its answer is held: nothing of the answer stays on the response, and the server goes on, on bare uWS and under ultimate-express', async () => {
  const server = await startUws()
  try {
    aborted.length = 0
    const r = await converse(server.port, post('/aborted', 2 * 1024 * 1024, KIB64), { abort: true })
    assert.equal(r.raw.length, 0, 'nothing was sent while the body was still coming')
    for (let i = 0; i < 100 && aborted.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.deepEqual(aborted, [[]], 'uWS\'s own methods again')
    const next = await converse(server.port, NEXT, { quiet: 200 })
    assert.match(next.raw.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nnext$/)
  } finally {
    server.close()
  }
  // Under ultimate-express: its error handler's answer is held (ultimate-express then
  // takes its response as finished, and closes its Socket: the client is not gone for
  // that), and then the client goes. ultimate-express tells nothing of an abort after
  // its answer: the refusal meets it at the idle bound, where writing fails.
  const app = require('ultimate-express')()
  const seen = []
  app.post('/aborted', json({ limit: 1024, linger: { errorAtOnce: true, idle: 200 } }), (req, res) => res.send('accepted'))
  app.use((err, req, res, next) => {
    res.status(413).send(err.code)
    seen.push(Object.hasOwn(res._res, 'end'))
  })
  app.get('/next', (req, res) => res.send('next'))
  const port = await new Promise((resolve) => app.listen(0, '127.0.0.1', () => resolve(app.port)))
  try {
    const r = await converse(port, post('/aborted', 2 * 1024 * 1024, KIB64), { abort: true })
    assert.equal(r.raw.length, 0, 'nothing was sent while the body was still coming')
    assert.deepEqual(seen, [true], 'held')
    await new Promise((resolve) => setTimeout(resolve, 400))
    const next = await converse(port, NEXT, { quiet: 200 })
    assert.match(next.raw.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/)
  } finally {
    app.close()
  }
})

test('a held tryEnd that uWS takes only in part when it is replayed (its writes are optional) is continued once the socket drains: nothing lost, keep-alive in step', { timeout: 30000 }, async () => {
  const BIG = Buffer.alloc(32 * 1024 * 1024)
  for (let i = 0; i < BIG.length; i += 4096) BIG.writeUInt32LE(i, i)
  const half = BIG.length / 2
  const app = uWS.App()
  const answers = {
    // Whole while held.
    whole: (res) => res.cork(() => res.writeStatus(S413).tryEnd(BIG, BIG.length)),
    // Half while held, half 50 ms after the body ended (still waiting, or on uWS's own).
    halves: (res) => {
      res.cork(() => res.writeStatus(S413).tryEnd(BIG.subarray(0, half), BIG.length))
      later(() => {
        if (res.aborted) return
        res.cork(() => {
          const [ok, done] = res.tryEnd(BIG.subarray(half), BIG.length)
          // On uWS's own methods this may be taken in part: the rest as uWS.js says.
          if (!ok && !done) res.onWritable((offset) => res.tryEnd(BIG.subarray(offset), BIG.length)[0])
        })
      })
    }
  }
  for (const [name, answer] of Object.entries(answers)) {
    app.post(`/${name}`, (res, req) => {
      readBody(res, req, { limit: 1024, linger: { errorAtOnce: true } }).catch(() => answer(res))
    })
  }
  app.get('/next', (res) => res.end('next'))
  const port = await new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve(uWS.us_socket_local_port(token))))
  try {
    for (const name of Object.keys(answers)) {
      const got = await new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1')
        const parts = []
        let length = 0
        let end = -1
        let asked = false
        socket.on('data', (d) => {
          // Joined only once the answer can be whole: 32 MiB joined at every read is
          // quadratic, minutes under AddressSanitizer.
          parts.push(d)
          length += d.length
          if (end < 0) end = Buffer.concat(parts).indexOf('\r\n\r\n')
          if (end < 0 || length < end + 4 + BIG.length) return
          // The next request once the answer is whole (uWS closes a connection that
          // sends one while an answer waits for the socket to drain).
          if (!asked) socket.write(NEXT)
          asked = true
          const all = Buffer.concat(parts)
          parts.length = 0
          parts.push(all)
          if (all.includes('\r\n\r\nnext', end + 4 + BIG.length)) {
            socket.destroy()
            resolve(all)
          }
        })
        socket.on('error', () => {})
        socket.on('close', () => resolve(Buffer.concat(parts)))
        socket.on('connect', () => {
          // The client reads nothing for a second: the replay meets a full socket.
          socket.pause()
          socket.write(post(`/${name}`, KIB64, KIB64))
          setTimeout(() => socket.resume(), 1000)
        })
        setTimeout(() => socket.destroy(), 20000).unref()
      })
      const end = got.indexOf('\r\n\r\n')
      // (uWebSockets: 20 is off once ultimate-express is loaded, by the test before.)
      const head = masked(got.subarray(0, end + 4)).replace('uWebSockets: 20\r\n', '')
      assert.equal(head, `HTTP/1.1 ${S413}\r\nDate: <date>\r\nContent-Length: ${BIG.length}\r\n\r\n`, name)
      assert.ok(got.subarray(end + 4, end + 4 + BIG.length).equals(BIG), `${name}: the body exact`)
      assert.match(got.subarray(end + 4 + BIG.length).toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nnext$/, `${name}: the next request answered`)
    }
  } finally {
    app.close()
  }
})
