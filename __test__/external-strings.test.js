'use strict'
// finishString makes a one-byte string of 256 KiB or more from the body's own memory
// (src/node/string.rs, EXTERNAL_MIN): the string is what Buffer.toString gives, the memory is held while
// the string lives (and V8 is told about it), and it comes back once the string is garbage,
// whether the string was kept, dropped, sliced or flattened into another.
const test = require('node:test')
const assert = require('node:assert/strict')
const { runChild, ending } = require('./helpers/child')

const NODE_MAJOR = Number(process.versions.node.split('.')[0])

test('one-byte strings of 256 KiB and more: equal to Buffer.toString, the memory held while the string lives and given back after', () => {
  const source = `
    const uwsBody = require(ROOT)
    const { setImmediate: tick } = require('node:timers/promises')
    const collect = async () => { for (let i = 0; i < 4; i++) { globalThis.gc(); await tick() } }
    const MIB = 1024 * 1024
    // ASCII; UTF-8 whose characters all fit one byte (rewritten to Latin-1 in the block);
    // Latin-1 bytes read as latin1; and UTF-8 that does not fit (V8 decodes it, a copy).
    const bodies = [
      ['ascii utf8', Buffer.alloc(4 * MIB, 'ascii text, line after line\\n'), 'utf8'],
      ['café utf8', Buffer.from('{"name":"caf\\u00e9","n":1}\\n'.repeat(200000)), 'utf8'],
      ['latin1', Buffer.from(Array.from({ length: 3 * MIB }, (_, i) => (i * 7) & 0xff)), 'latin1'],
      ['ascii exactly 256 KiB', Buffer.alloc(256 * 1024, 'x'), 'utf8'],
      ['ascii 256 KiB - 1', Buffer.alloc(256 * 1024 - 1, 'y'), 'utf8'],
      ['cjk utf8', Buffer.from('\\u4e16\\u754c '.repeat(400000)), 'utf8']
    ]
    const read = (bytes, encoding, chunk) => {
      const acc = new uwsBody.BodyAccumulator({ contentLength: bytes.length, limit: '64mb' })
      for (let at = 0; at < bytes.length; at += chunk) acc.push(bytes.subarray(at, at + chunk))
      return acc.finishString(encoding)
    }
    async function main () {
      const out = { equal: [], heldWhileKept: 0, afterDrop: null, reportedAfter: null }
      await collect()
      const base = uwsBody.stats().bytesInUse
      const kept = []
      for (const [name, bytes, encoding] of bodies) {
        for (const chunk of [65536, 1000003]) {
          const before = uwsBody.stats().bytesInUse
          const s = read(bytes, encoding, chunk)
          // Whether the string holds its body's memory (external) or V8 copied it.
          const held = uwsBody.stats().bytesInUse - before >= bytes.length
          out.equal.push([name, chunk, s === bytes.toString(encoding), s.length, held])
          kept.push(s)
        }
      }
      // Strings built from them read the blocks in place (a slice of 13 characters or more
      // is a view of its parent in V8, and keeps all of it alive as any string's would).
      out.slice = Buffer.from(kept[0].slice(100, 200)).toString()
      out.joined = (kept[2] + kept[4]).length
      out.heldWhileKept = uwsBody.stats().bytesInUse - base
      kept.length = 0
      await collect()
      out.afterDrop = uwsBody.stats().bytesInUse - base
      uwsBody.setPoolLimit(0)
      await collect()
      uwsBody.stats()
      out.reportedAfter = uwsBody.stats().bytesReported
      console.log(JSON.stringify(out))
    }
    main()`
  const r = runChild(source)
  assert.equal(r.status, 0, ending(r))
  const out = JSON.parse(r.stdout)
  for (const [name, chunk, equal, length] of out.equal) assert.ok(equal, `${name}, chunks of ${chunk}: ${length} characters differ from Buffer.toString`)
  // External: the one-byte ones from 256 KiB; the one below is copied, and so is the
  // UTF-8 that does not fit one byte, except that from Node 24 Buffer.toString decodes it
  // from a Buffer of the body's memory, which holds it until that Buffer is collected.
  assert.deepEqual(out.equal.map(([name, chunk, , , held]) => `${name} ${chunk}: ${held ? 'external' : 'copied'}`), [
    'ascii utf8 65536: external', 'ascii utf8 1000003: external',
    'café utf8 65536: external', 'café utf8 1000003: external',
    'latin1 65536: external', 'latin1 1000003: external',
    'ascii exactly 256 KiB 65536: external', 'ascii exactly 256 KiB 1000003: external',
    'ascii 256 KiB - 1 65536: copied', 'ascii 256 KiB - 1 1000003: copied',
    ...['cjk utf8 65536', 'cjk utf8 1000003'].map((row) => `${row}: ${NODE_MAJOR >= 24 ? 'external' : 'copied'}`)
  ])
  assert.ok(out.heldWhileKept >= 2 * (4 + 4 + 3 + 0.25) * 1024 * 1024, `${out.heldWhileKept} bytes held while the external strings live`)
  assert.equal(out.afterDrop, 0, 'every block back once the strings are garbage')
  assert.equal(out.slice, 'ascii text, line after line\n'.repeat(10).slice(100, 200))
  assert.equal(out.joined, 22 * 200000 + 3 * 1024 * 1024)
  assert.equal(out.reportedAfter, 0, 'what V8 was told comes back to zero')
})

test('strings still alive when the worker that made them ends: its teardown gives their memory back', () => {
  const source = `
    const uwsBody = require(ROOT)
    const { Worker } = require('node:worker_threads')
    const w = new Worker(\`
      const uwsBody = require(\${JSON.stringify(ROOT)})
      const { parentPort } = require('node:worker_threads')
      const kept = []
      for (let i = 0; i < 8; i++) {
        const acc = new uwsBody.BodyAccumulator({ contentLength: 2 << 20, limit: '4mb' })
        acc.push(Buffer.alloc(2 << 20, 0x61 + i))
        kept.push(acc.finishString('utf8'))
      }
      parentPort.postMessage(kept.map((s) => s.length + s[0]).join())
      // Ends with the strings alive: the environment's teardown runs their finalizers.
    \`, { eval: true })
    w.on('message', (m) => console.log(JSON.stringify(m)))
    w.on('error', (e) => { console.error(e); process.exit(1) })
    w.on('exit', (code) => { console.log(JSON.stringify({ code, inUse: uwsBody.stats().bytesInUse })) })`
  const r = runChild(source)
  assert.equal(r.status, 0, ending(r))
  const [message, end] = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
  assert.equal(message, Array.from({ length: 8 }, (_, i) => `${2 << 20}${String.fromCharCode(0x61 + i)}`).join())
  assert.deepEqual(end, { code: 0, inUse: 0 })
})
