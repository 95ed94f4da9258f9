'use strict'
// One advisory's test (__test__/advisories/<ID>.test.js): its trigger and near neighbours
// sent to every server its routes are on (multipart() under Express 5 and ultimate-express,
// readMultipart on bare uWS, the body-parser drop-ins under both frameworks), in a child
// process (helpers/advisory-server.js). Each case, on each server, must give:
//   1. its answer: status and code (and, where given, what the request built and stored),
//      and no error met by the route but the one answered (none for a success);
//   2. a /ping on the same server answered after it;
//   3. an event loop never held more than HELD_MS while it ran;
//   4. nothing left: no file in the storage directory, descriptors, native bytes and
//      budget back to where they were before the first case, Object.prototype unchanged.
// A server whose answer or /ping does not come in time is killed and started again, so
// one case that holds its event loop fails alone.
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { request, sleep } = require('./client')

// Under AddressSanitizer (asan/run.sh, which sets ASAN_OPTIONS for the tests and their
// servers) native code and every allocation run several times slower: 10 000 fields held
// the loop 108-142 ms there. The bound is for holds that grow with what a client chooses.
const HELD_MS = process.env.ASAN_OPTIONS === undefined ? 100 : 400
const ANSWER_MS = 1000
const SERVER = path.join(__dirname, 'advisory-server.js')
const B = 'advisoryboundary'
const FORM = `multipart/form-data; boundary=${B}`
const TYPES = { form: FORM, json: 'application/json', urlencoded: 'application/x-www-form-urlencoded', text: 'text/plain', raw: 'application/octet-stream' }
const WARM = { form: null, json: '{"a":1}', urlencoded: 'a=1', text: 'a', raw: 'a' }

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v)
function own (v) {
  const out = Object.create(null)
  for (const k of Object.keys(v)) out[k] = view(v[k])
  return out
}

/**
 * What a request built, as JSON that never walks an array's length (own keys only) and
 * is never as deep as a name: a run of 8 or more one-key objects (a[b][b]…) is one key,
 * `b x<n>`. The server answers it; a case's expected body is compared through it too.
 */
function view (v) {
  if (v === null || typeof v !== 'object') return v
  if (Buffer.isBuffer(v)) return { bytes: v.length }
  if (Array.isArray(v)) return { length: v.length, items: own(v) }
  let key
  let n = 0
  let end = v
  for (let keys; (keys = Object.keys(end)).length === 1 && (key === undefined || keys[0] === key) && isObject(end[keys[0]]); n++) {
    key = keys[0]
    end = end[key]
  }
  return n >= 8 ? { [`${key} x${n}`]: view(end) } : own(v)
}

let spec = null
/** The child's side: the spec the test file gave. */
const takeSpec = () => spec

/**
 * A form's bytes from parts { name, value | data, filename?, type?, headers? (more header
 * lines) } or { head (the whole header block, raw), value | data }; `end` replaces the close.
 */
function form (parts, { boundary = B, end = `--${boundary}--\r\n` } = {}) {
  const out = []
  for (const p of parts) {
    const lines = p.head !== undefined ? p.head : [`Content-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`, ...(p.type ? [`Content-Type: ${p.type}`] : []), ...(p.headers || [])].map((l) => l + '\r\n').join('')
    out.push(Buffer.from(`--${boundary}\r\n${lines}\r\n`, 'latin1'), Buffer.from(p.data !== undefined ? p.data : p.value ?? ''), Buffer.from('\r\n'))
  }
  out.push(Buffer.from(end))
  return Buffer.concat(out)
}
const field = (name, value = 'v') => ({ name, value })
const file = (name, data, filename = 'f.bin') => ({ name, filename, data })
const times = (n, f) => Array.from({ length: n }, (_, i) => f(i))

/**
 * A case of fields named `names` (values v0, v1, ...): `want` from multipart(), and from
 * readMultipart its fields as sent (a repeated name an array of its values).
 */
function fieldsNamed (names, want) {
  const fields = Object.create(null)
  names.forEach((n, i) => { fields[n] = n in fields ? [].concat(fields[n], `v${i}`) : `v${i}` })
  return { body: form(names.map((n, i) => field(n, `v${i}`))), want: (target) => target === 'uws' ? { status: 200, body: fields } : want }
}

/** The child with the servers: resolves with { child, ports } once all three listen. */
function startChild (filename) {
  const child = spawn(process.execPath, ['--expose-gc', SERVER, filename], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('the advisory server did not start')) }, 20000)
    child.stdout.on('data', (d) => {
      out += d
      const line = out.indexOf('\n')
      if (line === -1) return
      clearTimeout(timer)
      resolve({ child, ports: JSON.parse(out.slice(0, line)) })
    })
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`the advisory server exited (${code ?? signal})`)) })
  })
}

function stopChild (server) {
  server.child.removeAllListeners('exit')
  server.child.kill('SIGKILL')
}

async function get (port, p) {
  const r = await request(port, { method: 'GET', path: p, declaredLength: false, timeout: 5000 })
  if (r.closed) throw Object.assign(new Error(`GET ${p} unanswered: the server exited? (its stderr is above)`), { restart: true })
  return r.body
}
/** The child's stats; query 'reset' starts a case, 'gc' collects first. */
const statsOf = async (server, query = '') => JSON.parse(await get(server.ports.uws, `/stats?${query}`))

const targetsOf = (route) => [...(route.middleware ? (route.targets || ['express', 'ultimate']) : []), ...(route.read ? ['uws'] : [])]
const unanswered = (r) => r === null || r.closed === true

/** Starts the servers, sends each route a small good body, and takes the baseline. */
async function startServers (filename, routes) {
  const server = await startChild(filename)
  for (const [name, route] of Object.entries(routes)) {
    const kind = route.kind || 'form'
    const body = Buffer.from(WARM[kind] ?? form([field('w')]))
    for (const target of targetsOf(route)) {
      await request(server.ports[target], { path: `/r/${name}`, headers: { 'content-type': TYPES[kind] }, body, timeout: 5000 })
    }
  }
  await statsOf(server, 'reset')
  server.base = await statsOf(server, 'gc')
  return server
}

/** The stats once what the case left has had a moment to go (sockets closing, files removed). */
async function settled (server, until) {
  const deadline = Date.now() + 2000
  for (let i = 0; ; i++) {
    const s = await statsOf(server, i === 0 ? '' : 'gc')
    if (until(s) || Date.now() > deadline) return s
    if (i > 0) await sleep(20)
  }
}

/**
 * The test side: one test per case, each run on every target of its route.
 * spec.routes: name -> { kind ('form' default, 'json', 'urlencoded', 'text', 'raw'),
 *   middleware(ctx) for Express and ultimate-express, read(ctx) (readMultipart's options)
 *   for bare uWS, before (a middleware ahead of it), targets (a subset of the frameworks) };
 *   ctx.dir is a directory for disk storage, checked empty after each case.
 * spec.cases: [{ name, route, body (Buffer or string), contentType, headers, cuts, pause,
 *   stopAfter, reset, chunked (helpers/client.js's request()), targets, ms (the answer's bound, ANSWER_MS by default),
 *   want: { status, code?, body? (compared through view()), files? } or target -> that;
 *   dropped: true where the client goes before an answer: `want` is then the route's one
 *   error, or null for none }].
 * spec.tests(test): more tests, run on the test side only.
 */
function advisory (filename, { routes, cases, tests }) {
  if (process.env.UWS_BODY_ADVISORY_SERVER === '1') {
    spec = { routes }
    return
  }
  const test = require('node:test')
  let server = null
  test.before(async () => { server = await startServers(filename, routes) })
  test.after(() => { if (server) stopChild(server) })
  for (const c of cases) {
    test(c.name, async () => {
      const failures = []
      for (const target of c.targets || targetsOf(routes[c.route])) {
        try {
          await runCase(server, routes, c, target)
        } catch (err) {
          failures.push(`${target}: ${err.message}`)
          if (err.restart) {
            stopChild(server)
            server = await startServers(filename, routes)
          } else {
            // What this case left is its failure alone: the next cases start from here.
            server.base = await statsOf(server, 'gc')
          }
        }
      }
      assert.deepEqual(failures, [], c.name)
    })
  }
  if (tests) tests(test)
}

const exited = (server) => server.child.exitCode !== null || server.child.signalCode !== null

async function runCase (server, routes, c, target) {
  const route = routes[c.route]
  const want = typeof c.want === 'function' ? c.want(target) : c.want
  const ms = c.ms || ANSWER_MS
  if (exited(server)) throw Object.assign(new Error('the server had exited: its stderr is above'), { restart: true })
  await statsOf(server, 'reset')
  const started = performance.now()
  const port = server.ports[target]
  const r = await request(port, {
    path: `/r/${c.route}`,
    body: Buffer.from(c.body),
    headers: { 'content-type': c.contentType || TYPES[route.kind || 'form'], ...c.headers },
    cuts: c.cuts,
    pause: c.pause,
    stopAfter: c.stopAfter ?? null,
    reset: c.reset,
    chunked: c.chunked,
    timeout: ms + 1000
  }).catch(() => null)
  const took = performance.now() - started
  if (exited(server)) throw Object.assign(new Error(`the server exited (${server.child.exitCode ?? server.child.signalCode}): its stderr is above`), { restart: true })
  const pong = await request(port, { method: 'GET', path: '/ping', declaredLength: false, timeout: ANSWER_MS }).catch(() => null)
  if ((!c.dropped && unanswered(r)) || unanswered(pong) || pong.body !== 'pong') {
    throw Object.assign(new Error(`${unanswered(r) ? 'no answer' : `answered ${r.status}`}, /ping ${unanswered(pong) ? 'unanswered' : pong.body}`), { restart: true })
  }
  const base = server.base
  const s = await settled(server, (s) => s.files.length === 0 && s.fds.length <= base.fds.length && s.bytesInUse <= base.bytesInUse && s.budgetReserved <= base.budgetReserved && (!c.dropped || want === null || s.errors.length > 0))
  const errors = s.errors.map((e) => ({ status: e.status, code: e.code }))
  if (c.dropped) {
    assert.deepEqual(errors, want === null ? [] : [{ status: want.status, code: want.code }], 'the route\'s errors')
  } else {
    const got = JSON.parse(r.body)
    assert.ok(took < ms, `answered in ${took.toFixed(0)} ms, over ${ms}`)
    assert.deepEqual({ status: r.status, code: got.code }, { status: want.status, code: want.code }, r.body.slice(0, 300))
    if (want.body !== undefined) assert.deepEqual(got.body, JSON.parse(JSON.stringify(view(want.body))), 'what the request built')
    // Each file's keys the case names (fieldname, originalname, mimetype, size).
    if (want.files !== undefined) assert.deepEqual(got.files.map((f, i) => Object.fromEntries(Object.keys(want.files[i] || f).map((k) => [k, f[k]]))), want.files, 'the files stored')
    assert.deepEqual(errors, want.status === 200 ? [] : [{ status: want.status, code: want.code }], 'the route\'s errors')
  }
  assert.ok(s.held < HELD_MS, `the event loop was held ${s.held.toFixed(0)} ms`)
  assert.deepEqual(s.files, [], 'files left')
  assert.ok(s.fds.length <= base.fds.length, `${s.fds.length} descriptors open, ${base.fds.length} before; new: ${s.fds.filter((f) => !base.fds.includes(f)).join(', ')}`)
  assert.ok(s.bytesInUse <= base.bytesInUse, `${s.bytesInUse} native bytes in use, ${base.bytesInUse} before`)
  assert.ok(s.budgetReserved <= base.budgetReserved, `${s.budgetReserved} budget bytes reserved, ${base.budgetReserved} before`)
  assert.deepEqual(s.prototypeKeys, [], 'keys added to Object.prototype or Array.prototype')
}

module.exports = { advisory, takeSpec, view, form, field, file, times, fieldsNamed, B }
