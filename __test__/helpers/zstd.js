'use strict'
// zstd bodies for the tests, the soak and the benchmarks. Node 20 has no zstd encoder
// (22.15 and later do: used where present); elsewhere libzstd compiled to wasm
// (@bokuweb/zstd-wasm, a devDependency), which loads asynchronously: await `ready` once.
const zlib = require('node:zlib')

let wasm = null
const ready = typeof zlib.zstdCompressSync === 'function'
  ? Promise.resolve()
  : (async () => {
      const z = require('@bokuweb/zstd-wasm')
      await z.init()
      wasm = z
    })()

function zstdCompress (input, level = 3) {
  if (typeof zlib.zstdCompressSync === 'function') {
    return zlib.zstdCompressSync(input, { params: { [zlib.constants.ZSTD_c_compressionLevel]: level } })
  }
  if (wasm === null) throw new Error('zstdCompress: await require(\'./zstd\').ready first')
  return Buffer.from(wasm.compress(input, level))
}

const RLE_BLOCK = 128 * 1024

/**
 * One zstd frame of `size` copies of `byte`, written directly as RLE blocks (RFC 8878
 * 3.1.1): 4 bytes per 128 KiB, so 1 GiB of zeros is 32 KiB sent. A bomb made without
 * compressing a GiB.
 */
function zstdRepeat (size, byte = 0) {
  const blocks = Math.max(1, Math.ceil(size / RLE_BLOCK))
  const out = Buffer.alloc(6 + 4 * blocks)
  out.writeUInt32LE(0xfd2fb528, 0) // magic number
  out[4] = 0x00 // frame header descriptor: no content size, no checksum, no dictionary
  out[5] = (17 - 10) << 3 // window descriptor: 128 KiB, the largest block
  for (let i = 0, left = size; i < blocks; i++) {
    const n = Math.min(left, RLE_BLOCK)
    left -= n
    const last = i === blocks - 1 ? 1 : 0
    out.writeUIntLE((n << 3) | (1 << 1) | last, 6 + 4 * i, 3) // block header: RLE, n bytes
    out[6 + 4 * i + 3] = byte
  }
  return out
}

module.exports = { ready, zstdCompress, zstdRepeat }
