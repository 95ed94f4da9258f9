'use strict'
// Every JavaScript snippet in README.md and docs/*.md runs as written, against a real
// server: each ```js block is saved as a file in the repository (so `require('uws-body')`
// is this package), run in its own Node process, and, when it starts a server, sent the
// requests its marker names and held to the answers. A block is preceded by one marker:
//   <!-- run: {"requests": [{ "method": "POST", "path": "/x", ..., "status": 200 }]} -->
//   <!-- not run: why -->          (a fragment, a type signature, ...)
// A request's body: "body" (a string), "json" (a value), "bytes" (that many random
// bytes), "form" ({ name: "value" | { "filename", "bytes" } }); "headers"; what the answer
// must be: "status", "contains" (a string in its body). Port 3000 in a snippet is
// replaced by a free one (helpers/snippet-env.js).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { fork } = require('node:child_process')
const crypto = require('node:crypto')

// Snippets run from inside the package folder (so `require('uws-body')` is it); the
// documents are the repository's.
const root = path.join(__dirname, '..')
const { REPO } = require('./helpers/repository')
const dir = path.join(root, 'target', 'snippets')

function documents () {
  const names = fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => path.join('docs', f))
  return ['README.md', ...names]
}

/** The ```js blocks of a markdown file, each with its marker. */
function snippets (file) {
  const lines = fs.readFileSync(path.join(REPO, file), 'utf8').split('\n')
  const out = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(js|javascript|mjs)\s*$/.exec(lines[i])
    if (!open) continue
    const start = i
    let end = i + 1
    while (end < lines.length && lines[end] !== '```') end++
    let marker = null
    for (let j = start - 1; j >= Math.max(0, start - 3); j--) {
      const m = /^<!-- (run|not run): (.*) -->$/.exec(lines[j].trim())
      if (m) { marker = { kind: m[1], value: m[2] }; break }
      if (lines[j].trim() !== '') break
    }
    out.push({ file, line: start + 1, esm: open[1] === 'mjs', code: lines.slice(start + 1, end).join('\n'), marker })
    i = end
  }
  return out
}

function bodyOf (r) {
  if (r.body !== undefined) return { body: Buffer.from(r.body), type: 'text/plain' }
  if (r.json !== undefined) return { body: Buffer.from(JSON.stringify(r.json)), type: 'application/json' }
  if (r.bytes !== undefined) return { body: crypto.randomBytes(r.bytes), type: 'application/octet-stream' }
  if (r.form !== undefined) {
    const boundary = '----docsnippet' + crypto.randomBytes(8).toString('hex')
    const parts = []
    for (const [name, value] of Object.entries(r.form)) {
      if (typeof value === 'string') {
        parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
      } else {
        parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${value.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), crypto.randomBytes(value.bytes), Buffer.from('\r\n'))
      }
    }
    parts.push(Buffer.from(`--${boundary}--\r\n`))
    return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` }
  }
  return { body: undefined, type: undefined }
}

/** Runs one snippet: starts it, waits for its server, sends its requests; then stops it. */
async function run (snippet, spec) {
  fs.mkdirSync(dir, { recursive: true })
  const name = `${path.basename(snippet.file, '.md')}-${snippet.line}.${snippet.esm ? 'mjs' : 'js'}`
  const file = path.join(dir, name)
  fs.writeFileSync(file, snippet.code + '\n')
  const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS || ''} --require=${path.join(__dirname, 'helpers', 'snippet-env.js')}`.trim() }
  const child = fork(file, [], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  try {
    if (!spec.requests || spec.requests.length === 0) {
      const end = await exited
      assert.equal(end.code, 0, `${snippet.file}:${snippet.line} exited ${end.code}: ${output}`)
      return
    }
    const port = await Promise.race([
      new Promise((resolve) => child.once('message', (m) => resolve(m.port))),
      exited.then((end) => { throw new Error(`${snippet.file}:${snippet.line} exited (${end.code}) before it listened: ${output}`) }),
      new Promise((resolve, reject) => setTimeout(() => reject(new Error(`${snippet.file}:${snippet.line} did not listen within 10 s: ${output}`)), 10000).unref())
    ])
    for (const r of spec.requests) {
      const { body, type } = bodyOf(r)
      const headers = { ...(type ? { 'content-type': type } : {}), ...(r.headers || {}) }
      const answer = await fetch(`http://127.0.0.1:${port}${r.path}`, { method: r.method || 'POST', body, headers, signal: AbortSignal.timeout(10000) })
      const text = await answer.text()
      const what = `${snippet.file}:${snippet.line} ${r.method || 'POST'} ${r.path}`
      assert.equal(answer.status, r.status ?? 200, `${what}: ${text}\n${output}`)
      if (r.contains !== undefined) assert.ok(text.includes(r.contains), `${what}: ${JSON.stringify(text)} lacks ${JSON.stringify(r.contains)}`)
    }
  } finally {
    child.kill()
    await exited
    fs.rmSync(file, { force: true })
  }
}

for (const file of documents()) {
  test(`${file}: every snippet runs as written`, async () => {
    const all = snippets(file)
    for (const snippet of all) {
      assert.ok(snippet.marker, `${file}:${snippet.line}: a js block without <!-- run: ... --> or <!-- not run: why -->`)
      if (snippet.marker.kind === 'not run') {
        assert.ok(snippet.marker.value.length > 3, `${file}:${snippet.line}: say why it is not run`)
        continue
      }
      await run(snippet, JSON.parse(snippet.marker.value))
    }
  })
}
