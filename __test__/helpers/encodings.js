'use strict'
// Encoders for the decoding tests: Node's zlib for gzip, deflate and br, and zstd from
// ./zstd (await `ready` before encoding zstd).
const zlib = require('node:zlib')
const { ready, zstdCompress, zstdRepeat } = require('./zstd')

const ENCODERS = {
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  'deflate (raw)': (b) => zlib.deflateRawSync(b),
  br: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }),
  zstd: (b) => zstdCompress(b, 3)
}

/** The content-encoding header for an ENCODERS name. */
const header = (name) => name.replace(' (raw)', '')

/** JSON-like text, about 8x smaller gzipped. */
function jsonText (size, seed = 1) {
  const parts = []
  let length = 0
  let x = seed
  while (length < size) {
    x = (x * 1103515245 + 12345) >>> 0
    const line = `{"id":${x % 100000},"name":"user${x % 997}","active":${x % 2 === 0},"tags":["a","b${x % 13}"]},`
    parts.push(line)
    length += line.length
  }
  return Buffer.from(parts.join('')).subarray(0, size)
}

const GIB = 1024 * 1024 * 1024

/** gzip, br and zstd bombs: 1 GiB of zeros each (gzip level 9: about 1 MiB sent). */
let made = null
function bombs () {
  if (made === null) made = makeBombs()
  return made
}

async function makeBombs () {
  const zeros = Buffer.alloc(1024 * 1024)
  const compress = (stream) => new Promise((resolve, reject) => {
    const out = []
    stream.on('data', (d) => out.push(d))
    stream.on('end', () => resolve(Buffer.concat(out)))
    stream.on('error', reject)
    let i = 0
    const write = () => {
      while (i < GIB / zeros.length) {
        i++
        if (!stream.write(zeros)) return stream.once('drain', write)
      }
      stream.end()
    }
    write()
  })
  const gzip = await compress(zlib.createGzip({ level: 9 }))
  const br = await compress(zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }))
  const zstd = zstdRepeat(GIB)
  return { gzip, br, zstd, 'gzip, gzip': zlib.gzipSync(gzip) }
}

module.exports = { ENCODERS, ready, header, jsonText, bombs, GIB }
