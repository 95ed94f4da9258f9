'use strict'
// The servers of one advisory test (__test__/advisories/), in a child process so that a
// body that holds its event loop cannot hold the test's: argv[2] is the test file, whose
// advisory() call (helpers/advisory.js) gives the routes here. Each route is mounted on
// Express 5 (node:http) and ultimate-express (its `middleware`) and on bare uWS (its `read`:
// readMultipart's options), at POST /r/<route>; each server answers GET /ping.
// GET /stats (on the bare uWS server) says what a case left: the longest the event loop
// was held since `?reset`, the descriptors open, files in the storage directory, native bytes
// and budget (after a GC with `?gc`), the errors the routes met since `?reset`, and the
// keys Object.prototype or Array.prototype gained.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const uWS = require('uWebSockets.js')
const express = require('express')
const ultimateExpress = require('ultimate-express')
const uwsBody = require('../..')

process.env.UWS_BODY_ADVISORY_SERVER = '1'
const { takeSpec, view } = require('./advisory')
require(process.argv[2])
const { routes } = takeSpec()
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-advisory-'))
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
const ctx = { dir }

// The event loop's longest hold: the gap between 10 ms ticks, counted only while the
// process ran (CPU time), so that a busy shared machine descheduling it is not a hold, and
// less the time this harness spent on its own work in it (a forced GC, removing files).
const TICK = 10
let held = 0
let excused = 0
let lastWall = performance.now()
let lastCpu = cpuMs()
function cpuMs () {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
setInterval(() => {
  const wall = performance.now()
  const cpu = cpuMs()
  held = Math.max(held, Math.min(wall - lastWall, cpu - lastCpu) - TICK - excused)
  excused = 0
  lastWall = wall
  lastCpu = cpu
}, TICK)

/** Runs the harness's own work, which is not the code under test, outside the hold measured. */
function harness (work) {
  const start = performance.now()
  try {
    return work()
  } finally {
    excused += performance.now() - start
  }
}

let seen = []
const record = (target, route, err) => seen.push({ target, route, status: err.status || err.statusCode || 500, code: err.code })

/** The files a request stored (req.file, req.files in any shape), described, each removed from disk. */
function filesOf (file, files) {
  const list = [file, ...(Array.isArray(files) ? files : Object.values(files || {}).flat())].filter(Boolean)
  harness(() => { for (const f of list) if (f.path) fs.rmSync(f.path, { force: true }) })
  return list.map((f) => ({ fieldname: f.fieldname, originalname: f.originalname, mimetype: f.mimetype, size: f.size }))
}

function mount (app, target) {
  for (const [name, route] of Object.entries(routes)) {
    if (!route.middleware || (route.targets && !route.targets.includes(target))) continue
    const chain = [route.before, route.middleware(ctx)].filter(Boolean)
    app.post(`/r/${name}`, ...chain, (req, res) => res.json({ body: view(req.body), files: filesOf(req.file, req.files) }))
  }
  app.get('/ping', (req, res) => res.send('pong'))
  app.use((err, req, res, next) => {
    record(target, req.path.slice(3), err)
    if (!res.headersSent) res.status(err.status || err.statusCode || 500).json({ code: err.code })
  })
}

const answer = (res, status, value) => {
  if (!res.aborted) res.cork(() => res.writeStatus(String(status)).end(JSON.stringify(value)))
}

const bare = uWS.App()
for (const [name, route] of Object.entries(routes)) {
  if (!route.read) continue
  bare.post(`/r/${name}`, (res, req) => {
    let reading
    try {
      reading = uwsBody.readMultipart(res, req, route.read(ctx))
    } catch (err) {
      // A mistake in the options: thrown at the call, answered before the handler returns.
      record('uws', name, { status: 500, code: err.code || err.name })
      return res.writeStatus('500').end(JSON.stringify({ code: err.code || err.name }))
    }
    reading.then(({ fields, files }) => answer(res, 200, { body: view(fields), files: filesOf(undefined, files) }), (err) => {
      record('uws', name, err)
      answer(res, err.status || 500, { code: err.code })
    })
  })
}
bare.get('/ping', (res) => res.end('pong'))
bare.get('/stats', (res, req) => {
  const query = req.getQuery()
  const longest = held
  res.onAborted(() => { res.aborted = true })
  settle(query === 'gc').then((native) => {
    const out = { held: longest, fds: harness(openFds), files: harness(() => fs.readdirSync(dir, { recursive: true })), ...native, errors: seen, prototypeKeys: [...Object.keys(Object.prototype), ...Object.keys(Array.prototype)] }
    if (query === 'reset') {
      held = 0
      seen = []
    }
    answer(res, 200, out)
  })
})

/** What each open descriptor is (a socket, a file, a pipe), so that one left says what it is. */
function openFds () {
  const out = []
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      out.push(fs.readlinkSync(`/proc/self/fd/${fd}`))
    } catch {} // the directory's own descriptor, closed by now
  }
  return out
}

/** Native bytes and budget; after a GC (`collect`), once the Buffers handed out are garbage. */
async function settle (collect) {
  for (let i = 0; collect && i < 4; i++) {
    harness(global.gc)
    await new Promise(setImmediate)
  }
  const { bytesInUse, budgetReserved } = uwsBody.stats()
  return { bytesInUse, budgetReserved }
}

const ex = express()
ex.set('env', 'test')
mount(ex, 'express')
// No file-serving worker thread: nothing here serves files.
const ue = ultimateExpress({ threads: 0 })
ue.set('env', 'test')
mount(ue, 'ultimate')
const server = ex.listen(0, '127.0.0.1', () => {
  ue.listen(0, '127.0.0.1', () => {
    bare.listen('127.0.0.1', 0, (token) => {
      process.stdout.write(JSON.stringify({ express: server.address().port, ultimate: ue.port, uws: uWS.us_socket_local_port(token) }) + '\n')
    })
  })
})
