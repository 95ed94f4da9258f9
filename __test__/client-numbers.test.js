'use strict'
// Numbers a client writes (an array index in a field's name, a count of parameters or
// header lines, a declared length) must not bound the work or memory of a server beyond
// what its limits allow: each body here is small, and each must be answered in under a
// second while a /ping sent meanwhile on the same server is answered too. The servers run
// in child processes (helpers/numbers-server.js), so a body that holds the event loop
// fails its case (the child is killed and started again) instead of hanging the suite.
// docs/security.md, "Numbers a client chooses", lists each bound and its test.
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { PassThrough } = require('node:stream')
const multer = require('multer')
const { multipart } = require('..')
const { request, sleep } = require('./helpers/client')
const { formBody } = require('./helpers/multer-form')

const SERVER = path.join(__dirname, 'helpers', 'numbers-server.js')
const B = 'numbersboundary'
const FORM = `multipart/form-data; boundary=${B}`
const URLENCODED = 'application/x-www-form-urlencoded'
const ANSWER_MS = 1000
const KINDS = ['express', 'ultimate', 'uws']

/** A child running one kind of server; resolves once it listens. */
function startChild (kind) {
  const child = spawn(process.execPath, [SERVER, kind], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${kind}: the server did not start`)) }, 20000)
    child.stdout.on('data', (d) => {
      out += d
      const m = /^(\d+)\n/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({ child, port: Number(m[1]) })
      }
    })
    child.on('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`${kind}: the server exited (${code ?? signal})`)) })
  })
}

function stop (server) {
  server.child.removeAllListeners('exit')
  server.child.kill('SIGKILL')
}

const field = (name, value = 'v') => ({ name, data: Buffer.from(value) })
const times = (n, f) => Array.from({ length: n }, (_, i) => f(i))
const form = (parts) => formBody(B, parts)
const FORMS = ['express', 'ultimate']

/**
 * The bodies: path (default /form), body (default the form of `parts`), contentType
 * (default FORM), headers, the kinds that have the route, `ms` where it is not ANSWER_MS,
 * and what each answers: `want`
 * for the multer-shaped routes (and every kind of /url and /body), `read` for
 * readMultipart (default 200: it keeps fields by name as sent, building nothing from one).
 */
const CASES = {
  // An array index in a name: multer's shape, built from the fields sent.
  'items[4294967294] then items[label]': {
    parts: [field('items[4294967294]', 'a'), field('items[label]', 'b')],
    want: { status: 200, body: { items: { object: ['4294967294', 'label'] } } }
  },
  'items[100000000] then items[label]': {
    parts: [field('items[100000000]', 'a'), field('items[label]', 'b')],
    want: { status: 200, body: { items: { object: ['100000000', 'label'] } } }
  },
  'items[0], items[4294967294], then items[label]': {
    parts: [field('items[0]', 'z'), field('items[4294967294]', 'a'), field('items[label]', 'b')],
    want: { status: 200, body: { items: { object: ['0', '4294967294', 'label'] } } }
  },
  'a[4294967294][0] then a[x]': {
    parts: [field('a[4294967294][0]', 'a'), field('a[x]', 'b')],
    want: { status: 200, body: { a: { object: ['4294967294', 'x'] } } }
  },
  'items[4294967294] alone (an array of length 2^32 - 1, as multer)': {
    parts: [field('items[4294967294]', 'a')],
    want: { status: 200, body: { items: { array: ['4294967294'] } } }
  },
  'items[4294967294] then items[]': {
    parts: [field('items[4294967294]', 'a'), field('items[]', 'b')],
    want: { status: 400, code: 'INVALID_FIELD_NAME' }
  },
  '2000 sparse indices items[j * 100000], then items[label]': {
    parts: [...times(2000, (j) => field(`items[${j * 100000}]`)), field('items[label]')],
    want: { status: 200 }
  },
  'a[b] 4000 deep': {
    parts: [field('a' + '[b]'.repeat(4000))],
    want: { status: 200, body: { a: { object: ['b'] } } }
  },
  'items[4294967294] then items[label], fieldArrayIndexLimit 1000': {
    path: '/form?limit=1000',
    parts: [field('items[4294967294]', 'a'), field('items[label]', 'b')],
    want: { status: 400, code: 'LIMIT_FIELD_ARRAY_INDEX' },
    read: { status: 400, code: 'LIMIT_FIELD_ARRAY_INDEX' }
  },
  // Counts: header lines of a part, parameters of a header.
  'a part with 2000 header lines (headerPairs)': {
    parts: [{ ...field('a'), headers: times(1999, () => 'X:1') }],
    want: { status: 200 }
  },
  'a part with 2001 header lines': {
    parts: [{ ...field('a'), headers: times(2000, () => 'X:1') }],
    want: { status: 413, code: 'LIMIT_HEADER_PAIRS' },
    read: { status: 413, code: 'LIMIT_HEADER_PAIRS' }
  },
  'a Content-Disposition with 1500 parameters': {
    parts: [{ name: `a"${times(1500, (i) => `; p${i}=x`).join('')}; x="`, data: Buffer.from('v') }],
    want: { status: 200, body: { a: 's' } }
  },
  'a part Content-Type with 1500 parameters': {
    parts: [{ ...field('a'), type: `text/plain${times(1500, (i) => `; p${i}=x`).join('')}` }],
    want: { status: 200, body: { a: 's' } }
  },
  'a request Content-Type with 300 parameters': {
    contentType: `multipart/form-data${times(300, (i) => `; p${i}=x`).join('')}; boundary=${B}`,
    parts: [field('a')],
    want: { status: 200, body: { a: 's' } }
  },
  // urlencoded (qs, as body-parser drives it: arrayLimit max(100, parameters), depth 32,
  // parameterLimit 1000).
  'urlencoded a[4294967294]=x&a[label]=y': {
    path: '/url',
    kinds: FORMS,
    contentType: URLENCODED,
    body: Buffer.from('a[4294967294]=x&a[label]=y'),
    want: { status: 200, body: { a: { object: ['4294967294', 'label'] } } }
  },
  'urlencoded 1000 x a<i>[999]': {
    path: '/url',
    kinds: FORMS,
    contentType: URLENCODED,
    body: Buffer.from(times(1000, (i) => `a${i}[999]=x`).join('&')),
    want: { status: 200 }
  },
  'urlencoded a[999] .. a[0] (one array, each merge walks it)': {
    path: '/url',
    kinds: FORMS,
    contentType: URLENCODED,
    body: Buffer.from(times(1000, (i) => `a[${999 - i}]=x`).join('&')),
    want: { status: 200 }
  },
  // qs walks each array it makes to its length (at most arrayLimit): this is the most a
  // 100 KiB body makes it do at body-parser's defaults, 0.4-0.7 s here, as under
  // body-parser; bounded by parameterLimit x depth x arrayLimit, not by a field's number.
  'urlencoded 900 x a<i>[899] 19 deep (the most of 100 KiB)': {
    ms: 3000,
    path: '/url',
    kinds: FORMS,
    contentType: URLENCODED,
    body: Buffer.from(times(900, (i) => `a${i}` + '[899]'.repeat(19) + '=x').join('&')),
    want: { status: 200 }
  },
  'urlencoded 1001 parameters': {
    path: '/url',
    kinds: FORMS,
    contentType: URLENCODED,
    body: Buffer.from(times(1001, (i) => `a${i}=x`).join('&')),
    want: { status: 413 }
  },
  'urlencoded 33 deep': {
    path: '/url',
    kinds: FORMS,
    contentType: URLENCODED,
    body: Buffer.from('a' + '[b]'.repeat(33) + '=x'),
    want: { status: 400 }
  },
  // Digests: members of a Content-Digest (one hash per algorithm, whatever their number).
  'a Content-Digest of 300 members': {
    path: '/body',
    contentType: 'application/octet-stream',
    headers: { 'content-digest': [...times(300, (i) => `k${i}=:AA==:`), `sha-256=:${Buffer.alloc(32).toString('base64')}:`].join(', ') },
    body: Buffer.from('body'),
    want: { status: 400, code: 'ERR_BODY_DIGEST_MISMATCH' }
  }
}

/**
 * Sends the case's body and, once it is on its way, a /ping; resolves with both answers
 * (null for one not answered within ANSWER_MS, or the case's own `ms`).
 */
async function timed (port, c) {
  const body = c.body || form(c.parts)
  const headers = { 'content-type': c.contentType || FORM, ...c.headers }
  const started = performance.now()
  const timeout = c.ms || ANSWER_MS
  const sent = request(port, { path: c.path || '/form', headers, body, timeout }).then((r) => ({ ...r, ms: performance.now() - started }), () => null)
  await sleep(20)
  const ping = request(port, { method: 'GET', path: '/ping', declaredLength: false, timeout }).catch(() => null)
  const [answer, pong] = await Promise.all([sent, ping])
  return { answer, pong }
}

const unanswered = (r) => r === null || r.closed === true

for (const kind of KINDS) {
  test(`${kind}: every body is answered in under ${ANSWER_MS} ms, and /ping meanwhile`, async (t) => {
    let server = await startChild(kind)
    t.after(() => stop(server))
    const late = []
    for (const [name, c] of Object.entries(CASES)) {
      if (!(c.kinds || KINDS).includes(kind)) continue
      const { answer, pong } = await timed(server.port, c)
      if (unanswered(answer) || unanswered(pong)) {
        late.push(`${name}: ${unanswered(answer) ? 'unanswered' : answer.status}, /ping ${unanswered(pong) ? 'unanswered' : pong.status}`)
        stop(server)
        server = await startChild(kind)
        continue
      }
      assert.equal(pong.body, 'pong', name)
      if (answer.ms > 100) t.diagnostic(`${name}: ${answer.ms.toFixed(0)} ms`)
      const want = kind === 'uws' && (c.path || '/form').startsWith('/form') ? (c.read || { status: 200 }) : c.want
      assert.equal(answer.status, want.status, `${name}: ${answer.body}`)
      const got = JSON.parse(answer.body)
      if (want.code) assert.equal(got.code, want.code, name)
      if (want.body) assert.deepEqual(got.body, want.body, name)
    }
    assert.deepEqual(late, [], `not answered within ${ANSWER_MS} ms`)
  })
}

/** A request whose body is only begun: the socket stays open until `end()`. */
async function begin (port, path, headers, bytes) {
  const socket = net.connect(port, '127.0.0.1')
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  socket.on('error', () => {})
  socket.write([`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n') + '\r\n\r\n')
  socket.write(bytes)
  return { end: () => socket.destroy() }
}

async function memoryOf (port) {
  const r = await request(port, { method: 'GET', path: '/memory', declaredLength: false, timeout: 5000 })
  return JSON.parse(r.body)
}

test('a declared length allocates what the client sends, not what it declares', async (t) => {
  const MIB = 1024 * 1024
  const BODIES = 4
  for (const kind of KINDS) {
    const server = await startChild(kind)
    t.after(() => stop(server))
    // Warm the routes, so what they load is not counted.
    await request(server.port, { path: '/body', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from('x') })
    const before = await memoryOf(server.port)
    const open = []
    // Bodies that declare 100 MB (under the route's 1 GiB limit) and send one byte: each
    // holds at most maxPreallocated (1 MiB), of which it touched a page (its budget
    // reservation is the declared length: admitted whole or refused up front).
    for (let i = 0; i < BODIES; i++) {
      open.push(await begin(server.port, '/body', { 'content-type': 'application/octet-stream', 'content-length': 100 * 1000 * 1000 }, Buffer.from('x')))
    }
    await sleep(200)
    const held = await memoryOf(server.port)
    assert.equal(held.budgetRefusals, before.budgetRefusals, `${kind}: every body admitted`)
    const allocated = held.bytesInUse - before.bytesInUse
    t.diagnostic(`${kind}: ${BODIES} bodies declaring 100 MB: +${(allocated / MIB).toFixed(1)} MiB allocated, resident +${((held.rss - before.rss) / MIB).toFixed(1)} MiB`)
    assert.ok(allocated > 0 && allocated <= BODIES * MIB, `${kind}: ${allocated} bytes allocated`)
    if (kind === 'uws') {
      // readMultipart's memory storage (64 MiB limit): a form that declares 60 MiB and sends
      // a 2 MiB file grows its arena past the first 1 MiB to the declared length (one growth,
      // no copy after), whose pages are touched only as bytes come.
      const head = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="f"; filename="f.bin"\r\n\r\n`)
      open.push(await begin(server.port, '/form', { 'content-type': FORM, 'content-length': 60 * MIB }, Buffer.concat([head, Buffer.alloc(2 * MIB, 1)])))
      await sleep(200)
      const arena = await memoryOf(server.port)
      const grown = arena.rss - held.rss
      t.diagnostic(`uws: a form declaring 60 MiB, 2 MiB sent: +${((arena.bytesInUse - held.bytesInUse) / MIB).toFixed(1)} MiB allocated, resident +${(grown / MIB).toFixed(1)} MiB`)
      assert.ok(arena.bytesInUse - held.bytesInUse <= 64 * MIB, 'at most the form\'s limit')
      assert.ok(grown < 16 * MIB, `resident memory grew by ${(grown / MIB).toFixed(1)} MiB`)
    }
    for (const o of open) o.end()
  }
})

// req.body as multer 2.5 builds it, name for name (multer's own middleware over a stream
// standing in for the request, as multer's suite drives it). Only names multer reads at
// once are here, in this process: the ones it takes minutes on are the servers' cases
// above, and `items[1000]` then `items[label]` is the same rule at a small index.
const NAME_TABLE = [
  ['items[]'], ['items[0]'], ['items[]', 'items[]'], ['items[0]', 'items[]'], ['items[3]', 'items[1]'],
  ['items[3]', 'items[label]'], ['items[1000]', 'items[label]'], ['items[0]', 'items[1000]', 'items[label]'],
  ['items[4294967294]'], ['a[4294967294][0]'], ['items[4294967294]', 'items[]'], ['items[4294967294]', 'items'], ['items[4294967295]', 'items[label]'],
  ['items[4294967295]', 'items[0]', 'items[x]'], ['items[99999999999999999999999]', 'items[0]', 'items[x]'],
  ['items[1e3]'], ['items[00]', 'items[01]', 'items[x]'], ['a[2][x]', 'a[0]', 'a[y]'], ['a[0][1]', 'a[0][x]'],
  ['a[b][c][d][e][f][g]'], ['a' + '[b]'.repeat(200)], ['a[0][0][0][0]', 'a[0][0][x]'],
  ['__proto__'], ['__proto__[x]'], ['a[__proto__]'], ['a[0][__proto__]'], ['constructor[prototype]'],
  ['a', 'a[b]'], ['a[b]', 'a'], ['a[]', 'a[x]'], ['a[0]', 'a'], ['a[0]', 'a[0][b]'], ['a[b]', 'a[b][]'],
  ['a[]', 'a[]', 'a[label]'], ['a[length]'], ['a[0]', 'a[length]'],
  ['a[b]c'], ['[a]'], ['a[b'], ['a]'], ['a[][b]'], ['a[]b']
]

/** A comparable view of req.body: each object's prototype, each array's length, own keys in order. */
function view (v) {
  if (typeof v === 'string') return v
  if (Array.isArray(v)) return { length: v.length, own: Object.keys(v).map((k) => [k, view(v[k])]) }
  return { proto: Object.getPrototypeOf(v) === null ? null : 'Object', own: Object.keys(v).map((k) => [k, view(v[k])]) }
}

function submit (middleware, names) {
  const bytes = form(names.map((n, i) => field(n, `v${i}`)))
  const req = new PassThrough()
  req.headers = { 'content-type': FORM, 'content-length': String(bytes.length) }
  return new Promise((resolve) => {
    middleware(req, null, (err) => resolve(err ? { code: err.code } : view(req.body)))
    req.end(bytes)
  })
}

test('req.body has multer\'s shape, name for name', async () => {
  for (const names of NAME_TABLE) {
    const theirs = await submit(multer().none(), names)
    const ours = await submit(multipart().none(), names)
    assert.deepEqual(ours, theirs, JSON.stringify(names))
  }
})
