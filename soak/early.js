'use strict'
// node soak/early.js [--quick] [--seconds N] [--clients N]: a mixed load of refused and
// accepted bodies on raw sockets against every API that can refuse a body mid-way
// (the server of __test__/early-answer.test.js, in its own process, limit 1 MiB). Each
// client sends requests one after the other, on a keep-alive connection or with
// `Connection: close`, content-length or chunked, written as fast as the socket takes
// them: bodies within the limit must come back as "<length> <sha256>", bodies over it
// (1.5 to 20 MiB) as 413 with ERR_BODY_TOO_LARGE. It reports the share of refused
// requests that got their answer (target: 99% or more), fails on a wrong answer to an
// accepted body, and checks that the server holds no body memory afterwards.
// Bounded: a time budget, then every connection is ended.
const net = require('node:net')
const path = require('node:path')
const crypto = require('node:crypto')
const { fork } = require('node:child_process')
const { parseOne } = require('../__test__/helpers/early-clients')
const { random } = require('../__test__/helpers/random')
const { useLoadableUws } = require('../scripts/test-env/loadable-uws')
const { arg, flag, getJson } = require('./common')

const quick = flag('quick')
const SECONDS = arg('seconds', quick ? 10 : 60)
const CLIENTS = arg('clients', quick ? 40 : 200)
const MIB = 1024 * 1024
const LIMIT = MIB

const BARE = ['/readBody', '/readText', '/bodyStream', '/accumulator']
const PARSERS = ['/json', '/raw', '/text', '/urlencoded']
// Accepted bodies go where the answer is their digest: the bare routes (readText reads
// latin1, which keeps every byte) and raw() under both frameworks.
const DIGEST_ROUTES = [...BARE.map((p) => ['uws', p]), ['ultimate', '/raw'], ['express', '/raw']]
const ALL_ROUTES = [...BARE.map((p) => ['uws', p]), ...PARSERS.flatMap((p) => [['ultimate', p], ['express', p]])]

const rnd = random(20261207)
const pick = (list) => list[Math.floor(rnd() * list.length)]
const NOISE = crypto.randomBytes(20 * MIB)

function startServer () {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, '..', '__test__', 'helpers', 'early-server.js'), [JSON.stringify({ limit: LIMIT })], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    child.once('message', (ports) => resolve({ ports, child }))
    child.once('exit', (code) => reject(new Error(`early-server exited (${code})`)))
  })
}

function frame (body, chunked) {
  if (!chunked) return [body]
  const parts = []
  for (let at = 0; at < body.length;) {
    const n = Math.min(body.length - at, 1 + Math.floor(rnd() * 256 * 1024))
    parts.push(Buffer.from(n.toString(16) + '\r\n'), body.subarray(at, at + n), Buffer.from('\r\n'))
    at += n
  }
  parts.push(Buffer.from('0\r\n\r\n'))
  return parts
}

const totals = { refused: 0, refusedAnswered: 0, accepted: 0, acceptedOk: 0, lost: {}, wrong: [] }

/** One client: requests one after the other until `deadline`, on one connection at a time. */
async function runClient (ports, deadline) {
  let socket = null
  let buffered = Buffer.alloc(0)
  let waiter = null
  const open = (port) => new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1')
    buffered = Buffer.alloc(0)
    s.setNoDelay(true)
    s.on('data', (d) => {
      buffered = Buffer.concat([buffered, d])
      if (waiter) waiter()
    })
    s.on('error', () => {})
    s.on('close', () => { s.gone = true; if (waiter) waiter() })
    s.once('connect', () => resolve(s))
  })
  while (Date.now() < deadline) {
    const over = rnd() < 0.4
    const [app, urlPath] = over ? pick(ALL_ROUTES) : pick(DIGEST_ROUTES)
    const size = over ? Math.floor(1.5 * MIB + rnd() * 18.5 * MIB) : Math.floor(rnd() * LIMIT)
    const body = NOISE.subarray(0, size)
    const chunked = rnd() < 0.5
    const close = rnd() < 0.3
    if (socket === null || socket.gone || socket.app !== app) {
      if (socket !== null) socket.destroy()
      socket = await open(ports[app])
      socket.app = app
    }
    const s = socket
    const head = `POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\n` +
      (close ? 'Connection: close\r\n' : '') + (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${size}\r\n`) + '\r\n'
    const parts = frame(body, chunked)
    const answered = new Promise((resolve) => {
      const timer = setTimeout(() => finish(null), 20000)
      const finish = (r) => { clearTimeout(timer); waiter = null; resolve(r) }
      waiter = () => {
        const r = parseOne(buffered)
        if (r !== null && r.status !== 100) {
          buffered = buffered.subarray(r.used)
          return finish(r)
        }
        if (r !== null) { buffered = buffered.subarray(r.used); return waiter() }
        if (s.gone) finish(null)
      }
    })
    // Written as the socket takes it; a write after the server closed is dropped.
    const write = async () => {
      for (const part of [head, ...parts]) {
        if (s.gone || s.destroyed) return
        if (!s.write(part)) await drained(s)
      }
    }
    let written = false
    write().then(() => { written = true }, () => {})
    const r = await answered
    if (over) {
      totals.refused++
      let code = null
      try { code = r && JSON.parse(r.body).code } catch {}
      if (r !== null && r.status === 413 && code === 'ERR_BODY_TOO_LARGE') totals.refusedAnswered++
      else {
        const why = `${r === null ? 'no answer' : `status ${r.status}`} (${app} ${urlPath}, ${chunked ? 'chunked' : 'content-length'}, ${close ? 'close' : 'keep-alive'})`
        totals.lost[why] = (totals.lost[why] || 0) + 1
      }
    } else {
      totals.accepted++
      const expected = `${size} ${crypto.createHash('sha256').update(body).digest('hex')}`
      if (r !== null && r.status === 200 && r.body === expected) totals.acceptedOk++
      else if (r !== null) totals.wrong.push(`${app} ${urlPath} ${size} B: ${r.status} ${r.body.slice(0, 80)}`)
      else totals.lost[`accepted body, no answer (${app} ${urlPath})`] = (totals.lost[`accepted body, no answer (${app} ${urlPath})`] || 0) + 1
    }
    // A body still being written when its answer came cannot be followed by another
    // request on that connection (what a client does then: stop, as curl, or hang).
    if (close || !written || r === null || (r.headers.connection || '').toLowerCase() === 'close') {
      s.destroy()
      socket = null
    }
  }
  if (socket !== null) socket.destroy()
}

/** Resolves at the socket's next 'drain', or its close. */
function drained (socket) {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done)
      socket.off('close', done)
      resolve()
    }
    socket.on('drain', done)
    socket.on('close', done)
  })
}

async function main () {
  console.log(`soak/early: Node ${process.version}, ${useLoadableUws()}`)
  const { ports, child } = await startServer()
  const before = await getJson(ports.uws, '/stats')
  const started = Date.now()
  const deadline = started + SECONDS * 1000
  let peakRss = before.rss
  const sampler = setInterval(() => {
    getJson(ports.uws, '/stats').then((s) => { peakRss = Math.max(peakRss, s.rss) }, () => {})
  }, 2000)
  await Promise.all(Array.from({ length: CLIENTS }, () => runClient(ports, deadline)))
  clearInterval(sampler)
  await new Promise((resolve) => setTimeout(resolve, 500))
  const after = await getJson(ports.uws, '/stats')
  child.kill()
  const share = totals.refused === 0 ? 1 : totals.refusedAnswered / totals.refused
  console.log(`soak/early: ${SECONDS} s, ${CLIENTS} clients: ${totals.refused} refused bodies, ${totals.refusedAnswered} answered 413 with the code (${(share * 100).toFixed(2)}%); ` +
    `${totals.accepted} accepted bodies, ${totals.acceptedOk} answered with their sha256; server RSS peak +${((peakRss - before.rss) / MIB).toFixed(0)} MiB, ` +
    `bytesInUse after ${after.bytesInUse}; wall ${((Date.now() - started) / 1000).toFixed(0)} s`)
  if (Object.keys(totals.lost).length) console.log('not answered:', totals.lost)
  let failed = false
  if (totals.wrong.length) { console.log('WRONG answers to accepted bodies:', totals.wrong.slice(0, 10)); failed = true }
  if (share < 0.99) { console.log('FAIL: fewer than 99% of refused bodies got their answer'); failed = true }
  if (after.bytesInUse !== 0) { console.log('FAIL: body memory held after the load'); failed = true }
  process.exit(failed ? 1 : 0)
}

main().catch((err) => { console.error(err); process.exit(1) })
