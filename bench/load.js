'use strict'
// A small keep-alive HTTP/1.1 load generator for 127.0.0.1: `connections` sockets each
// send the same POST (with optional extra headers), wait for the answer and send again, for `seconds`. Bounded in time.
// For checks, not for timing: a few connections from a Node client leave the server idle
// part of the time, which hides a per-request cost (it reported parity where a saturated
// server showed a gap). Server CPU per request under load comes from bench/saturate.js
// (wrk, 16 connections, the server pinned to its own core).
const http = require('node:http')
const net = require('node:net')
const os = require('node:os')
const { execFileSync } = require('node:child_process')

function load (port, { path, body, headers = {}, connections = 4, seconds = 1 }) {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')
  const head = Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Content-Length: ${body.length}\r\n\r\n`)
  const deadline = Date.now() + seconds * 1000
  let completed = 0
  const one = () => new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setNoDelay(true)
    let pending = ''
    const send = () => {
      if (Date.now() >= deadline) { socket.end(); return resolve() }
      socket.write(head)
      socket.write(body)
    }
    socket.on('connect', send)
    socket.on('error', reject)
    socket.on('data', (data) => {
      pending += data.toString('latin1')
      const end = pending.indexOf('\r\n\r\n')
      if (end < 0) return
      const m = /content-length: *(\d+)/i.exec(pending.slice(0, end))
      const need = end + 4 + (m ? Number(m[1]) : 0)
      if (pending.length < need) return
      if (!pending.startsWith('HTTP/1.1 200')) return reject(new Error(pending.slice(0, 80)))
      pending = pending.slice(need)
      completed++
      send()
    })
  })
  const start = process.hrtime.bigint()
  return Promise.all(Array.from({ length: connections }, one)).then(() => ({
    completed,
    seconds: Number(process.hrtime.bigint() - start) / 1e9
  }))
}

/** GET `path` on 127.0.0.1:`port` without keep-alive; resolves with the body as a string. */
const get = (port, path) => new Promise((resolve, reject) => {
  http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
    let s = ''
    res.on('data', (d) => { s += d })
    res.on('end', () => resolve(s))
  }).on('error', reject)
})

/** POST `body` once, without keep-alive; resolves with { status, text } (the answer's body). */
const post = (port, path, headers, body) => new Promise((resolve, reject) => {
  const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { ...headers, 'content-length': body.length } }, (res) => {
    let s = ''
    res.setEncoding('utf8')
    res.on('data', (d) => { s += d })
    res.on('end', () => resolve({ status: res.statusCode, text: s }))
  })
  req.on('error', reject)
  req.end(body)
})

/**
 * The port a forked server process sends once it listens. Rejects if the process ends
 * (or cannot start) first, so that a server that fails does not leave the bench waiting
 * for ever.
 */
function portOf (child) {
  return new Promise((resolve, reject) => {
    const exited = (code, signal) => reject(new Error(`bench: the server (pid ${child.pid}) ended before listening: ${signal || `exit ${code}`}`))
    child.once('exit', exited)
    child.once('error', reject)
    child.once('message', (m) => {
      child.off('exit', exited)
      pinApart(child.pid)
      resolve(m.port)
    })
  })
}

/**
 * Servers on the last core, this process (the load) on the others, where taskset exists
 * and there are two cores or more (BENCH_PIN=0: not). Unpinned on 2 cores, a server
 * sometimes shares a core with the load and sometimes not, and the same server's CPU per
 * request moved by up to 1.4x between processes (bench/RESULTS.md).
 */
function pinApart (pid) {
  // The machine's cores, not this process's (availableParallelism counts its own affinity).
  const cores = os.cpus().length
  if (process.env.BENCH_PIN === '0' || cores < 2) return
  try {
    execFileSync('taskset', ['-apc', String(cores - 1), String(pid)], { stdio: 'ignore' })
    execFileSync('taskset', ['-apc', `0-${cores - 2}`, String(process.pid)], { stdio: 'ignore' })
  } catch {
    // No taskset: the servers run where the kernel puts them.
  }
}

module.exports = { load, get, post, portOf }
