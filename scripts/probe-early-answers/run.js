'use strict'
// What clients receive when a uWS server answers before the request body has ended, for
// each way of answering (server.js) and each client (clients.js). Prints a markdown table
// of answers received per cell, with the failures' error codes. The numbers in
// docs/early-answers.md come from it.
//   node scripts/probe-early-answers/run.js [--port N] [--tries N] [--size MiB] [--only re]
// Without --port it starts server.js itself with this Node and the uWS build it loads
// (on the host: the 20.30 fork, with NODE_OPTIONS=--require scripts/test-env/uws.js and
// UWS_BODY_UWS_DIR). For 20.57 start server.js in the Debian 13 root
// (scripts/trixie.sh node scripts/probe-early-answers/server.js 0) and pass --port.
const path = require('node:path')
const http = require('node:http')
const { spawn } = require('node:child_process')
const { client, curlPath } = require('../../__test__/helpers/early-clients')

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const TRIES = Number(arg('tries', 20))
const SIZE = Number(arg('size', 20)) * 1024 * 1024
const ONLY = arg('only', null)

const SERVER_CASES = [
  ['end, in the handler, no onData', '/end?when=now&ondata=none'],
  ['end, in the handler, onData attached', '/end?when=now&ondata=keep'],
  ['end, after 1 MiB (onData stays)', '/end?when=first'],
  ['end(body, true), after 1 MiB', '/endclose?when=first'],
  ['close(), after 1 MiB', '/close?when=first'],
  ['endWithoutBody(), after 1 MiB', '/ewb?when=first'],
  ['write(body) after 1 MiB, end() at the body\'s end', '/write?when=first'],
  ['end(body) deferred to the body\'s end', '/defer?when=first'],
  ['end(body) + Connection: close header, after 1 MiB', '/hdrclose?when=first'],
  ['pause() + end(body) + Connection: close header, after 1 MiB', '/pauseend?when=first'],
  ['whole answer through writeStatus, close() at the body\'s end', '/raw?when=first']
]

const CLIENTS = [
  ['node:http keep-alive', 'http-ka', {}],
  ['node:http no keep-alive (Connection: close)', 'http-close', {}],
  ['fetch (keep-alive)', 'fetch', {}],
  ['curl (keep-alive)', 'curl', {}],
  ['curl Connection: close', 'curl', { close: true }],
  ['raw keep-alive (+ next request)', 'raw', { close: false }],
  ['raw Connection: close', 'raw', { close: true }]
]

function startServer () {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'server.js'), '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (line) => {
      const m = /port (\d+)/.exec(line)
      if (m) resolve({ port: Number(m[1]), stop: () => child.kill() })
    })
    child.on('exit', (code) => reject(new Error(`server exited ${code}`)))
  })
}

function getReport (port) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/report', agent: false }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve(JSON.parse(text)))
    }).on('error', reject)
  })
}

async function main () {
  const external = arg('port', null)
  const server = external ? { port: Number(external), stop () {} } : await startServer()
  const body = Buffer.alloc(SIZE, 0x61)
  const hasCurl = curlPath() !== null
  const rows = []
  console.log(`# ${TRIES} tries per cell, ${SIZE / 1048576} MiB body, refused past 1 MiB; ok = status 413 and the body (its code) received`)
  for (const [caseName, url] of SERVER_CASES) {
    for (const framing of ['content-length', 'chunked']) {
      const cells = []
      for (const [clientName, kind, opts] of CLIENTS) {
        const label = `${caseName} | ${framing} | ${clientName}`
        if (ONLY && !new RegExp(ONLY).test(label)) continue
        if (kind === 'curl' && !hasCurl) { cells.push([clientName, 'no curl']); continue }
        const c = client(kind, { port: server.port, chunked: framing === 'chunked', timeout: 4000, ...opts })
        const failures = {}
        let ok = 0
        let nextOk = 0
        let nextTried = 0
        for (let i = 0; i < TRIES; i++) {
          const r = await c.send(url, body)
          const got = r.ok && r.status === 413 && /ERR_BODY_TOO_LARGE/.test(r.body)
          if (got) ok++
          else {
            const why = r.ok ? `status ${r.status}${r.body === '' ? ' empty body' : ''}` : r.error
            failures[why] = (failures[why] || 0) + 1
          }
          if (r.next !== undefined) {
            nextTried++
            if (r.next === 200) nextOk++
          }
        }
        c.close()
        const report = await getReport(server.port)
        let cell = `${ok}/${TRIES}`
        const fails = Object.entries(failures).map(([k, v]) => `${k} ${v}`).join(', ')
        if (fails) cell += ` (${fails})`
        if (nextTried) cell += `; next request ${nextOk}/${nextTried}`
        cells.push([clientName, cell, report])
        console.error(`${label}: ${cell}; server: ${JSON.stringify(report)}`)
      }
      rows.push([caseName, framing, cells])
    }
  }
  server.stop()
  console.log()
  for (const [caseName, framing, cells] of rows) {
    for (const [clientName, cell] of cells) console.log(`| ${caseName} | ${framing} | ${clientName} | ${cell} |`)
  }
}

main().catch((err) => { console.error(err); process.exit(1) })
