'use strict'
// Memory: 64 concurrent 8 MiB uploads, chunks interleaved as they would arrive (65483 B),
// every body held at the end. Peak RSS growth over the bytes held, per contender, each in
// a fresh child process so one cannot warm or fragment the heap for another.
require('./tune')
const { fork } = require('node:child_process')
const { copyConcat, jsPrealloc, uwsBody } = require('./contenders')
const { table } = require('./stats')

const MIB = 1024 * 1024
const UPLOADS = 64
const SIZE = 8 * MIB
const CHUNK = 65483

function child (name) {
  const make = { a: copyConcat, b: jsPrealloc, c: uwsBody }[name]
  const chunk = new ArrayBuffer(CHUNK)
  new Uint8Array(chunk).fill(7)
  const base = process.memoryUsage().rss
  let peak = base
  const readers = Array.from({ length: UPLOADS }, () => make(SIZE, 16 * MIB))
  for (let at = 0; at < SIZE; at += CHUNK) {
    const n = Math.min(CHUNK, SIZE - at)
    for (const r of readers) r.push(n === CHUNK ? chunk : chunk.slice(0, n))
    peak = Math.max(peak, process.memoryUsage().rss)
  }
  const bodies = readers.map((r) => r.finish())
  peak = Math.max(peak, process.memoryUsage().rss)
  const held = bodies.reduce((s, b) => s + b.length, 0)
  process.send({ name, peak: peak - base, held })
}

function run () {
  const results = []
  return ['a', 'b', 'c'].reduce((p, name) => p.then(() => new Promise((resolve, reject) => {
    const c = fork(__filename, ['--child', name])
    c.once('message', (m) => { results.push(m); resolve() })
    c.once('error', reject)
  })), Promise.resolve()).then(() => results)
}

function render (results) {
  const names = { a: '(a) copy+concat', b: '(b) JS prealloc', c: '(c) uws-body' }
  return table(['contender', 'bytes held', 'peak RSS growth', 'peak / held'],
    results.map((r) => [names[r.name], `${(r.held / MIB).toFixed(0)} MiB`, `${(r.peak / MIB).toFixed(0)} MiB`, (r.peak / r.held).toFixed(2)]))
}

module.exports = { run, render }

if (process.argv[2] === '--child') child(process.argv[3])
else if (require.main === module) run().then((r) => console.log(render(r)))
