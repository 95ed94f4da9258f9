'use strict'
// The examples as a newcomer runs them (`node examples/x.js`, each in its own process on
// the port it prints): what they answer to a body they take, and to one they refuse,
// over node:http without keep-alive (Connection: close), the client most likely to lose
// an answer written while it is still sending.
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const http = require('node:http')
const path = require('node:path')
const { spawn } = require('node:child_process')

const MIB = 1024 * 1024
const TRIES = 8

/** Starts examples/<name> on a free port; resolves with { port, stop }. */
function start (name) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'examples', name)], {
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (!m) return
      const port = Number(m[1])
      // PORT=0 is a free port (the OS picks one), as a newcomer running two examples needs.
      if (port === 3000) {
        child.kill()
        reject(new Error(`examples/${name} listened on 3000 with PORT=0`))
      } else resolve({ port, stop: () => child.kill() })
    })
    child.once('exit', (code) => reject(new Error(`examples/${name} exited (${code}) before listening: ${out}`)))
  })
}

/** One request without keep-alive; resolves with { status, headers, body } or { error }. */
function send (port, { method = 'POST', urlPath = '/', headers = {}, body }) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers, agent: false }, (res) => {
      const parts = []
      res.on('data', (d) => parts.push(d))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts).toString() }))
      res.on('error', (err) => resolve({ error: err.code }))
    })
    req.on('error', (err) => resolve({ error: err.code }))
    req.end(body)
  })
}

function form (boundary, parts) {
  const chunks = []
  for (const { name, filename, data } of parts) {
    const disposition = `form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}`
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${filename ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`), Buffer.from(data), Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

async function tries (fn) {
  const got = []
  for (let i = 0; i < TRIES; i++) got.push(await fn())
  return got
}

test('examples/server.js (npm start): the length and sha256 of a body; a body over its 64 MiB limit gets 413 and its code', async () => {
  const server = await start('server.js')
  try {
    const body = crypto.randomBytes(3 * MIB)
    const r = await send(server.port, { body })
    assert.equal(r.status, 200)
    assert.deepEqual(JSON.parse(r.body), { length: body.length, sha256: crypto.createHash('sha256').update(body).digest('hex') })
    const big = Buffer.alloc(65 * MIB, 0x61)
    for (const refused of await tries(() => send(server.port, { body: big }))) {
      assert.equal(refused.status, 413, JSON.stringify(refused))
      assert.equal(JSON.parse(refused.body).code, 'ERR_BODY_TOO_LARGE')
    }
  } finally {
    server.stop()
  }
})

test('examples/multipart.js: a small photo is taken; a 20 MiB one gets 413 LIMIT_FILE_SIZE every time', async () => {
  const server = await start('multipart.js')
  const boundary = 'example'
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` }
  try {
    const ok = await send(server.port, { urlPath: '/avatar', headers, body: form(boundary, [{ name: 'title', data: 'me' }, { name: 'photo', filename: 'me.jpg', data: Buffer.alloc(1000, 1) }]) })
    assert.equal(ok.status, 200)
    assert.equal(ok.body, 'me: me.jpg, 1000 bytes\n')
    const big = form(boundary, [{ name: 'title', data: 'me' }, { name: 'photo', filename: 'big.jpg', data: Buffer.alloc(20 * MIB, 1) }])
    for (const refused of await tries(() => send(server.port, { urlPath: '/avatar', headers, body: big }))) {
      assert.equal(refused.status, 413, JSON.stringify(refused))
      assert.equal(JSON.parse(refused.body).code, 'LIMIT_FILE_SIZE')
    }
  } finally {
    server.stop()
  }
})

test('examples/stream-to-file.js: an upload is stored and hashed; a body that is not gzip as it says gets 400 and its code', async () => {
  const server = await start('stream-to-file.js')
  try {
    const body = crypto.randomBytes(2 * MIB)
    const stored = await send(server.port, { method: 'PUT', urlPath: '/upload', body })
    assert.equal(stored.body, `stored ${body.length} bytes\n`)
    const hashed = await send(server.port, { urlPath: '/hash', body })
    assert.equal(hashed.body, `${crypto.createHash('sha256').update(body).digest('hex')}\n`)
    for (const refused of await tries(() => send(server.port, { urlPath: '/upload', headers: { 'content-encoding': 'gzip' }, body: Buffer.alloc(8 * MIB, 0x61) }))) {
      assert.equal(refused.status, 400, JSON.stringify(refused))
      assert.equal(JSON.parse(refused.body).code, 'ERR_BODY_ENCODING_INVALID')
    }
  } finally {
    server.stop()
  }
})

test('examples/ultimate-express.js: JSON is parsed; JSON over its 1 MiB limit gets 413 and its code', async () => {
  const server = await start('ultimate-express.js')
  const headers = { 'content-type': 'application/json' }
  try {
    const r = await send(server.port, { urlPath: '/json', headers, body: '{"a":1}' })
    assert.deepEqual(JSON.parse(r.body), { got: { a: 1 } })
    const big = Buffer.from(JSON.stringify({ a: 'x'.repeat(8 * MIB) }))
    for (const refused of await tries(() => send(server.port, { urlPath: '/json', headers, body: big }))) {
      assert.equal(refused.status, 413, JSON.stringify(refused))
      assert.equal(JSON.parse(refused.body).code, 'ERR_BODY_TOO_LARGE')
    }
  } finally {
    server.stop()
  }
})
