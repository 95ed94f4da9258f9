'use strict'
// The requests the end-to-end benches send (bench/express.js, bench/e2e.js): each row is
// [name, route, headers, body]. The headers are what an Express-style parser needs; the
// bare uWS server reads only content-length and content-encoding.
const zlib = require('node:zlib')
const { formatSize } = require('./stats')

const KIB = 1024
const MIB = 1024 * KIB

/** A JSON document of about `size` bytes: an object holding an array of small records. */
function json (size) {
  const items = []
  let length = 12
  for (let i = 0; length < size; i++) {
    const item = { id: i, name: `user${i % 997}`, active: i % 2 === 0, tags: ['a', `b${i % 13}`] }
    items.push(item)
    length += JSON.stringify(item).length + 1
  }
  return Buffer.from(JSON.stringify({ items }))
}
/** A JSON document of exactly `size` bytes (at least 20): one record, its name padded. */
const tinyJson = (size) => Buffer.from(JSON.stringify({ id: 1, name: 'x'.repeat(size - 20) }))
const form = (size) => Buffer.from(Array.from({ length: Math.ceil(size / 20) }, (_, i) => `field${i}=value%20${i}`).join('&').slice(0, size).replace(/&[^&]*$/, ''))

function cases () {
  const json512 = json(512 * KIB)
  const raw = (size) => [`raw ${formatSize(size)}`, '/raw', { 'content-type': 'application/octet-stream' }, Buffer.alloc(size, 0x61)]
  return [
    ['json 100 B', '/json', { 'content-type': 'application/json' }, tinyJson(100)],
    ['json 1 KiB', '/json', { 'content-type': 'application/json' }, json(KIB)],
    ['json 16 KiB', '/json', { 'content-type': 'application/json' }, json(16 * KIB)],
    ['json 512 KiB', '/json', { 'content-type': 'application/json' }, json512],
    ['json 512 KiB gzip', '/json', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, zlib.gzipSync(json512)],
    ['urlencoded 2 KiB', '/urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, form(2 * KIB)],
    ['text 64 KiB', '/text', { 'content-type': 'text/plain; charset=utf-8' }, Buffer.from('caf\u00e9 '.repeat(64 * KIB / 6)).subarray(0, 64 * KIB)],
    ...[4 * KIB, 64 * KIB, 256 * KIB, 512 * KIB, MIB, 4 * MIB, 32 * MIB].map(raw)
  ]
}

/**
 * The command line both end-to-end benches take: --quick, --rows 'a,b', --kinds a,b,
 * --rounds N, --seconds S (of load per contender per round).
 */
function benchOptions (argv = process.argv) {
  const option = (name) => { const at = argv.indexOf(name); return at < 0 ? undefined : argv[at + 1] }
  const list = (name) => option(name) === undefined ? null : option(name).split(',').map((x) => x.trim())
  const number = (name) => option(name) === undefined ? undefined : Number(option(name))
  return { quick: argv.includes('--quick'), rows: list('--rows'), kinds: list('--kinds'), rounds: number('--rounds'), seconds: number('--seconds') }
}

module.exports = { cases, benchOptions }
