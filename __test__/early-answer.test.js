'use strict'
// An answer sent before the body ends reaches the client (lib/refusal/refusal.js,
// docs/early-answers.md): for every API that refuses a body mid-way, every kind of client
// that is still sending it receives the status and the stable code, 20 tries per client,
// framing and connection kind (5 under UWS_BODY_TEST_LOAD=light: helpers/load.js), with a
// body 20x over the limit; and what the server reads after refusing is bounded. A body
// refused at its end instead (a declared digest that does not match) is answered after
// its last byte, to every client, on a connection kept in step. The server runs in its
// own process (helpers/early-server.js):
// in one process the client's writes and the server's answer take turns, which hides the
// race this is about.
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const crypto = require('node:crypto')
const path = require('node:path')
const { fork } = require('node:child_process')
const { client, curlPath } = require('./helpers/early-clients')
const { OVERRUN } = require('../lib/refusal/drain')
const { EARLY_ANSWER_TRIES, EARLY_ANSWER_DIGEST_TRIES } = require('./helpers/load')
const { JS_TIER_MAX } = require('../lib/body/body-store')
const { getJson } = require('./helpers/get-json')

const MIB = 1024 * 1024
const LIMIT = MIB
// 20x the limit: well past what loopback's socket buffers hold, so the client is still
// writing when the server refuses (at 5 MiB an answer at once was mostly received).
const BODY = Buffer.alloc(20 * LIMIT, 0x61)
const TRIES = EARLY_ANSWER_TRIES
const HAS_CURL = curlPath() !== null

// [name, kind, options]
const CLIENTS = [
  ['node:http keep-alive agent', 'http-ka', {}],
  ['node:http without keep-alive (Connection: close)', 'http-close', {}],
  ['fetch (undici, keep-alive)', 'fetch', {}],
  ['curl (keep-alive)', 'curl', {}],
  ['curl Connection: close', 'curl', { close: true }],
  ['raw socket keep-alive, then GET on the same connection', 'raw', { close: false }],
  ['raw socket Connection: close', 'raw', { close: true }]
]

// [API, app, path]
const APIS = [
  ['readBody', 'uws', '/readBody'],
  ['readText', 'uws', '/readText'],
  ['bodyStream', 'uws', '/bodyStream'],
  ['BodyAccumulator (README pattern)', 'uws', '/accumulator'],
  ['readMultipart', 'uws', '/readMultipart'],
  // What most uWS code writes: no answerError, the answer by hand.
  ...['readBody', 'readText', 'bodyStream', 'readMultipart'].flatMap((api) => [
    [`${api}, answered with res.writeStatus().end()`, 'uws', `/plain/${api}`],
    [`${api}, answered with res.end(body, true)`, 'uws', `/closing/${api}`]
  ]),
  ...['json', 'raw', 'text', 'urlencoded', 'multipart'].flatMap((kind) => [
    [`${kind}() under ultimate-express`, 'ultimate', `/${kind}`],
    [`${kind}() under Express`, 'express', `/${kind}`]
  ])
]

function startServer (config) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, 'helpers', 'early-server.js'), [JSON.stringify(config)], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    child.once('message', (ports) => resolve({ ports, stop: () => child.kill() }))
    child.once('exit', (code) => reject(new Error(`early-server exited (${code}) before listening`)))
  })
}

/**
 * Whether a client's result is the refusal with its code (and, keep-alive raw, a next
 * answer, unless the application closed the connection with its answer: `closes`).
 */
function received (r, closes = false, status = 413, code = 'ERR_BODY_TOO_LARGE') {
  if (!r.ok || r.status !== status) return false
  let parsed
  try {
    parsed = JSON.parse(r.body)
  } catch {
    return false
  }
  if (parsed.code !== code || parsed.status !== status) return false
  return closes || r.next === undefined || r.next === 200
}

function describeFailure (r) {
  if (!r.ok) return r.error
  if (r.next !== undefined && r.next !== 200) return `next request: ${r.next}`
  return `status ${r.status}${r.early ? ' before the body\'s last byte' : ''}: ${String(r.body).slice(0, 60)}`
}

/**
 * Sends `bodies` (in turn) `tries` times from every kind of client, in each framing
 * (chunked or not), to `urlPath`: a cell per client and framing, "name, framing: ok/tries
 * (why the others failed)", and the cells that failed. accept(r): the answer expected.
 */
async function everyClient (port, urlPath, { bodies, tries, framings = [false, true], headers = {}, accept }) {
  const table = []
  const failures = []
  for (const [name, kind, options] of CLIENTS) {
    if (kind === 'curl' && !HAS_CURL) continue
    for (const chunked of framings) {
      const c = client(kind, { port, chunked, timeout: 15000, headers, ...options })
      let ok = 0
      const why = {}
      for (let i = 0; i < tries; i++) {
        const r = await c.send(urlPath, bodies[i % bodies.length])
        if (accept(r)) ok++
        else {
          const reason = describeFailure(r)
          why[reason] = (why[reason] || 0) + 1
        }
      }
      c.close()
      const framing = framings.length > 1 ? `, ${chunked ? 'chunked' : 'content-length'}` : ''
      table.push(`${name}${framing}: ${ok}/${tries}` + (ok < tries ? ` (${Object.entries(why).map(([k, v]) => `${k} x${v}`).join(', ')})` : ''))
      if (ok < tries) failures.push(table[table.length - 1])
    }
  }
  return { table, failures }
}

let server
test.before(async () => { server = await startServer({ limit: LIMIT }) })
test.after(() => server.stop())

test('curl is installed (its cells are part of every test below)', (t) => {
  if (HAS_CURL) return
  const why = 'curl is not installed: the curl cells are not run (apt-get install curl; scripts/trixie.sh installs it in the Debian 13 root)'
  if (process.env.CI) assert.fail(why)
  t.skip(why)
})

// The APIs two at a time: the client and the server each have a core to themselves here
// either way, and the suite is shorter.
test(`every API: a client still sending a body 20x over the limit receives 413 and its code, ${TRIES} tries per client, framing and connection`, { concurrency: 2 }, async (t) => {
  await Promise.all(APIS.map(([api, app, urlPath]) => t.test(api, async (t) => {
    const closes = urlPath.startsWith('/closing/')
    const { table, failures } = await everyClient(server.ports[app], urlPath, { bodies: [BODY], tries: TRIES, accept: (r) => received(r, closes) })
    t.diagnostic(table.join('; '))
    assert.deepEqual(failures, [], `${api}: answers lost:\n${failures.join('\n')}`)
  })))
})

// Answers with no JSON body to check: endWithoutBody(0) on bare uWS, and the frameworks'
// default error handlers (ultimate-express's, Express's finalhandler), which write their
// own page with the error's status.
// [API, app, path]
const NO_BODY_ROUTES = [
  ['readBody answered with endWithoutBody(0)', 'uws', '/headOnly/readBody'],
  ['json() under ultimate-express, its default error handler', 'ultimateDefault', '/json'],
  ['multipart() under ultimate-express, its default error handler', 'ultimateDefault', '/multipart'],
  ['json() under Express, finalhandler', 'expressDefault', '/json'],
  ['multipart() under Express, finalhandler', 'expressDefault', '/multipart']
]
test(`answers without a body, and the frameworks' default error handlers: a client still sending receives the 413, ${TRIES} tries per client`, { concurrency: 2 }, async (t) => {
  await Promise.all(NO_BODY_ROUTES.map(([api, app, urlPath]) => t.test(api, async () => {
    const { failures } = await everyClient(server.ports[app], urlPath, {
      bodies: [BODY],
      tries: TRIES,
      framings: [false],
      accept: (r) => r.ok && r.status === 413 && (r.next === undefined || r.next === 200)
    })
    assert.deepEqual(failures, [], `${api}: answers lost:\n${failures.join('\n')}`)
  })))
})

// ---- refused at the body's end: a declared digest that does not match ----
// A digest is known only once the last byte is hashed, so the 400 follows the whole body:
// no client is still sending, nothing is left to drop or bound. Per kind of client above:
// - every client kind and framing, the answers without a body, the default error
//   handlers: apply (the answer after the last byte; keep-alive stays in step);
// - 1 GiB after the refusal, and a client polling past the byte bound: do not, there is
//   no rest after a refusal at the end to bound;
// - configured bounds: their bytes and timeout do not (no rest); linger: false does, and
//   must not close a connection whose body ended (below);
// - the time bound's trickler: its bound counts from a refusal; a slow sender here must
//   instead get its answer only after its last byte (below).

// Well formed (the SHA-256 of other bytes): the body is read whole and refused at its end.
const WRONG_DIGEST = { 'content-digest': `sha-256=:${crypto.createHash('sha256').update('not the body').digest('base64')}:` }
const MISMATCH = 'ERR_BODY_DIGEST_MISMATCH'
// Within the limit, in turn in both of a known length's stores: up to JS_TIER_MAX hashed
// in one call at the end (lib/body/body-store.js DigestStore), larger ones as they are copied
// (chunked ones always so). Bodies each route would take but for the digest (a
// framework's default error page shows the 400, not the code): JSON objects, and for the
// forms' routes a form (a preamble, then one field).
const jsonObject = (length) => Buffer.from(`{"a":"${'a'.repeat(length - 8)}"}`)
const FIELD = '\r\n--early\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--early--\r\n'
const form = (length) => Buffer.from('a'.repeat(length - FIELD.length) + FIELD)
const DIGEST_BODIES = [jsonObject(LIMIT / 2), jsonObject(JS_TIER_MAX / 2)]
const FORM_BODIES = [form(LIMIT / 2), form(JS_TIER_MAX / 2)]
const bodiesFor = (urlPath) => /multipart/i.test(urlPath) ? FORM_BODIES : DIGEST_BODIES
const DIGEST_TRIES = EARLY_ANSWER_DIGEST_TRIES
const afterTheEnd = (r) => r.ok && !r.early && r.status === 400

test(`every API: a client whose Content-Digest is wrong receives 400 and ${MISMATCH} after its last byte, ${DIGEST_TRIES} tries per client, framing and connection`, { concurrency: 2 }, async (t) => {
  await Promise.all(APIS.map(([api, app, urlPath]) => t.test(api, async () => {
    const closes = urlPath.startsWith('/closing/')
    const { failures } = await everyClient(server.ports[app], urlPath, {
      bodies: bodiesFor(urlPath),
      tries: DIGEST_TRIES,
      headers: WRONG_DIGEST,
      accept: (r) => afterTheEnd(r) && received(r, closes, 400, MISMATCH)
    })
    assert.deepEqual(failures, [], `${api}: answers lost or wrong:\n${failures.join('\n')}`)
  })))
})

test(`answers without a body, and the frameworks' default error handlers: a client whose Content-Digest is wrong receives the 400 after its last byte, ${DIGEST_TRIES} tries per client`, { concurrency: 2 }, async (t) => {
  await Promise.all(NO_BODY_ROUTES.map(([api, app, urlPath]) => t.test(api, async () => {
    const { failures } = await everyClient(server.ports[app], urlPath, {
      bodies: bodiesFor(urlPath),
      tries: DIGEST_TRIES,
      headers: WRONG_DIGEST,
      // x-code: endWithoutBody's answer has it (node:http's client does not report it).
      accept: (r) => afterTheEnd(r) && (r.code == null || r.code === MISMATCH) && (r.next === undefined || r.next === 200)
    })
    assert.deepEqual(failures, [], `${api}: answers lost or wrong:\n${failures.join('\n')}`)
  })))
})

// A slow client is the one an early refusal's time bound is for; here no bound runs. With
// linger: false an early refusal is answered at once, before the last byte (a raw client
// sees it: `early`), where the default linger holds any answer until the body's end: so
// there `afterTheEnd` tells a refusal at the end from an early one.
test('refused at the end, nothing is left to linger on: a client sending slowly (2 MiB/s, 3 pieces 100 ms apart) gets the 400 after its last byte, and with linger: false every client still gets it, on a connection kept for the next request', async () => {
  const none = await startServer({ limit: LIMIT, linger: false })
  try {
    for (const [api, app, urlPath] of [['readBody', 'uws', '/readBody'], ['bodyStream', 'uws', '/bodyStream'], ['readMultipart', 'uws', '/readMultipart'], ['json() under Express', 'express', '/json']]) {
      for (const [lingers, s] of [['default linger', server], ['linger: false', none]]) {
        for (const chunked of [false, true]) {
          const c = client('raw', { port: s.ports[app], close: false, chunked, headers: WRONG_DIGEST, rate: 2 * MIB })
          const r = await c.send(urlPath, bodiesFor(urlPath)[0])
          c.close()
          assert.ok(afterTheEnd(r) && received(r, false, 400, MISMATCH) && r.next === 200, `${api}, slowly, ${lingers}, ${chunked ? 'chunked' : 'content-length'}: ${describeFailure(r)}`)
        }
      }
      const { failures } = await everyClient(none.ports[app], urlPath, {
        bodies: bodiesFor(urlPath),
        tries: 2,
        headers: WRONG_DIGEST,
        accept: (r) => afterTheEnd(r) && received(r, false, 400, MISMATCH)
      })
      assert.deepEqual(failures, [], `${api}, linger: false: answers lost or wrong:\n${failures.join('\n')}`)
    }
  } finally {
    none.stop()
  }
})

test('after all of that the server holds no body memory', async () => {
  const stats = await getJson(server.ports.uws, '/stats')
  assert.equal(stats.bytesInUse, 0)
})

// ---- the bound ----

/**
 * Sends `total` bytes of a chunked body as fast as the socket takes them (or at `rate`
 * bytes/s), reading whatever comes back, until the server closes. Resolves with what it
 * wrote before the close, how long that took, and the status it received. readEvery: the
 * client reads its socket only once every so many ms (a client whose event loop is busy,
 * or that polls).
 */
function sendUntilClosed (port, urlPath, { total, rate = 0, timeout = 60000, readEvery = 0 }) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const started = Date.now()
    let written = 0
    let answer = ''
    let done = false
    let timer = null
    const finish = (closedBy) => {
      if (done) return
      done = true
      clearInterval(timer)
      clearTimeout(guard)
      socket.destroy()
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)
      resolve({ closedBy, written, ms: Date.now() - started, status: status ? Number(status[1]) : null, answer })
    }
    const guard = setTimeout(() => finish('the test: still open'), timeout)
    socket.on('data', (d) => { if (answer.length < 4096) answer += d.toString('latin1') })
    socket.on('error', () => finish('the server'))
    socket.on('close', () => finish('the server'))
    if (readEvery > 0) {
      socket.pause()
      const reader = setInterval(() => {
        if (done) return clearInterval(reader)
        socket.resume()
        setImmediate(() => { if (!done) socket.pause() })
      }, readEvery)
    }
    // Fast: 256 KiB chunks as the socket takes them; slow: a tenth of `rate` every 100 ms.
    const piece = Buffer.alloc(rate > 0 ? Math.ceil(rate / 10) : 256 * 1024, 0x62)
    const frame = Buffer.concat([Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n')])
    socket.on('connect', () => {
      socket.write(`POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n`)
      if (rate > 0) {
        timer = setInterval(() => {
          if (written >= total || done) return
          socket.write(frame)
          written += frame.length
        }, 100)
        return
      }
      const write = () => {
        // `done` is set by the socket's handlers, between the drains.
        while (written < total) {
          if (done) return
          written += frame.length
          if (!socket.write(frame)) return socket.once('drain', write)
        }
      }
      write()
    })
  })
}

/**
 * What the server read of refused bodies (after their refusal) while `work` ran: every
 * byte its drains were handed, also those that came after a bound (the client's own
 * count also holds what the kernel buffered for a server that had stopped reading).
 */
async function serverReads (statsPort, work) {
  const before = await getJson(statsPort, '/stats')
  const result = await work()
  await new Promise((resolve) => setTimeout(resolve, 100))
  const after = await getJson(statsPort, '/stats')
  return { result, read: after.dropped - before.dropped }
}

/** Polls the server's RSS and body memory while `work` runs. */
async function watchMemory (port, work) {
  const before = await getJson(port, '/stats')
  let peakRss = before.rss
  let peakInUse = before.bytesInUse
  let watching = true
  const poll = (async () => {
    for (;;) {
      if (!watching) return
      const s = await getJson(port, '/stats')
      peakRss = Math.max(peakRss, s.rss)
      peakInUse = Math.max(peakInUse, s.bytesInUse)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })()
  const result = await work()
  watching = false
  await poll
  const after = await getJson(port, '/stats')
  return { result, rssGrowth: peakRss - before.rss, rssKept: after.rss - before.rss, buffersKept: after.arrayBuffers - before.arrayBuffers, peakInUse }
}

const GIB = 1024 * MIB
// What the server may read past a bound: what uWS had already read when it paused (its
// 512 KiB buffer; Node's 64 KiB reads) and, on 20.57, whatever the socket's kernel queue
// still holds and the client refills (its uSockets reads again at once after a full
// 512 KiB read, paused or not), up to OVERRUN, where lib/refusal/drain.js closes.
const READ_SLACK = OVERRUN + 2 * MIB
// ultimate-express answers through uWS's end(), after which only uWS's own timeout can
// close the paused connection: measured 12 s on the 20.30 fork, 32 s on 20.57.
const UWS_PAUSED_CLOSE = 32000
const GRACE = 2000
const SLACK_MS = 3000

test('a client that sends 1 GiB after the refusal is closed after the byte bound (64 MiB by default), gets its 413 first, and the server holds no more memory meanwhile', async (t) => {
  for (const [api, app, urlPath] of [['readBody', 'uws', '/readBody'], ['bodyStream', 'uws', '/bodyStream'], ['BodyAccumulator', 'uws', '/accumulator'], ['raw() under ultimate-express', 'ultimate', '/raw'], ['raw() under Express', 'express', '/raw']]) {
    const { result: { result: r, read }, rssGrowth, rssKept, buffersKept, peakInUse } = await watchMemory(server.ports.uws, () => serverReads(server.ports.uws, () => sendUntilClosed(server.ports[app], urlPath, { total: GIB })))
    t.diagnostic(`${api}: closed by ${r.closedBy} after ${r.ms} ms; the server read ${(read / MIB).toFixed(1)} MiB after the refusal (the client wrote ${(r.written / MIB).toFixed(1)} MiB); status ${r.status}; server RSS peak +${(rssGrowth / MIB).toFixed(1)} MiB, +${(rssKept / MIB).toFixed(1)} MiB after (Buffers +${(buffersKept / MIB).toFixed(1)} MiB); bytesInUse peak ${peakInUse}`)
    assert.equal(r.closedBy, 'the server', api)
    assert.ok(read <= 64 * MIB + READ_SLACK, `${api}: the server read ${read} bytes after the refusal`)
    assert.ok(r.ms <= 10000 + (app === 'ultimate' ? UWS_PAUSED_CLOSE : GRACE) + SLACK_MS, `${api}: closed after ${r.ms} ms`)
    assert.equal(r.status, 413, `${api}: the answer before the close`)
    // Dropping 64 MiB keeps none of it: no Buffer survives a GC, and RSS stays below what
    // went through (under Express, Node's 64 KiB read Buffers pass through malloc, which
    // keeps some of the pages it had: +36 MiB on Node 24, none on Node 20).
    assert.ok(buffersKept < 4 * MIB, `${api}: ${buffersKept} bytes of Buffers kept after dropping the rest`)
    assert.ok(rssKept < 48 * MIB && rssGrowth < 64 * MIB, `${api}: server RSS +${rssGrowth} bytes at its peak, +${rssKept} after dropping 64 MiB`)
    // What the body held up to its refusal (the limit, and one chunk), never the rest.
    assert.ok(peakInUse <= LIMIT + 512 * 1024, `${api}: body memory peaked at ${peakInUse} bytes`)
  }
})

// Past the bound the connection closes GRACE_MS after the answer, not as soon as it is
// written (node:http's own close, lib/frameworks/source.js): a client that reads only now
// and then still has the answer when the close's RST arrives, which drops what its kernel
// had not handed over yet.
test('past the byte bound, a client that reads its socket only every 100 ms still receives its 413 before the close', async (t) => {
  for (const [api, app, urlPath] of [['readBody', 'uws', '/readBody'], ['readBody answered by hand', 'uws', '/plain/readBody'], ['bodyStream answered with end(body, true)', 'uws', '/closing/bodyStream'], ['raw() under ultimate-express', 'ultimate', '/raw'], ['raw() under Express', 'express', '/raw'], ['multipart() under Express', 'express', '/multipart']]) {
    for (let i = 0; i < 2; i++) {
      const r = await sendUntilClosed(server.ports[app], urlPath, { total: GIB, readEvery: 100 })
      t.diagnostic(`${api}: closed by ${r.closedBy} after ${r.ms} ms, ${(r.written / MIB).toFixed(1)} MiB written, status ${r.status}`)
      assert.equal(r.closedBy, 'the server', api)
      assert.equal(r.status, 413, `${api}: the answer before the close`)
    }
  }
})

test('configured bounds: linger { bytes: \'4mb\', timeout: 1500 } stops a fast sender after 4 MiB and a slow one after 1.5 s, each with its 413; linger: false reads nothing more', async (t) => {
  const small = await startServer({ limit: LIMIT, linger: { bytes: '4mb', timeout: 1500 } })
  const none = await startServer({ limit: LIMIT, linger: false })
  try {
    for (const [api, app, urlPath] of [['readBody', 'uws', '/readBody'], ['json() under Express', 'express', '/json']]) {
      const { result: fast, read: fastRead } = await serverReads(small.ports.uws, () => sendUntilClosed(small.ports[app], urlPath, { total: GIB }))
      t.diagnostic(`${api}, fast: the server read ${(fastRead / MIB).toFixed(1)} MiB, ${fast.ms} ms, status ${fast.status}`)
      assert.equal(fast.closedBy, 'the server')
      assert.ok(fastRead <= 4 * MIB + READ_SLACK, `${api}: the server read ${fastRead} bytes after the refusal`)
      assert.equal(fast.status, 413)
      // 512 KiB/s: 1 MiB to the refusal, then 1.5 s of the rest.
      const slow = await sendUntilClosed(small.ports[app], urlPath, { total: GIB, rate: 512 * 1024 })
      t.diagnostic(`${api}, slow: ${(slow.written / MIB).toFixed(1)} MiB written, ${slow.ms} ms, status ${slow.status}`)
      assert.equal(slow.closedBy, 'the server')
      assert.ok(slow.ms <= 2000 + 1500 + GRACE + SLACK_MS, `${api}: closed after ${slow.ms} ms`)
      assert.equal(slow.status, 413)
      const { result: off, read: offRead } = await serverReads(none.ports.uws, () => sendUntilClosed(none.ports[app], urlPath, { total: GIB }))
      t.diagnostic(`${api}, linger: false: the server read ${(offRead / MIB).toFixed(1)} MiB, ${off.ms} ms, status ${off.status}`)
      assert.equal(off.closedBy, 'the server')
      assert.ok(offRead <= READ_SLACK, `${api}: the server read ${offRead} bytes after the refusal`)
      assert.equal(off.status, 413)
    }
  } finally {
    small.stop()
    none.stop()
  }
})

test('the default time bound: a client trickling the rest at 256 KiB/s is answered and closed about 10 s after the refusal', async (t) => {
  const r = await sendUntilClosed(server.ports.uws, '/readBody', { total: GIB, rate: 256 * 1024 })
  t.diagnostic(`closed after ${r.ms} ms, ${(r.written / MIB).toFixed(1)} MiB written, status ${r.status}`)
  assert.equal(r.closedBy, 'the server')
  assert.equal(r.status, 413)
  // 1 MiB at 256 KiB/s reaches the limit at ~4 s; then 10 s; then the grace.
  assert.ok(r.ms >= 10000 && r.ms <= 4000 + 10000 + GRACE + SLACK_MS, `closed after ${r.ms} ms`)
})
