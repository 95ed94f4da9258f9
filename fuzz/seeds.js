'use strict'
// Seed inputs for the fuzz targets: valid bodies in every coding, so the fuzzer starts
// from inside the formats. Written to fuzz/seeds/ (not committed; fuzz/run.sh makes them).
const fs = require('node:fs')
const path = require('node:path')
const zlib = require('node:zlib')

const text = Buffer.from('{"id":1,"name":"user","tags":["a","b"],"ok":true}\n'.repeat(40))
const { zstdRepeat } = require('../__test__/helpers/zstd')

// zstd as RLE blocks (the wasm encoder loads asynchronously); the property tests cover
// compressed zstd against libzstd.
const zstd = Buffer.concat([zstdRepeat(3000, 0x7b), zstdRepeat(10, 0x0a)])
const encoded = [zlib.gzipSync(text), zlib.deflateSync(text), zlib.deflateRawSync(text), zlib.brotliCompressSync(text), zstd, zlib.gzipSync(zlib.gzipSync(text))]
const dir = (t) => { const d = path.join(__dirname, 'seeds', t); fs.mkdirSync(d, { recursive: true }); return d }

// decode: [coding, limit lo, limit hi, step] + encoded body (coding order: fuzz_targets/decode.rs)
encoded.forEach((body, coding) => {
  if (body === null) return
  for (const step of [0, 7, 255]) {
    fs.writeFileSync(path.join(dir('decode'), `${coding}-${step}`), Buffer.concat([Buffer.from([coding, 0xff, 0x7f, step]), body]))
  }
})
// body: [limit lo, limit hi, declared mode, declared, cap, encoding, decode, step] + bytes
const codingIndex = [4, 5, 5, 6, 7]
encoded.slice(0, 5).forEach((body, i) => {
  if (body === null) return
  fs.writeFileSync(path.join(dir('body'), `enc-${i}`), Buffer.concat([Buffer.from([0xff, 0xff, 1, 0, 4, codingIndex[i], 0, 3]), body]))
})
fs.writeFileSync(path.join(dir('body'), 'identity'), Buffer.concat([Buffer.from([0x00, 0x10, 1, 0, 1, 2, 0, 1]), text]))
// multipart: [boundary (index; >= 0x80: a content-type line first), size scale, parts,
// files|fields, header size, name size|header pairs, step, room] + body
// (fuzz_targets/multipart.rs)
const B = '----WebKitFormBoundary7MA4YWxkTrZu0gW'
const form = Buffer.concat([
  Buffer.from(`preamble\r\n--${B}\r\nContent-Disposition: form-data; name="title"\r\n\r\nHello\r\n`),
  Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"; filename*=UTF-8''%E2%82%AC.txt\r\n`),
  Buffer.from(`Content-Type: text/plain; charset=utf-8\r\n\r\n`),
  Buffer.from(`line\r\n--${B.slice(0, 20)}\r\n-\r`), text.subarray(0, 300),
  Buffer.from(`\r\n--${B}\r\nContent-Disposition: form-data; name="empty"; filename=""\r\n`),
  Buffer.from('Content-Type: application/octet-stream\r\n\r\n'),
  Buffer.from(`\r\n--${B}--\r\nepilogue`)
])
fs.writeFileSync(path.join(dir('multipart'), 'form'), Buffer.concat([Buffer.from([1, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 0]), form]))
fs.writeFileSync(path.join(dir('multipart'), 'form-limited'), Buffer.concat([Buffer.from([1, 2, 3, 0x22, 2, 0x24, 0, 3]), form]))
fs.writeFileSync(path.join(dir('multipart'), 'content-type'), Buffer.concat([Buffer.from([0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 9]),
  Buffer.from(`multipart/form-data; boundary="${B}"\n`), form]))
// digest: [flags, requested | flip | header style, split, step, seed, flip position] +
// a header value (fuzz_targets/digest.rs): every kind of digest header, valid and not,
// also read as the body's bytes.
const { createHash } = require('node:crypto')
const b64 = (algorithm, bytes) => createHash(algorithm).update(bytes).digest('base64')
const hello = '{"hello": "world"}'
const headers = {
  'sha-256': `sha-256=:${b64('sha256', hello)}:`,
  'sha-512': `sha-512=:${b64('sha512', hello)}:`,
  both: `sha-512=:${b64('sha512', hello)}:, sha-256=:${b64('sha256', hello)}:`,
  others: `md5=:${b64('md5', hello)}:, unixsum=:AAAA:, sha-256=:${b64('sha256', hello)}:;p=1`,
  md5: b64('md5', hello),
  'md5-unpadded': ` ${b64('md5', hello).replace(/=+$/, '')}\t`,
  truncated: `sha-256=:${b64('sha256', hello).slice(0, 20)}:`,
  unclosed: `sha-256=:${b64('sha256', hello)}`,
  'not-bytes': 'sha-256=?1, sha-512=("a" "b"), sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=',
  'upper-case': `SHA-256=:${b64('sha256', hello)}:`,
  'bad-base64': 'sha-256=:not base64!:, sha-512=:====:',
  hex: createHash('md5').update(hello).digest('hex'),
  empty: ''
}
Object.entries(headers).forEach(([name, value], i) => {
  // Every flag and flip mode over the seeds: identity or not, each header declared, ...
  const head = [(i * 37) & 0xff, 0x0f | (i % 4) << 4 | (i & 4) << 4 | (i & 8) << 4, 128, 1 + i * 5, i, 3 * i]
  fs.writeFileSync(path.join(dir('digest'), name), Buffer.concat([Buffer.from(head), Buffer.from(value)]))
})
fs.writeFileSync(path.join(dir('digest'), 'all'), Buffer.concat([Buffer.from([0xff, 0xcf, 100, 3, 7, 9]), text]))
