'use strict'
// Encoded bodies: uws-body decoding chunk by chunk inside push() against Node's zlib
// one-shot sync decode of the already concatenated body (gunzipSync, inflateSync,
// brotliDecompressSync), and against today's code (copy each chunk, concat, then decode).
const zlib = require('node:zlib')
const { BodyAccumulator } = require('..')
const { ready: zstdReady, zstdCompress } = require('../__test__/helpers/zstd')
const { median, paired, formatTime, formatSize, table, timePerCall } = require('./stats')
const { jsonText } = require('../__test__/helpers/encodings')

const KIB = 1024
const LOOPBACK_CHUNK = 65483

const CODINGS = {
  gzip: { encode: (b) => zlib.gzipSync(b), decode: zlib.gunzipSync },
  deflate: { encode: (b) => zlib.deflateSync(b), decode: zlib.inflateSync },
  br: { encode: (b) => zlib.brotliCompressSync(b), decode: zlib.brotliDecompressSync },
  // Node 20 has no zstd; newer Node versions do.
  zstd: { encode: (b) => zstdCompress(b, 3), decode: zlib.zstdDecompressSync }
}

/** The body as uWS would deliver it: ArrayBuffers of up to 64 KiB. */
function arrayBuffers (bytes) {
  const out = []
  for (let i = 0; i < bytes.length; i += LOOPBACK_CHUNK) {
    const piece = bytes.subarray(i, i + LOOPBACK_CHUNK)
    out.push(piece.buffer.slice(piece.byteOffset, piece.byteOffset + piece.length))
  }
  return out
}

async function run ({ quick = false } = {}) {
  await zstdReady
  const rounds = quick ? 3 : 7
  const budget = quick ? 0.02 : 0.05
  const results = []
  for (const size of [64 * KIB, 512 * KIB]) {
    const data = jsonText(size)
    for (const [name, { encode, decode }] of Object.entries(CODINGS)) {
      const encoded = encode(data)
      const chunks = arrayBuffers(encoded)
      const c = () => {
        const acc = new BodyAccumulator({ contentEncoding: name, contentLength: encoded.length, limit: '16mb' })
        for (const ab of chunks) acc.push(ab)
        return acc.finish()
      }
      const contenders = { c }
      if (decode) {
        contenders.node = () => decode(encoded)
        contenders.a = () => decode(Buffer.concat(chunks.map((ab) => Buffer.from(new Uint8Array(ab)))))
      }
      if (!c().equals(data)) throw new Error(`bench: ${name} decodes wrong`)
      const times = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]))
      for (let r = 0; r < rounds; r++) {
        const order = Object.entries(contenders)
        if (r % 2) order.reverse()
        for (const [k, fn] of order) times[k].push((await timePerCall(fn, budget)).seconds)
      }
      const row = { size, coding: name, ratio: encoded.length / size, c: median(times.c), rounds }
      if (decode) {
        row.node = median(times.node)
        row.a = median(times.a)
        const vsNode = paired(times.c, times.node)
        row.cNode = vsNode.ratio
        row.won = vsNode.won
        row.cA = paired(times.c, times.a).ratio
      }
      results.push(row)
    }
  }
  return results
}

function render (results) {
  return table(['decoded size', 'coding', 'sent', '(c) uws-body', 'Node one-shot', 'c / one-shot', 'rounds won', '(a) copy+concat+decode', 'c / a'],
    results.map((r) => [formatSize(r.size), r.coding, `${(r.ratio * 100).toFixed(1)}%`, formatTime(r.c),
      r.node === undefined ? 'n/a (no zstd in this Node)' : formatTime(r.node),
      r.node === undefined ? '-' : r.cNode.toFixed(2), r.node === undefined ? '-' : `${r.won}/${r.rounds}`,
      r.a === undefined ? '-' : formatTime(r.a), r.a === undefined ? '-' : r.cA.toFixed(2)]))
}

module.exports = { run, render }

if (require.main === module) run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
