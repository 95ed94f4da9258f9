'use strict'
// Where a BodyAccumulator keeps its bytes: the storage of each tier behind one interface.
// The body rules are the accumulator's (lib/body/accumulator.js); a store only holds bytes,
// and reports the errors only it can see (a decoder's, memory's).
//
//   bytes(chunk)        the chunk as this store reads it; throws lib/body/chunk.js's TypeError
//   write(bytes)        appends a non-empty chunk: true, or false (see error(): null means
//                       it does not fit this store, and moveToNative() takes over)
//   finish()            the body as a Buffer the caller owns, or false (see error())
//   finishString(enc)   the body as a string, the body's length (too long for a string),
//                       or false (see error())
//   release()           lets go of the memory now
//   error()             null, or the BodyError that made a call return false
//   received            bytes taken, as sent (encoded, for an encoded body)
//   held, capacity      bytes held now (decoded), bytes allocated
const { Buffer } = require('node:buffer')
const native = require('../native/native')
const textScratch = require('./text-scratch')
const budget = require('./budget')
const errors = require('../native/errors')
const { bytesOf, refusal } = require('./chunk')
const { STRING_ENCODING, SIZES } = require('../native/protocol')
const { UNKNOWN, isIdentity } = require('./headers')
const { readDigests, SCRATCH } = require('./digest')

// The largest known length of a Buffer body read by the JS tier. Above it the native
// pool's recycled memory wins: a fresh allocUnsafe per body is new external memory to V8
// (on Node 24 a mark-compact every 64 MiB of bodies) and, once glibc trims its heap,
// fresh pages (docs/performance.md, row 'JS tier bound').
const JS_TIER_MAX = 32 * 1024
// The largest first chunk of unknown length kept in JS: a larger one, copied again when
// a second chunk comes, costs each body fresh memory (docs/performance.md, row 'first
// chunk kept in JS').
const FIRST_CHUNK_MAX = 16 * 1024
// Text leaves the JS tier at 2 KiB where Buffer.toString('utf8') is V8's own decoder,
// slower than finishString's; where it is simdutf's, at 192 KiB. Text in JS goes through
// one reused scratch Buffer, so it makes no external memory per body (docs/performance.md,
// row 'text tier bound').
const SIMDUTF_TO_STRING = Number(process.versions.node.split('.')[0]) >= 24
const TEXT_JS_TIER_MAX = SIMDUTF_TO_STRING ? 192 * 1024 : 2 * 1024

const EMPTY = () => Buffer.alloc(0)

// Encodings the native tier decodes itself (finishString's codes). Where toString is
// simdutf's, UTF-8 that is not one-byte comes back as a Buffer for it to decode
// (docs/performance.md, row 'UTF-8 as a Buffer').
const { UTF8, LATIN1, UTF16LE, UTF8_OR_BUFFER } = STRING_ENCODING
const UTF8_CODE = SIMDUTF_TO_STRING ? UTF8_OR_BUFFER : UTF8
const STRING_ENCODINGS = { __proto__: null, utf8: UTF8_CODE, 'utf-8': UTF8_CODE, latin1: LATIN1, binary: LATIN1, utf16le: UTF16LE, 'utf-16le': UTF16LE, ucs2: UTF16LE, 'ucs-2': UTF16LE }
const { RECEIVED, LENGTH, CAPACITY } = SIZES

/**
 * The store for a new body: the JS tier for an identity body whose known length is small
 * (or unknown: its first chunk decides), the native core for the rest. A body with a
 * digest to check or make (lib/body/digest.js: `digests` not null) is hashed by the core as it
 * copies, or, small and of known length, in one call at its end (DigestStore).
 */
function storeFor (expected, limit, maxPreallocated, encoding, inflate, asText, digests, atFirstBytes = false) {
  const jsTierMax = asText ? TEXT_JS_TIER_MAX : JS_TIER_MAX
  if (isIdentity(encoding) && expected <= jsTierMax && expected <= maxPreallocated) {
    // A small body with digests is still read in JS: its bytes are hashed in one call at
    // its end, while they are in cache (DigestStore).
    if (digests !== null && expected >= 0) return new DigestStore(expected, digests, atFirstBytes)
    const firstChunkMax = expected >= 0 ? 0 : Math.min(FIRST_CHUNK_MAX, jsTierMax)
    if (digests === null) return asText ? new ScratchStore(expected, firstChunkMax, atFirstBytes) : new BufferStore(expected, firstChunkMax, atFirstBytes)
  }
  if (digests !== null) {
    return new NativeStore(native.create(expected, limit, maxPreallocated, encoding, inflate, 0,
      digests.requested, digests.contentDigest, digests.reprDigest, digests.contentMd5), digests.requested)
  }
  // Encoded bodies are always native: the decoders live in src/core/decode.
  return new NativeStore(native.create(expected, limit, maxPreallocated, encoding, inflate))
}

/** The store of a body refused before it began: it holds nothing, ever. */
const emptyStore = () => new BufferStore(0, 0)

/**
 * The JS tier: one Buffer, of the declared length, or of a body's only chunk. Its bytes
 * are reserved from the memory budget (lib/body/budget.js) before the Buffer is made, until it
 * is handed out or let go: a declared length that does not fit is refused before any
 * byte is read. `atFirstBytes`: a declared length's Buffer (and reservation) is made when
 * its first bytes come, not now (BodyAccumulator, lib/body/accumulator.js).
 */
class BufferStore {
  constructor (expected, firstChunkMax, atFirstBytes) {
    this.buf = null
    this.length = 0
    // Bytes the Buffer is for: a declared length, or, once it came, the first chunk.
    this.room = expected > 0 ? expected : 0
    this.firstChunkMax = firstChunkMax
    // Bytes reserved from the budget; the refusal when it had no room.
    this.reserved = 0
    this.refused = null
    if (this.room > 0 && !atFirstBytes) this.open()
  }

  // The declared length's Buffer, reserved first.
  open () {
    if (!this.reserve(this.room)) return false
    this.buf = this.alloc(this.room)
    return true
  }

  reserve (n) {
    if (budget.take(n)) {
      this.reserved = n
      return true
    }
    this.refused = errors.overBudget(n)
    return false
  }

  // The reservation goes back once: the Buffer was handed out or let go.
  unreserve () {
    const n = this.reserved
    if (n !== 0) {
      this.reserved = 0
      budget.give(n)
    }
  }

  alloc (n) {
    return Buffer.allocUnsafe(n)
  }

  bytes (chunk) {
    return bytesOf(chunk)
  }

  write (bytes) {
    const end = this.length + bytes.length
    if (end > this.room) {
      // Only a body of unknown length gets here: its first chunk is its Buffer, if small.
      if (this.buf !== null || end > this.firstChunkMax || !this.reserve(end)) return false
      this.room = end
      this.buf = this.alloc(end)
    } else if (this.buf === null && !this.open()) {
      return false
    }
    this.buf.set(bytes, this.length)
    this.length = end
    return true
  }

  finish () {
    const buf = this.buf
    this.buf = null
    this.unreserve()
    return buf === null ? EMPTY() : buf
  }

  finishString (encoding) {
    return decode(this.finish(), encoding, this.length)
  }

  release () {
    this.buf = null
    this.unreserve()
  }

  error () {
    return this.refused
  }

  get received () {
    return this.length
  }

  get capacity () {
    return this.buf === null ? 0 : this.buf.length
  }

  /** The body's memory is the native core's (a JS Buffer's is the collector's). */
  get native () {
    return false
  }

  get held () {
    return this.buf === null ? 0 : this.length
  }

  /** The digests asked for: none here (a body with any is a DigestStore or native). */
  digests () {
    return null
  }

  /**
   * A body of unknown length that needs more than its first chunk: the native core takes
   * over, told how many bytes it is about to hold so that it takes its final room at once.
   */
  moveToNative (limit, maxPreallocated, total) {
    const store = new NativeStore(native.create(UNKNOWN, limit, maxPreallocated, null, true, total))
    // A failed write here fails the next one too: the caller sees it there.
    const first = this.buf
    if (first !== null) store.write(first.length === this.length ? first : first.subarray(0, this.length))
    this.release()
    return store
  }
}

/**
 * The JS tier for a body only ever decoded to a string (AS_TEXT): its Buffer comes from
 * lib/body/text-scratch.js where that has one of its size, and goes back there, never to the
 * program.
 */
class ScratchStore extends BufferStore {
  alloc (n) {
    const buf = textScratch.take(n)
    this.scratch = buf !== null
    return this.scratch ? buf : Buffer.allocUnsafe(n)
  }

  constructor (expected, firstChunkMax, atFirstBytes) {
    super(expected, firstChunkMax, atFirstBytes)
    this.scratch ??= false
  }

  // A scratch Buffer may be longer than the body: the program gets one of the body's
  // exact length and no other body's bytes, and never a Buffer that goes back.
  finish () {
    if (!this.scratch) return super.finish()
    const buf = this.buf
    this.buf = null
    this.scratch = false
    this.unreserve()
    if (buf.length === this.length) return buf
    const body = Buffer.allocUnsafe(this.length)
    buf.copy(body, 0, 0, this.length)
    textScratch.give(buf)
    return body
  }

  // Only the bytes this body wrote are decoded, and the Buffer goes back whatever
  // toString does.
  finishString (encoding) {
    if (!this.scratch) return super.finishString(encoding)
    try {
      return decode(this.buf, encoding, this.length)
    } finally {
      this.release()
    }
  }

  // Once: the Buffer is forgotten first.
  release () {
    const buf = this.buf
    this.buf = null
    this.unreserve()
    if (this.scratch) {
      this.scratch = false
      textScratch.give(buf)
    }
  }
}

/**
 * The JS tier for a body of a small known length with digests to check or make: the
 * native core hashes the whole Buffer in one call at finish() (src/node/body.rs digestOf),
 * where a native body's finish() and external Buffer cost more than the hashing
 * (bench/digest.js). A mismatch fails finish() as a short body does.
 */
class DigestStore extends BufferStore {
  constructor (expected, digests, atFirstBytes) {
    super(expected, 0, atFirstBytes)
    this.wanted = digests
    this.made = null
    this.failure = null
  }

  finish () {
    const body = super.finish()
    const d = this.wanted
    const made = native.digestOf(body.length === 0 ? EMPTY_ARRAY_BUFFER : body, d.requested, d.contentDigest, d.reprDigest, d.contentMd5, SCRATCH)
    if (typeof made !== 'number') {
      this.failure = errors.bodyError(made.code, made)
      return false
    }
    this.made = readDigests(d.requested, made)
    return body
  }

  finishString (encoding) {
    const body = this.finish()
    return body === false ? false : decode(body, encoding, body.length)
  }

  // A mismatch, else the budget's refusal (BufferStore's).
  error () {
    return this.failure !== null ? this.failure : super.error()
  }

  digests () {
    return this.made
  }
}

// Stands for an empty body's bytes (digestOf refuses an empty view).
const EMPTY_ARRAY_BUFFER = new ArrayBuffer(0)

/** The native tier: the body lives in src/core/body.rs, behind an external. */
class NativeStore {
  /** requested: the digests asked for (lib/body/digest.js), read by digests(). */
  constructor (handle, requested = 0) {
    this.handle = handle
    this.requested = requested
  }

  // An ArrayBuffer (what uWS gives) goes as it is; the rest through lib/body/chunk.js, which
  // throws for a chunk nobody reads and views any other as bytes.
  bytes (chunk) {
    return chunk instanceof ArrayBuffer && chunk.byteLength !== 0 ? chunk : bytesOf(chunk)
  }

  write (bytes) {
    const accepted = native.push(this.handle, bytes)
    if (accepted === null) throw refusal(bytes)
    return accepted
  }

  finish () {
    const result = native.finish(this.handle)
    return result === null ? EMPTY() : result
  }

  finishString (encoding) {
    const code = STRING_ENCODINGS[encoding]
    if (code === undefined) {
      const body = this.finish()
      return body === false ? false : decode(body, encoding, body.length)
    }
    const result = native.finishString(this.handle, code)
    // A Buffer: UTF8_OR_BUFFER's text that is not one-byte, for toString.
    return typeof result === 'object' ? decode(result, 'utf8', result.length) : result
  }

  release () {
    native.abort(this.handle)
  }

  error () {
    const fields = native.error(this.handle)
    return fields === null ? null : errors.bodyError(fields.code, fields)
  }

  get received () {
    return native.sizes(this.handle)[RECEIVED]
  }

  get native () {
    return true
  }

  get capacity () {
    return native.sizes(this.handle)[CAPACITY]
  }

  get held () {
    return native.sizes(this.handle)[LENGTH]
  }

  /** After finish(): the digests asked for ({ sha256: Buffer, ... }), or null. */
  digests () {
    return this.requested > 0 ? readDigests(this.requested, native.digests(this.handle, SCRATCH)) : null
  }

  moveToNative () {
    return this
  }
}

/** `end` bytes of `buf` as a string, or `end` where the string would be too long. */
function decode (buf, encoding, end) {
  try {
    return end === buf.length ? buf.toString(encoding) : buf.toString(encoding, 0, end)
  } catch (err) {
    // Node's own ERR_STRING_TOO_LONG (hex, base64, ...): the client's body did that.
    if (err && err.code === 'ERR_STRING_TOO_LONG') return end
    throw err
  }
}

module.exports = { storeFor, emptyStore, STRING_ENCODINGS, JS_TIER_MAX, TEXT_JS_TIER_MAX, FIRST_CHUNK_MAX }
