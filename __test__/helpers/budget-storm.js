'use strict'
// A storm of slow uploads against helpers/budget-server.js in its own process (no
// --expose-gc: nothing forces a collection), shared by the budget tests and soak/budget.js.
const { getJson } = require('./get-json')
const net = require('node:net')
const path = require('node:path')
const crypto = require('node:crypto')
const { fork } = require('node:child_process')
const { parseOne } = require('./early-clients')

const MIB = 1024 * 1024
const SERVER = path.join(__dirname, 'budget-server.js')
const NOISE = crypto.randomBytes(8 * MIB)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Starts the server with `config` ({ budget, poolLimit }, bytes). Resolves with
 * { ports, stats(), stop() }. `execArgv` is the child's Node flags: none by default, so
 * the test runner's --expose-gc is not inherited.
 */
function startBudgetServer (config, { execArgv = [] } = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(SERVER, [JSON.stringify(config)], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    child.once('message', (ports) => resolve({
      ports,
      stats: () => getJson(ports.uws, '/stats'),
      stop: () => child.kill()
    }))
    child.once('exit', (code) => reject(new Error(`budget-server exited (${code})`)))
  })
}

/** The body of upload `seed`: `size` bytes of NOISE. */
const bodyOf = (seed, size) => NOISE.subarray((seed * 4099) % MIB, (seed * 4099) % MIB + size)
const sha = (buf) => crypto.createHash('sha256').update(buf).digest('hex')

/** One upload with a content-length, in `pieces` writes `pause` ms apart; resolves with its answer or a failure. */
function upload (port, urlPath, body, pieces, pause, deadline) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setNoDelay(true)
    let received = Buffer.alloc(0)
    let done = false
    const finish = (r) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve(r)
    }
    const timer = setTimeout(() => finish({ failure: 'unanswered' }), deadline)
    socket.on('data', (d) => {
      received = Buffer.concat([received, d])
      const r = parseOne(received)
      if (r !== null && r.status !== 100) finish({ answer: r })
    })
    socket.on('error', (e) => finish({ failure: `reset (${e.code})` }))
    socket.on('close', () => finish({ failure: 'closed without an answer' }))
    socket.once('connect', async () => {
      socket.write(`POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\nContent-Length: ${body.length}\r\n\r\n`)
      const piece = Math.ceil(body.length / pieces)
      for (let at = 0; at < body.length && !done; at += piece) {
        await sleep(pause)
        if (done || socket.destroyed) return
        if (!socket.write(body.subarray(at, at + piece))) await new Promise((resolve) => socket.once('drain', resolve))
      }
    })
  })
}

/**
 * `clients` uploads of `size` bytes to bare uWS's /readBody, all at once, each in
 * `pieces` writes `pause` ms apart. Resolves with { ok, budget, wrong: [] }: ok the
 * answers 200 with the body's length and sha256, budget the 503 ERR_BODY_BUDGET with a
 * Retry-After, wrong every other outcome.
 */
async function storm (port, { clients, size, pieces, pause, seed = 0, urlPath = '/readBody', deadline = 60000 }) {
  const bodies = Array.from({ length: clients }, (_, i) => bodyOf(seed + i, size))
  const results = await Promise.all(bodies.map((body) => upload(port, urlPath, body, pieces, pause, deadline)))
  const totals = { ok: 0, budget: 0, wrong: [] }
  results.forEach((r, i) => {
    if (r.failure) return totals.wrong.push(r.failure)
    const { status, body, headers } = r.answer
    if (status === 200 && body === `${size} ${sha(bodies[i])}`) return totals.ok++
    const code = (() => { try { return JSON.parse(body).code } catch { return null } })()
    if (status === 503 && code === 'ERR_BODY_BUDGET' && headers['retry-after'] === '1') return totals.budget++
    totals.wrong.push(`${status} ${body.slice(0, 80)}`)
  })
  return totals
}

module.exports = { startBudgetServer, storm, MIB }
