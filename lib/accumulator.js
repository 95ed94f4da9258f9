'use strict'
// Buffer from node:buffer, not the global: globalThis.Buffer is a getter (Node's path to
// deprecating it in ES modules), and reading it was 8% of a 100-byte body's time. Every
// module here takes it the same way.
const { Buffer, constants: { MAX_LENGTH, MAX_STRING_LENGTH } } = require('node:buffer')
const native = require('./native')
const textScratch = require('./text-scratch')
const errors = require('./errors')
const { bytesOf, refusal } = require('./chunk')
const { STRING_ENCODING, SIZES } = require('./protocol')
const {
  UNKNOWN, INVALID, parseLimit, parseMaxPreallocated, parseContentLength, parseContentEncoding, parseInflate, isIdentity, describe
} = require('./options')

// Bodies of a known length up to JS_TIER_MAX are read by plain JS (Buffer.allocUnsafe +
// set), larger ones by the native core. Below it, one N-API call, one external object and
// one external Buffer cost more than JS's copy into memory glibc hands out warm; above it,
// the native pool's warm memory wins. Measured end to end (a uWS server, server CPU per
// request, native / JS, 9 paired rounds): 16 KiB 1.34, 64 KiB 1.07, 128 KiB 1.10,
// 192 KiB 0.96, 256 KiB 0.61, 512 KiB 0.63, 1 MB 0.70.
const JS_TIER_MAX = 192 * 1024
// A body of unknown length keeps its first chunk in JS only up to this size: if a second
// chunk comes, that first chunk is copied again into the native buffer, and the JS
// Buffer it was in is garbage until the next collection. Above 16 KiB that Buffer is
// fresh memory each time (glibc hands back what a collection freed in bulk: 512 KiB in
// 64 KiB chunks took 13 more page faults a body), so a larger first chunk goes native
// at once. Under uWS a body of unknown length is chunked, so a first chunk cannot say
// whether more follow; streamed uploads, the usual chunked bodies, send 64 KiB frames.
// This bound against 64 KiB, bare uWS 20.57, server CPU per request, 7 paired rounds on
// fresh servers, Node 20 / 24: 512 KiB in 64 KiB frames 0.69 / 0.80; a body of a single
// 24 KiB or 48 KiB frame, which then goes native, 1.28-1.34 on both (+3-5 us).
const FIRST_CHUNK_MAX = 16 * 1024
// A body that will be read as UTF-8 text (the AS_TEXT option: readText, the parsers'
// UTF-8 bodies) leaves the JS tier above TEXT_JS_TIER_MAX instead: finishString builds
// the string straight from pooled memory, and before Node 24 Buffer.toString('utf8') is
// V8's own decoder, slower than that. Per body, native / JS tier, 11 paired rounds of
// 40-byte JSON lines, ASCII / with an accent per line: Node 20 and 22, 1 KiB 2.45-2.51 /
// 0.62-0.85, 2 KiB 0.99 / 0.54, 4 KiB 0.59-0.64 / 0.30, 64 KiB 0.71-0.74 / 0.17-0.18.
// Node 24's is simdutf's (4 KiB 1.72 / 1.53, 64 KiB 0.89 / 1.01): there the bound stays.
const SIMDUTF_TO_STRING = Number(process.versions.node.split('.')[0]) >= 24
const TEXT_JS_TIER_MAX = SIMDUTF_TO_STRING ? JS_TIER_MAX : 2 * 1024
// The option that says so; a symbol, so that no name a user can pass is taken.
const AS_TEXT = Symbol('uws-body: read as UTF-8 text')

const OPEN = 0
const FAILED = 1
const ABORTED = 2
const FINISHED = 3

const EMPTY = () => Buffer.alloc(0)
const EMPTY_ARRAY_BUFFER = new ArrayBuffer(0)

// Encodings the native tier decodes itself (finishString's codes). Where toString is
// simdutf's, UTF-8 that is not one-byte comes back as a Buffer for it instead: V8's
// decoder was 2.3-6.3x memcpy + toString for 256 KiB-32 MiB of JSON with CJK text on
// Node 24, the Buffer 1.01-1.30 (bench/strings.js).
const { UTF8, LATIN1, UTF16LE, UTF8_OR_BUFFER } = STRING_ENCODING
const UTF8_CODE = SIMDUTF_TO_STRING ? UTF8_OR_BUFFER : UTF8
const STRING_ENCODINGS = { __proto__: null, utf8: UTF8_CODE, 'utf-8': UTF8_CODE, latin1: LATIN1, binary: LATIN1, utf16le: UTF16LE, 'utf-16le': UTF16LE, ucs2: UTF16LE, 'ucs-2': UTF16LE }
const { RECEIVED, LENGTH, CAPACITY } = SIZES

/**
 * Collects one request body, copying each chunk once into its final place. The rules
 * (limit, declared length, errors) are those of src/core/body.rs; small bodies apply
 * them here in JS, everything else in the native core.
 */
class BodyAccumulator {
  constructor (options) {
    if (options === undefined || options === null) options = {}
    else if (typeof options !== 'object') {
      throw new TypeError(`uws-body: options must be an object, got ${describe(options)}`)
    }
    // A body must fit one Buffer: larger ones are refused as 413 like any other body over
    // the limit. That is 4 GiB on Node 20; Node 22 and later make a Buffer of any length
    // up to 2^53 - 1, so there only memory bounds a `limit: Infinity` body.
    const limit = Math.min(parseLimit(options.limit), MAX_LENGTH)
    const maxPreallocated = parseMaxPreallocated(options.maxPreallocated)
    const expected = parseContentLength(options.contentLength)
    const encoding = parseContentEncoding(options.contentEncoding)
    const inflate = parseInflate(options.inflate)

    this._state = OPEN
    this._error = null
    this._native = null
    this._buf = null
    // True while _buf is a text-scratch Buffer (lib/text-scratch.js): longer than the body
    // perhaps, and going back there, never to the program.
    this._scratch = false
    this._received = 0
    this._expected = expected
    this._limit = limit
    this._maxPreallocated = maxPreallocated
    this._asText = options[AS_TEXT] === true
    const jsTierMax = this._asText ? TEXT_JS_TIER_MAX : JS_TIER_MAX
    this._firstChunkMax = Math.min(FIRST_CHUNK_MAX, jsTierMax)

    if (expected === INVALID) {
      this._expected = UNKNOWN
      this._fail(errors.bodyError('ERR_BODY_INVALID_LENGTH', {}))
    } else if (isIdentity(encoding) && expected <= jsTierMax && expected <= maxPreallocated && expected <= limit) {
      // JS tier. A known length is preallocated whole (it is below the cap); an unknown
      // one waits for its first chunk.
      if (expected > 0) this._buf = this._jsBuffer(expected)
    } else {
      // Encoded bodies are always native: the decoders live in src/core/decode.
      this._native = native.create(expected, limit, maxPreallocated, encoding, inflate)
      this._checkNative()
    }
  }

  /**
   * Copies the chunk before returning: uWS detaches its ArrayBuffer when onData returns.
   * Returns false from the first error on (see `error`).
   */
  push (chunk) {
    if (this._native !== null) {
      const accepted = native.push(this._native, chunk)
      if (accepted === true) return true
      if (accepted === null) return this._pushRefused(chunk)
      return this._checkNative()
    }
    // The chunk first: a chunk push() cannot read is the program's mistake in any state,
    // as in the native tier.
    const bytes = bytesOf(chunk)
    if (this._state !== OPEN) return this._closed()
    const received = this._received + bytes.length
    if (this._expected >= 0) {
      if (received > this._expected) return this._fail(errors.lengthMismatch(this._expected, received))
      if (bytes.length !== 0) this._buf.set(bytes, this._received)
    } else if (received > this._limit) {
      return this._fail(errors.tooLarge(this._limit, UNKNOWN, received))
    } else if (bytes.length !== 0) {
      if (this._buf === null && bytes.length <= this._firstChunkMax) {
        // Most bodies of unknown length still arrive in one chunk: that copy is the body.
        this._buf = this._jsBuffer(bytes.length)
        this._buf.set(bytes)
      } else {
        return this._toNative(bytes)
      }
    }
    this._received = received
    return true
  }

  /** The whole body as a Buffer the caller owns. Throws the body's error, if any. */
  finish () {
    if (this._native !== null) {
      const result = native.finish(this._native)
      if (result === false) throw this._nativeError()
      this._state = FINISHED
      return result === null ? EMPTY() : result
    }
    this._finishJs()
    const buf = this._buf
    this._buf = null
    if (buf === null) return EMPTY()
    if (!this._scratch) return buf
    // A text body read as a Buffer after all: the program gets one of the body's exact
    // length and no other body's bytes, so a scratch Buffer that is longer is copied out
    // of (the one second copy of a body, on a path only a direct AS_TEXT user takes).
    this._scratch = false
    if (buf.length === this._received) return buf
    const body = Buffer.allocUnsafe(this._received)
    buf.copy(body, 0, 0, this._received)
    textScratch.give(buf)
    return body
  }

  /**
   * The whole body decoded as a string. For utf8, latin1 and utf16le the native tier
   * builds the string straight from the body's memory (no Buffer is made, the memory goes
   * back to the pool), except UTF-8 that is not one-byte from Node 24, which is decoded
   * by Buffer.toString from a Buffer of the body's memory; other encodings go through
   * finish().toString().
   */
  finishString (encoding = 'utf8') {
    const code = STRING_ENCODINGS[encoding]
    if (code === undefined || this._native === null) {
      if (!Buffer.isEncoding(encoding)) throw new TypeError(`BodyAccumulator.finishString: unknown encoding ${JSON.stringify(encoding)}`)
      if (this._scratch) return this._finishScratchString(encoding)
      const body = this.finish()
      return this._decode(body, encoding, body.length)
    }
    const result = native.finishString(this._native, code)
    if (result === false) throw this._nativeError()
    this._state = FINISHED
    // A number: the body's length, too long for a string (its memory is released).
    if (typeof result === 'number') throw this._tooLongForString(result)
    if (typeof result === 'string') return result
    return this._decode(result, 'utf8', result.length)
  }

  /** Releases the body's memory now. Idempotent; does nothing after finish(). */
  abort () {
    if (this._native !== null) {
      native.abort(this._native)
      if (this._state === OPEN) this._state = ABORTED
      this._nativeError()
      return
    }
    if (this._state === OPEN || this._state === FAILED) {
      if (this._error === null) this._error = errors.aborted(this._expected, this._received)
      this._state = ABORTED
      this._dropBuffer()
    }
  }

  /** null, or the BodyError that made push() return false. */
  get error () {
    if (this._native !== null && this._error === null) this._nativeError()
    return this._error
  }

  get received () {
    return this._native !== null ? native.sizes(this._native)[RECEIVED] : this._received
  }

  get length () {
    if (this._native !== null) return native.sizes(this._native)[LENGTH]
    return this._state === OPEN && this._buf !== null ? this._received : 0
  }

  get capacity () {
    if (this._native !== null) return native.sizes(this._native)[CAPACITY]
    return this._state === OPEN && this._buf !== null ? this._buf.length : 0
  }

  // The native tier refused the chunk: JS says why (bytesOf throws that TypeError), or
  // finds it readable after all (an empty view, which N-API cannot tell from a detached
  // one) and hands it over as bytes it can read.
  _pushRefused (chunk) {
    const bytes = bytesOf(chunk)
    const accepted = native.push(this._native, bytes.length === 0 ? EMPTY_ARRAY_BUFFER : bytes)
    if (accepted === null) throw refusal(chunk)
    return accepted || this._checkNative()
  }

  _tooLongForString (received) {
    this._fail(errors.stringTooLong(MAX_STRING_LENGTH, received))
    return this._error
  }

  _fail (error) {
    this._state = FAILED
    this._error = error
    this._dropBuffer()
    return false
  }

  // The JS tier's Buffer for `n` bytes: a scratch one for a text body (lib/text-scratch.js).
  _jsBuffer (n) {
    if (this._asText) {
      const buf = textScratch.take(n)
      if (buf !== null) {
        this._scratch = true
        return buf
      }
    }
    return Buffer.allocUnsafe(n)
  }

  // Lets go of the JS tier's Buffer; a scratch one goes back, once: _buf is cleared first.
  _dropBuffer () {
    const buf = this._buf
    this._buf = null
    if (this._scratch) {
      this._scratch = false
      textScratch.give(buf)
    }
  }

  // finish()'s checks for the JS tier: throws the body's error, else it is FINISHED.
  _finishJs () {
    if (this._state !== OPEN) {
      if (this._state === FINISHED) throw errors.stateError('finish() after finish()')
      throw this._error
    }
    if (this._expected >= 0 && this._received !== this._expected) {
      this._fail(errors.lengthMismatch(this._expected, this._received))
      throw this._error
    }
    this._state = FINISHED
  }

  // finishString from a scratch Buffer: only the bytes this body wrote are decoded, and the
  // Buffer goes back whatever toString does.
  _finishScratchString (encoding) {
    this._finishJs()
    const buf = this._buf
    try {
      return this._decode(buf, encoding, this._received)
    } finally {
      if (this._buf === buf) this._dropBuffer()
    }
  }

  _decode (buf, encoding, end) {
    try {
      return end === buf.length ? buf.toString(encoding) : buf.toString(encoding, 0, end)
    } catch (err) {
      // Node's own ERR_STRING_TOO_LONG: the string (hex, base64, ...) would be longer
      // than V8 makes one. The client's body did that: a 413 like the native tier's.
      if (err && err.code === 'ERR_STRING_TOO_LONG') throw this._tooLongForString(end)
      throw err
    }
  }

  _closed () {
    if (this._state === FAILED) return false
    throw errors.stateError(this._state === ABORTED ? 'push() after abort()' : 'push() after finish()')
  }

  // A body of unknown length that turned out to need more than one chunk, or one large
  // chunk: from here the native core grows it. The first chunk, at most FIRST_CHUNK_MAX
  // bytes, is copied a second time here; that bounded copy buys the single-chunk case
  // (the common one) its one-copy JS path.
  _toNative (bytes) {
    // The native body is told how many bytes it is about to hold, so it takes its final
    // room at once instead of sizing itself to the first chunk and moving.
    const knownMinimum = this._received + bytes.length
    this._native = native.create(UNKNOWN, this._limit, this._maxPreallocated, null, true, knownMinimum)
    const first = this._buf
    const scratch = this._scratch
    this._buf = null
    this._scratch = false
    // A scratch Buffer may be longer than the chunk it holds: only that chunk goes on.
    const pushed = first === null || native.push(this._native, scratch ? first.subarray(0, this._received) : first)
    if (scratch) textScratch.give(first)
    if (!pushed) return this._checkNative()
    return native.push(this._native, bytes) || this._checkNative()
  }

  // After a native call that may have failed: records the error, returns false if any.
  _checkNative () {
    return this._nativeError() === null
  }

  _nativeError () {
    if (this._error === null) {
      const fields = native.error(this._native)
      if (fields !== null) {
        this._error = errors.bodyError(fields.code, fields)
        if (this._state === OPEN) this._state = FAILED
      }
    }
    return this._error
  }
}

module.exports = { BodyAccumulator, JS_TIER_MAX, FIRST_CHUNK_MAX, AS_TEXT }
