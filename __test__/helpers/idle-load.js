'use strict'
// A load of mixed bodies on an idle-server.js child, then its memory over time.
const { getJson } = require('./get-json')
const path = require('node:path')
const http = require('node:http')
const crypto = require('node:crypto')
const { fork } = require('node:child_process')

const MIB = 1024 * 1024
const SERVER = path.join(__dirname, 'idle-server.js')
const MIN_BODY = 4 * 1024
const MAX_BODY = 32 * MIB
const NOISE = crypto.randomBytes(MAX_BODY)

/** Starts idle-server.js with reader `kind` (no --expose-gc): { port, stats(), stop() }. */
function startIdleServer (kind) {
  return new Promise((resolve, reject) => {
    const child = fork(SERVER, [kind], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    child.once('message', ({ port }) => resolve({
      port,
      stats: () => getJson(port, '/stats'),
      stop: () => child.kill()
    }))
    child.once('exit', (code) => reject(new Error(`idle-server exited (${code})`)))
  })
}

/** Body sizes spread evenly over the powers of two from 4 KiB to 32 MiB, from a seed. */
function sizes (seed) {
  let x = seed * 2654435761 >>> 0
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    const size = Math.round(MIN_BODY * 2 ** ((x / 2 ** 32) * Math.log2(MAX_BODY / MIN_BODY)))
    return Math.min(MAX_BODY, Math.max(MIN_BODY, size))
  }
}

function post (agent, port, size) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/raw', method: 'POST', agent, headers: { 'content-length': size } }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('end', () => Number(text) === size ? resolve() : reject(new Error(`POST of ${size} bytes answered ${res.statusCode} ${text}`)))
    })
    req.on('error', reject)
    req.end(NOISE.subarray(0, size))
  })
}

/** `clients` keep-alive connections posting mixed bodies for `ms`: resolves with { requests, bytes }. */
async function mixedLoad (port, { clients = 8, ms = 4000 } = {}) {
  const until = Date.now() + ms
  const totals = { requests: 0, bytes: 0 }
  const agents = []
  await Promise.all(Array.from({ length: clients }, async (_, i) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    agents.push(agent)
    const next = sizes(i + 1)
    while (Date.now() < until) {
      const size = next()
      await post(agent, port, size)
      totals.requests++
      totals.bytes += size
    }
  }))
  for (const agent of agents) agent.destroy()
  return totals
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

module.exports = { startIdleServer, mixedLoad, sleep, MIB }
