'use strict'
// node soak/budget.js [--quick] [--clients N] [--size MiB] [--budget MiB] [--pause ms] [--no-budget]
// [--compare]: many concurrent slow uploads whose sum is far over the memory budget
// (setMemoryBudget), against __test__/helpers/budget-server.js in its own process: bare uWS
// (readBody, bodyStream), ultimate-express and Express (raw()). Each client opens its
// connection, then sends one body in pieces with pauses: mostly `size` MiB, some small,
// content-length or chunked; some go away mid-body, some are over the 8 MiB limit.
// Every answer must be 200 with the body's sha256 or 503 ERR_BODY_BUDGET with a
// Retry-After (413 ERR_BODY_TOO_LARGE for the bodies over the limit): none unanswered,
// reset or wrong. It prints the server's peak RSS against its baseline + the budget, the
// admitted throughput, and bytesInUse and the reservations after the load (both must be
// 0). Then, with no collection forced, 5 lone uploads at once must all be admitted: the
// storm's dropped bodies never hold the budget. --compare runs the same load again without
// a budget, side by side.
// Defaults: 2,000 clients x 4 MiB, budget 256 MiB; --quick: 200 x 1 MiB, budget 16 MiB.
// Bounded: each request has a deadline, then the server is stopped.
const net = require('node:net')
const path = require('node:path')
const crypto = require('node:crypto')
const { fork } = require('node:child_process')
const { parseOne } = require('../__test__/helpers/early-clients')
const { random } = require('../__test__/helpers/random')
const { useLoadableUws } = require('../scripts/test-env/loadable-uws')
const { arg, flag, getJson } = require('./common')
const { storm } = require('../__test__/helpers/budget-storm')

const quick = flag('quick')
const MIB = 1024 * 1024
const CLIENTS = arg('clients', quick ? 200 : 2000)
const SIZE = arg('size', quick ? 1 : 4) * MIB
const BUDGET = arg('budget', quick ? 16 : 256) * MIB
// The clients' pace: a piece every PAUSE ms, so that bodies are read concurrently.
const PIECE = 64 * 1024
const PAUSE = arg('pause', quick ? 10 : 250)
// A request's deadline: none may be unanswered past it.
const DEADLINE = quick ? 30000 : 180000
// Connections opened at once (the kernel's accept queue), then the uploads start.
const OPENING = 200
// Uploads sent at once after the storm, none of which may be refused: they fit the budget.
const LONE = 5

const ROUTES = [['uws', '/readBody'], ['uws', '/bodyStream'], ['ultimate', '/raw'], ['express', '/raw']]
const NOISE = crypto.randomBytes(10 * MIB)

function startServer (budget) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, '..', '__test__', 'helpers', 'budget-server.js'), [JSON.stringify({ budget })], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    child.once('message', (ports) => resolve({ ports, child }))
    child.once('exit', (code) => reject(new Error(`budget-server exited (${code})`)))
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** One request's plan: route, size, framing, and whether the client goes away mid-body. */
function plan (rnd, i) {
  const [app, urlPath] = ROUTES[i % ROUTES.length]
  const r = rnd()
  const kind = r < 0.05 ? 'abort' : r < 0.1 ? 'over' : r < 0.3 ? 'small' : 'large'
  const size = kind === 'over' ? 9 * MIB : kind === 'small' ? Math.floor(rnd() * 64 * 1024) : SIZE
  return { app, urlPath, kind, size, chunked: rnd() < 0.3, seed: i }
}

function frame (body, chunked) {
  const pieces = []
  for (let at = 0; at < body.length; at += PIECE) {
    const piece = body.subarray(at, at + PIECE)
    pieces.push(chunked ? Buffer.concat([Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n')]) : piece)
  }
  if (chunked) pieces.push(Buffer.from('0\r\n\r\n'))
  return pieces
}

/** Sends one request slowly; resolves with its outcome. */
function upload (ports, p, gate) {
  const body = NOISE.subarray(p.seed % MIB, p.seed % MIB + p.size)
  return new Promise((resolve) => {
    const socket = net.connect(ports[p.app], '127.0.0.1')
    socket.setNoDelay(true)
    let received = Buffer.alloc(0)
    let answer = null
    let done = false
    const timer = setTimeout(() => finish('unanswered'), DEADLINE)
    let sent = 0
    let began = 0
    const finish = (outcome) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ ...p, outcome, answer, sent, ms: began === 0 ? 0 : Date.now() - began })
    }
    socket.on('data', (d) => {
      received = Buffer.concat([received, d])
      const r = parseOne(received)
      if (r !== null && r.status !== 100) {
        answer = r
        finish('answered')
      }
    })
    socket.on('error', (e) => finish(p.kind === 'abort' ? 'gone' : `reset (${e.code})`))
    socket.on('close', () => finish(p.kind === 'abort' ? 'gone' : 'closed without an answer'))
    socket.once('connect', async () => {
      await gate
      const head = `POST ${p.urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\n` +
        (p.chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${p.size}\r\n`) + '\r\n'
      began = Date.now()
      socket.write(head)
      const pieces = frame(body, p.chunked)
      const stopAt = p.kind === 'abort' ? Math.floor(pieces.length / 2) : pieces.length
      for (let i = 0; i < stopAt && !done; i++) {
        await sleep(PAUSE)
        if (done || socket.destroyed) return
        if (!socket.write(pieces[i])) await new Promise((resolve) => socket.once('drain', resolve))
        sent += pieces[i].length
      }
      if (p.kind === 'abort') finish('gone')
    })
  })
}

function check (r, totals) {
  const code = (() => { try { return JSON.parse(r.answer.body).code } catch { return null } })()
  if (r.kind === 'abort') {
    totals.gone++
    return
  }
  if (r.outcome !== 'answered') return totals.lost.push(`${r.app} ${r.urlPath} ${r.kind} ${r.chunked ? 'chunked' : 'length'}: ${r.outcome} after ${r.ms} ms, ${r.sent} of ${r.size} B sent`)
  const status = r.answer.status
  if (status === 200) {
    const body = NOISE.subarray(r.seed % MIB, r.seed % MIB + r.size)
    if (r.kind !== 'over' && r.answer.body === `${r.size} ${crypto.createHash('sha256').update(body).digest('hex')}`) {
      totals.ok++
      totals.okBytes += r.size
      return
    }
  } else if (status === 503 && code === 'ERR_BODY_BUDGET' && r.answer.headers['retry-after'] === '1') {
    totals.budget++
    return
  } else if (status === 413 && code === 'ERR_BODY_TOO_LARGE' && r.kind === 'over') {
    totals.tooLarge++
    return
  }
  totals.wrong.push(`${r.app} ${r.urlPath} ${r.kind} ${r.size} B: ${status} ${r.answer.body.slice(0, 80)}`)
}

async function run (budget) {
  const { ports, child } = await startServer(budget)
  try {
    const before = await getJson(ports.uws, '/stats?gc=1')
    const rnd = random(20261206)
    const plans = Array.from({ length: CLIENTS }, (_, i) => plan(rnd, i))
    let open
    const gate = new Promise((resolve) => { open = resolve })
    const results = []
    // Connections are opened OPENING at a time, then every upload starts at once.
    const pending = []
    for (let i = 0; i < plans.length; i += OPENING) {
      const batch = plans.slice(i, i + OPENING).map((p) => upload(ports, p, gate))
      pending.push(...batch)
      await sleep(50)
    }
    const started = Date.now()
    open()
    results.push(...await Promise.all(pending))
    const seconds = (Date.now() - started) / 1000
    // After the storm, with no collection forced: lone uploads that fit are admitted.
    const lone = await storm(ports.uws, { clients: LONE, size: SIZE, pieces: 16, pause: 20, seed: CLIENTS })
    const after = await getJson(ports.uws, '/stats?gc=1')
    const totals = { ok: 0, okBytes: 0, budget: 0, tooLarge: 0, gone: 0, lost: [], wrong: [] }
    for (const r of results) check(r, totals)
    return { budget, before, after, totals, seconds, lone }
  } finally {
    child.kill()
  }
}

function report ({ budget, before, after, totals, seconds, lone }) {
  const mib = (n) => (n / MIB).toFixed(0)
  const label = budget === null ? 'no budget' : `budget ${mib(budget)} MiB`
  console.log(`soak/budget, ${label}: ${CLIENTS} clients (${mib(SIZE)} MiB bodies, ${PIECE / 1024} KiB every ${PAUSE} ms) in ${seconds.toFixed(1)} s: ` +
    `${totals.ok} x 200 intact (${mib(totals.okBytes)} MiB, ${(totals.okBytes / MIB / seconds).toFixed(0)} MiB/s admitted), ` +
    `${totals.budget} x 503 ERR_BODY_BUDGET, ${totals.tooLarge} x 413, ${totals.gone} went away, ${totals.lost.length} unanswered/reset, ${totals.wrong.length} wrong`)
  console.log(`  server RSS: baseline ${mib(before.rss)} MiB, peak ${mib(after.peakRss)} MiB (+${mib(after.peakRss - before.rss)} MiB); ` +
    `peak bytesInUse ${mib(after.peakInUse)} MiB, peak reserved ${mib(after.peakReserved)} MiB; ` +
    `after: bytesInUse ${after.bytesInUse}, reserved ${after.budgetReserved}, pooled ${mib(after.bytesPooled)} MiB, refusals ${after.budgetRefusals}`)
  console.log(`  after the storm, before any GC: ${lone.ok} of ${LONE} lone uploads intact, ${lone.budget} x 503, ${lone.wrong.length} wrong`)
  if (totals.lost.length) console.log('  unanswered:', totals.lost.slice(0, 10))
  if (totals.wrong.length) console.log('  WRONG:', totals.wrong.slice(0, 10))
  let failed = totals.lost.length > 0 || totals.wrong.length > 0 || after.bytesInUse !== 0 || after.budgetReserved !== 0 || lone.ok !== LONE
  if (budget !== null) {
    // The margin: the pool's idle blocks (its bound), and 128 MiB for the rest of the
    // process (V8's heap, uWS's buffers, the frameworks, JS-tier Buffers handed out).
    const margin = after.poolLimit + 128 * MIB
    const over = after.peakRss - before.rss > budget + margin
    console.log(`  peak RSS - baseline ${mib(after.peakRss - before.rss)} MiB <= budget + pool bound + 128 MiB = ${mib(budget + margin)} MiB: ${over ? 'NO' : 'yes'}`)
    if (over || after.peakReserved > budget) failed = true
  }
  return failed
}

async function main () {
  console.log(`soak/budget: Node ${process.version}, ${useLoadableUws()}`)
  const runs = [flag('no-budget') ? null : BUDGET]
  if (flag('compare')) runs.push(null)
  let failed = false
  for (const budget of runs) failed = report(await run(budget)) || failed
  process.exit(failed ? 1 : 0)
}

main().catch((err) => { console.error(err); process.exit(1) })
