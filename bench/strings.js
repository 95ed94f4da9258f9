'use strict'
// Text bodies: uws-body's finishString (string built from the body's memory, no Buffer)
// against the floor of a warm memcpy plus building the same string from a warm Buffer.
// The body is read as readText and the json/text/urlencoded parsers read UTF-8 (AS_TEXT):
// natively above 2 KiB before Node 24, from reused Buffers in the JS tier on Node 24.
const { BodyAccumulator, AS_TEXT } = require('../lib/body/accumulator')
const { median, paired, formatTime, formatSize, table, timePerCall } = require('./stats')

const KIB = 1024
const MIB = 1024 * KIB

// JSON lines: with an accent (one-byte: the native tier makes it Latin-1), or with
// Chinese names (not one-byte), cut at a character's first byte.
function textOf (kind, size) {
  const line = kind === 'cjk' ? '{"name":"\u4e16\u754c\u4f60\u597d","n":12345,"tags":["\u6f22","b"]}\n' : '{"name":"caf\u00e9","n":12345,"tags":["a","b"]}\n'
  const all = Buffer.from(line.repeat(Math.ceil(size / 40)))
  let end = size
  while ((all[end] & 0xc0) === 0x80) end--
  return all.subarray(0, end)
}

async function run ({ quick = false } = {}) {
  const rounds = quick ? 3 : 7
  const results = []
  const rows = [KIB, 16 * KIB, 64 * KIB, 512 * KIB, 4 * MIB, 32 * MIB].map((size) => ['latin', size])
  for (const size of [256 * KIB, 4 * MIB, 32 * MIB]) rows.push(['cjk', size])
  for (const [kind, size] of rows) {
    const text = textOf(kind, size)
    const n = text.length
    const chunks = []
    for (let i = 0; i < n; i += 65483) chunks.push(text.buffer.slice(text.byteOffset + i, text.byteOffset + Math.min(n, i + 65483)))
    const floor = Buffer.alloc(n)
    const c = () => {
      const acc = new BodyAccumulator({ contentLength: n, limit: '64mb', [AS_TEXT]: true })
      for (const ab of chunks) acc.push(ab)
      return acc.finishString('utf8')
    }
    const d = () => {
      let at = 0
      for (const ab of chunks) { floor.set(new Uint8Array(ab), at); at += ab.byteLength }
      return floor.toString('utf8')
    }
    const times = { c: [], d: [] }
    for (let r = 0; r < rounds; r++) {
      for (const [name, fn] of r % 2 ? [['d', d], ['c', c]] : [['c', c], ['d', d]]) times[name].push((await timePerCall(fn, quick ? 0.02 : 0.05)).seconds)
    }
    const cd = paired(times.c, times.d)
    results.push({ kind, size, c: median(times.c), d: median(times.d), cd: cd.ratio, won: cd.won, rounds })
  }
  return results
}

function render (results) {
  return table(['text body', 'uws-body finishString', 'floor: memcpy + toString', 'ratio', 'rounds won'],
    results.map((r) => [`${formatSize(r.size)}${r.kind === 'cjk' ? ', CJK' : ''}`, formatTime(r.c), formatTime(r.d), r.cd.toFixed(2), `${r.won}/${r.rounds}`]))
}

module.exports = { run, render }

if (require.main === module) run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
