'use strict'
// npm run soak [-- --quick]: an abuse run against a real uWS server (soak/server.js) on
// 127.0.0.1. Mixed sizes with and without content-length, chunked bodies, encoded ones,
// ~10% of clients aborting mid-body, short bodies, bodies over the limit, corrupt
// encodings, and a crowd of connections that declare ~1 GiB and send one byte. Every
// completed response is checked (bytes by length + CRC-32, failures by status and type);
// the run fails on the first wrong one. Bounded: a request count and a time budget.
const { fork } = require('node:child_process')
const net = require('node:net')
const path = require('node:path')
const zlib = require('node:zlib')
const { ready: zstdReady, zstdCompress } = require('../__test__/helpers/zstd')
const { random } = require('../__test__/helpers/random')
const { useLoadableUws } = require('../scripts/test-env/loadable-uws')

const quick = process.argv.includes('--quick')
const TOTAL = quick ? 12000 : 100000
const BUDGET_MS = quick ? 60000 : 270000
const WORKERS = 24
const IDLE_CONNECTIONS = quick ? 200 : 1000
// uWS itself drops a request whose content-length is 2^30 or more (before any handler),
// so "about 1 GiB" is the largest length it passes on.
const HUGE = 999999999

const KIB = 1024
const MIB = 1024 * KIB

const rnd = random(20261130)
const pick = (n) => Math.floor(rnd() * n)

/** A body size: mostly small, sometimes large (up to 8 MiB). */
function size () {
  const r = rnd()
  if (r < 0.45) return pick(KIB)
  if (r < 0.8) return KIB + pick(63 * KIB)
  if (r < 0.96) return 64 * KIB + pick(960 * KIB)
  return MIB + pick(7 * MIB)
}

// Bodies are cut from two shared pools so building them costs nothing.
const NOISE = Buffer.alloc(8 * MIB + 1)
for (let i = 0, x = 7; i < NOISE.length; i++) { x = (x * 1103515245 + 12345) >>> 0; NOISE[i] = x >>> 24 }
const TEXT = Buffer.from('{"id":12345,"name":"soak","tags":["a","b","c"],"active":true}\n'.repeat(4000))
const expectOk = (b) => `${b.length} ${zlib.crc32(b)}`

const ENCODE = {
  gzip: (b) => zlib.gzipSync(b, { level: 1 }),
  deflate: (b) => zlib.deflateSync(b, { level: 1 }),
  br: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }),
  zstd: (b) => zstdCompress(b, 1)
}
const CODINGS = Object.keys(ENCODE)
// Node's own decoders, for corrupt bodies (Node 20 has no zstd: those are checked
// against libzstd by the Rust property tests instead).
const REFERENCE = { gzip: zlib.gunzipSync, deflate: zlib.inflateSync, br: zlib.brotliDecompressSync, zstd: zlib.zstdDecompressSync }

function chunked (b) {
  const parts = []
  for (let at = 0; at < b.length;) {
    const n = 1 + pick(20000)
    const piece = b.subarray(at, at + n)
    parts.push(Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n'))
    at += n
  }
  parts.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(parts)
}

/** One request: { head, payload, expect: string | null (no answer) | fn(answer) -> bool, abortAfter?, fresh } */
function nextRequest () {
  const r = rnd()
  const headers = {}
  let payload
  let expect
  let fresh = false
  let abortAfter = null
  let finAfter = null
  if (r < 0.42) { // identity, content-length
    payload = NOISE.subarray(0, size())
    expect = expectOk(payload)
  } else if (r < 0.57) { // identity, chunked
    const b = NOISE.subarray(0, size())
    headers['transfer-encoding'] = 'chunked'
    payload = chunked(b)
    expect = expectOk(b)
  } else if (r < 0.67) { // encoded
    const coding = CODINGS[pick(CODINGS.length)]
    const b = TEXT.subarray(0, pick(TEXT.length))
    headers['content-encoding'] = coding
    payload = ENCODE[coding](b)
    expect = expectOk(b)
  } else if (r < 0.77) { // the client gives up mid-body
    payload = NOISE.subarray(0, 2 + size())
    abortAfter = 1 + pick(payload.length - 1)
    expect = null
    fresh = true
  } else if (r < 0.85) { // over the limit, declared or found while reading (chunked)
    const limit = 1 + pick(64 * KIB)
    const b = NOISE.subarray(0, limit + 1 + pick(64 * KIB))
    headers['x-limit'] = String(limit)
    if (rnd() < 0.5) { headers['transfer-encoding'] = 'chunked'; payload = chunked(b) } else payload = b
    expect = '413 entity.too.large'
    fresh = true
  } else if (r < 0.9) { // short: fewer bytes than declared, then the client closes its side
    payload = NOISE.subarray(0, 2 + size())
    finAfter = 1 + pick(payload.length - 1)
    expect = null
    fresh = true
  } else { // corrupt encodings: truncated (always 400) or bytes flipped (400, or 200 if harmless)
    const coding = CODINGS[pick(CODINGS.length)]
    const b = TEXT.subarray(0, 1000 + pick(TEXT.length - 1000))
    const encoded = Buffer.from(ENCODE[coding](b))
    headers['content-encoding'] = coding
    if (rnd() < 0.5) {
      payload = encoded.subarray(0, pick(encoded.length))
      expect = '400 encoding.invalid'
    } else {
      for (let i = 0; i < 3; i++) encoded[pick(encoded.length)] ^= 1 + pick(255)
      payload = encoded
      // br and zstd (without its optional checksum) cannot tell every corruption from
      // data: then the answer must be what a reference decoder makes of the same bytes.
      const reference = REFERENCE[coding]
      let decoded = null
      try { decoded = reference ? reference(encoded) : undefined } catch {}
      expect = (answer) => answer === '400 encoding.invalid' || answer === '413 entity.too.large' ||
        (decoded === undefined ? /^200 \d+ \d+$/.test(`200 ${answer}`) : decoded !== null && answer === expectOk(decoded))
    }
    fresh = true
  }
  if (!headers['transfer-encoding']) headers['content-length'] = String(payload.length)
  const head = Buffer.from(`POST /body HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`)
  return { head, payload, expect, fresh, abortAfter, finAfter }
}

/** A keep-alive connection that sends one request at a time. */
class Connection {
  constructor (port) {
    this.socket = net.connect(port, '127.0.0.1')
    this.socket.setNoDelay(true)
    this.pending = null
    this.buffer = Buffer.alloc(0)
    this.closed = false
    this.socket.on('data', (d) => { this.buffer = Buffer.concat([this.buffer, d]); this.parse() })
    this.socket.on('error', () => {})
    this.socket.on('close', () => { this.closed = true; if (this.pending) this.pending.resolve({ closed: true }); this.pending = null })
  }

  parse () {
    const end = this.buffer.indexOf('\r\n\r\n')
    if (end < 0 || !this.pending) return
    const head = this.buffer.subarray(0, end).toString('latin1')
    const m = /content-length: *(\d+)/i.exec(head)
    const need = end + 4 + (m ? Number(m[1]) : 0)
    if (this.buffer.length < need) return
    const answer = this.buffer.subarray(end + 4, need).toString()
    this.buffer = this.buffer.subarray(need)
    const p = this.pending
    this.pending = null
    p.resolve({ status: Number(head.split(' ')[1]), answer })
  }

  send (req) {
    return new Promise((resolve) => {
      this.pending = { resolve }
      const { socket } = this
      socket.write(req.head)
      if (req.abortAfter !== null) {
        socket.write(req.payload.subarray(0, req.abortAfter), () => setTimeout(() => socket.resetAndDestroy(), pick(5)))
      } else if (req.finAfter !== null) {
        socket.end(req.payload.subarray(0, req.finAfter))
      } else {
        socket.write(req.payload)
      }
    })
  }

  close () { this.socket.resetAndDestroy() }
}

async function main () {
  await zstdReady
  console.log(`soak: Node ${process.version}, ${useLoadableUws()}`)
  const server = fork(path.join(__dirname, 'server.js'), { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const { port } = await new Promise((resolve) => server.once('message', resolve))
  const started = Date.now()
  const seen = { done: 0, ok: 0, refused: 0, closed: 0, kinds: {} }
  const failures = []

  // The crowd: connections that declare ~1 GiB, send one byte and wait, for most of the run.
  const crowd = []
  for (let i = 0; i < IDLE_CONNECTIONS; i++) {
    const s = net.connect(port, '127.0.0.1')
    s.on('error', () => {})
    s.write(`POST /body HTTP/1.1\r\nhost: 127.0.0.1\r\nx-limit: 2gb\r\ncontent-length: ${HUGE}\r\n\r\nx`)
    crowd.push(s)
  }

  let issued = 0
  async function worker () {
    let conn = new Connection(port)
    while (issued < TOTAL && Date.now() - started < BUDGET_MS && failures.length === 0) {
      issued++
      const req = nextRequest()
      const c = req.fresh ? new Connection(port) : conn
      const result = await c.send(req)
      if (req.fresh) c.close()
      else if (c.closed) conn = new Connection(port)
      seen.done++
      const answer = result.closed ? null : result.answer
      const good = typeof req.expect === 'function' ? req.expect(answer) : answer === req.expect
      if (answer === null) seen.closed++
      else if (result.status === 200) seen.ok++
      else seen.refused++
      if (!good) failures.push({ expected: typeof req.expect === 'function' ? 'a valid answer' : req.expect, got: result.closed ? '(connection closed)' : `${result.status} ${answer}` })
    }
    conn.close()
  }
  await Promise.all(Array.from({ length: WORKERS }, worker))
  for (const s of crowd) s.resetAndDestroy()
  const seconds = (Date.now() - started) / 1000

  const report = await new Promise((resolve, reject) => {
    const c = new Connection(port)
    c.socket.write('GET /report HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n')
    c.pending = { resolve }
    setTimeout(() => reject(new Error('no report')), 10000)
  })
  server.kill()
  const r = JSON.parse(report.answer)
  const mib = (n) => `${(n / MIB).toFixed(1)} MiB`
  console.log(`soak${quick ? ' (quick)' : ''}: ${seen.done} requests in ${seconds.toFixed(1)} s (${(seen.done / seconds).toFixed(0)}/s) + ${IDLE_CONNECTIONS} connections declaring ${HUGE} bytes and sending 1`)
  console.log(`  answered 200: ${seen.ok}, answered with an error: ${seen.refused}, closed by the client: ${seen.closed}`)
  console.log(`  server: ${r.requests} requests, ${r.ok} bodies read, ${r.aborted} aborts, errors ${JSON.stringify(r.errors)}`)
  console.log(`  server peak RSS growth ${mib(r.peakRss)}, peak stats().bytesInUse ${mib(r.peakInUse)}`)
  console.log(`  after the run and a GC: bytesInUse ${r.inUseAfterGc} B, pooled ${mib(r.pooled)} (bound ${mib(r.poolLimit)})`)
  let failed = false
  if (failures.length) { console.error('FAIL: wrong answers:', failures.slice(0, 5)); failed = true }
  if (r.inUseAfterGc !== 0) { console.error(`FAIL: ${r.inUseAfterGc} bytes still in use after the run`); failed = true }
  if (r.pooled > r.poolLimit) { console.error('FAIL: pool over its bound'); failed = true }
  if (!quick && seen.done < 100000) { console.error(`FAIL: only ${seen.done} requests in the time budget`); failed = true }
  process.exit(failed ? 1 : 0)
}

main().catch((err) => { console.error(err); process.exit(1) })
