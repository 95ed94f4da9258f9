'use strict'
// content-encoding: every coding Node (or libzstd) produces, at random chunkings, through
// the API and over the wire; bombs, corrupt bytes, truncation, trailing data.
const test = require('node:test')
const assert = require('node:assert/strict')
const zlib = require('node:zlib')
const { BodyAccumulator } = require('..')
const { startServer } = require('./helpers/server')
const { request, sha256 } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { ENCODERS, ready, header, jsonText, bombs } = require('./helpers/encodings')
const { random } = require('./helpers/random')

test.before(() => ready)

const KIB = 1024
const MIB = 1024 * KIB

/** Cuts `bytes` into random chunks (1 B to ~70 KiB, skewed small). */
function chunks (bytes, seed) {
  const next = random(seed)
  const out = []
  for (let at = 0; at < bytes.length;) {
    const size = 1 + Math.floor(next() ** 3 * 70000)
    out.push(bytes.subarray(at, at + size))
    at += size
  }
  return out
}

function read (encoded, options, seed = 1) {
  const acc = new BodyAccumulator({ limit: 64 * MIB, ...options })
  for (const chunk of chunks(encoded, seed)) {
    if (!acc.push(chunk)) return { error: acc.error, acc }
  }
  try {
    return { body: acc.finish(), acc }
  } catch (error) {
    return { error, acc }
  }
}

// Checks run in plain functions: an async test's own frame may keep its last Buffer
// alive across the GC that bytesInUseAfterGc() runs.
function roundTrips () {
  for (const size of [1, 1000, 64 * KIB, 700 * KIB, 3 * MIB]) {
    const data = jsonText(size, size)
    for (const [name, encode] of Object.entries(ENCODERS)) {
      const encoded = encode(data)
      for (const seed of [1, 2, 3]) {
        const { body, error } = read(encoded, { contentEncoding: header(name), contentLength: String(encoded.length) }, seed)
        assert.equal(error, undefined, `${name} ${size}: ${error && error.message}`)
        assert.ok(body.equals(data), `${name} ${size} seed ${seed}`)
      }
    }
  }
  // An empty body is an empty stream, which is valid.
  for (const [name, encode] of Object.entries(ENCODERS)) {
    const { body } = read(encode(Buffer.alloc(0)), { contentEncoding: header(name) })
    assert.equal(body.length, 0, name)
  }
}

test('every coding at random chunkings gives back every byte', async () => {
  roundTrips()
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('header forms, nested codings, several gzip members', async () => {
  const data = jsonText(50 * KIB)
  for (const h of ['GZIP', ' gzip ', 'x-gzip', 'identity, gzip', 'gzip,']) {
    assert.ok(read(zlib.gzipSync(data), { contentEncoding: h }).body.equals(data), h)
  }
  const nested = zlib.brotliCompressSync(zlib.gzipSync(data))
  assert.ok(read(nested, { contentEncoding: 'gzip, br' }).body.equals(data))
  const members = Buffer.concat([zlib.gzipSync(data), zlib.gzipSync(data.subarray(7))])
  assert.ok(read(members, { contentEncoding: 'gzip' }).body.equals(Buffer.concat([data, data.subarray(7)])))
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('unsupported, refused and too deep encodings: 415 before any byte', () => {
  for (const [options, encoding] of [
    [{ contentEncoding: 'compress' }, 'compress'],
    [{ contentEncoding: 'gzip', inflate: false }, 'gzip'],
    [{ contentEncoding: 'br, zstd', inflate: false }, 'br'],
    [{ contentEncoding: 'gzip, gzip, gzip' }, 'gzip, gzip, gzip']
  ]) {
    const acc = new BodyAccumulator(options)
    assert.equal(acc.error.status, 415)
    assert.equal(acc.error.type, 'encoding.unsupported')
    assert.equal(acc.error.encoding, encoding)
    assert.equal(acc.push(Buffer.from('x')), false)
    assert.equal(acc.capacity, 0)
  }
  // identity is always accepted, inflate or not.
  assert.equal(new BodyAccumulator({ contentEncoding: 'identity', inflate: false }).error, null)
  assert.throws(() => new BodyAccumulator({ inflate: 'no' }), TypeError)
})

test('bombs: 413 one byte past the limit, memory released, well under a second', async () => {
  const all = await bombs()
  for (const [name, bomb] of Object.entries(all)) {
    const acc = new BodyAccumulator({ contentEncoding: name, limit: MIB })
    const started = process.hrtime.bigint()
    let held = 0
    let ok = true
    for (let at = 0; ok && at < bomb.length; at += 65483) {
      ok = acc.push(bomb.subarray(at, at + 65483))
      held = Math.max(held, acc.length)
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    assert.equal(ok, false, name)
    assert.equal(acc.error.status, 413, name)
    assert.equal(acc.error.received, MIB + 1, name)
    assert.ok(held <= MIB + 1, `${name}: held ${held}`)
    assert.equal(acc.capacity, 0)
    assert.ok(ms < 500, `${name}: ${ms} ms`)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('corrupt bytes anywhere: 400 encoding.invalid (or the right bytes), never a crash', async () => {
  const data = jsonText(40 * KIB)
  for (const [name, encode] of Object.entries(ENCODERS)) {
    const encoded = encode(data)
    let failed = 0
    for (let at = 0; at < encoded.length; at += Math.ceil(encoded.length / 150)) {
      for (const flip of [0x01, 0x10, 0xff]) {
        const bad = Buffer.from(encoded)
        bad[at] ^= flip
        const { body, error } = read(bad, { contentEncoding: header(name) }, at)
        if (error) {
          assert.equal(error.status, 400, `${name} at ${at}: ${error.message}`)
          assert.equal(error.type, 'encoding.invalid')
          failed++
        } else {
          assert.ok(body.length <= 64 * MIB)
        }
      }
    }
    assert.ok(failed > 0, name)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('truncated streams and trailing bytes: 400 with their reason', async () => {
  const data = jsonText(20 * KIB)
  for (const [name, encode] of Object.entries(ENCODERS)) {
    const encoded = encode(data)
    for (const cut of [0, 1, 2, 10, encoded.length >> 1, encoded.length - 1]) {
      const { error } = read(encoded.subarray(0, cut), { contentEncoding: header(name) })
      assert.equal(error && error.reason, 'truncated', `${name} cut ${cut}`)
      assert.equal(error.status, 400)
      assert.equal(error.message, `invalid ${header(name)} body: the body ends before the encoded stream does`)
    }
    const { error } = read(Buffer.concat([encoded, Buffer.from('trailing')]), { contentEncoding: header(name) })
    assert.equal(error.status, 400, name)
    // libzstd reads trailing bytes as a bad next frame.
    assert.equal(error.reason, name === 'zstd' ? 'corrupt' : 'trailing', name)
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('the limit counts decoded bytes, and content-length the bytes sent', () => {
  const data = jsonText(10000)
  const encoded = zlib.gzipSync(data)
  assert.equal(read(encoded, { contentEncoding: 'gzip', limit: 9999 }).error.status, 413)
  assert.ok(read(encoded, { contentEncoding: 'gzip', limit: 10000 }).body.equals(data))
  const short = read(encoded, { contentEncoding: 'gzip', contentLength: encoded.length + 1 })
  assert.equal(short.error.type, 'request.size.invalid')
  // The declared (encoded) length is not preallocated from.
  const acc = new BodyAccumulator({ contentEncoding: 'gzip', contentLength: encoded.length })
  assert.equal(acc.capacity, 0)
  acc.abort()
})

test('over the wire: each coding, chunked or not, bombs and corrupt bodies', async () => {
  const server = await startServer()
  try {
    const data = jsonText(300 * KIB)
    const expect = `${data.length} ${sha256(data)}`
    for (const [name, encode] of Object.entries(ENCODERS)) {
      const body = encode(data)
      const headers = { 'content-encoding': header(name), 'x-limit': '1mb' }
      assert.deepEqual(await request(server.port, { body, headers, cuts: [1, 2, 100] }), { status: 200, body: expect }, name)
      assert.deepEqual(await request(server.port, { body, headers, chunked: true, chunkSize: 999 }), { status: 200, body: expect }, name)
      const bad = Buffer.from(body)
      bad[bad.length >> 1] ^= 0xff
      const r = await request(server.port, { body: bad, headers })
      if (r.status !== 200) assert.deepEqual(r, { status: 400, body: '400 encoding.invalid' }, name)
      assert.deepEqual(await request(server.port, { body: body.subarray(0, -3), headers }), { status: 400, body: '400 encoding.invalid' }, name)
    }
    const gzipBomb = (await bombs()).gzip
    assert.deepEqual(await request(server.port, { body: gzipBomb, headers: { 'content-encoding': 'gzip', 'x-limit': '1mb' } }),
      { status: 413, body: '413 entity.too.large' })
    assert.deepEqual(await request(server.port, { body: zlib.gzipSync(data), headers: { 'content-encoding': 'gzip', 'x-inflate': 'false' } }),
      { status: 415, body: '415 encoding.unsupported' })
  } finally {
    server.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})
