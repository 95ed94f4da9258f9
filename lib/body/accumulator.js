'use strict'
// Buffer from node:buffer, not the global: globalThis.Buffer is a getter (Node's path to
// deprecating it in ES modules), on every body's path (docs/performance.md, row 'Buffer
// getter'). Every module here takes it so.
const { Buffer, constants: { MAX_LENGTH, MAX_STRING_LENGTH } } = require('node:buffer')
const errors = require('../native/errors')
const { storeFor, emptyStore, STRING_ENCODINGS, JS_TIER_MAX, FIRST_CHUNK_MAX } = require('./body-store')
const { UNKNOWN, INVALID, parseContentLength, parseContentEncoding, isIdentity } = require('./headers')
const { parseLimit, parseMaxPreallocated, parseInflate } = require('../plan/limits')
const { objectOption } = require('../plan/check')
const { parseDigest } = require('../plan/digest')
const { digestsFor } = require('./digest')

// The option that says a body will be read as UTF-8 text (readText, the parsers' UTF-8
// bodies); a symbol, so that no name a user can pass is taken.
const AS_TEXT = Symbol('uws-body: read as UTF-8 text')

const OPEN = 0
const FAILED = 1
const ABORTED = 2
const FINISHED = 3

/**
 * One request body, copied chunk by chunk once into its final place. The body rules
 * (limit, declared length, mismatch, abort) and its outcomes are here, whatever holds the
 * bytes (lib/body/body-store.js); the native core applies the same ones (src/core/body.rs),
 * checked against one table by __test__/body-rules.test.js and tests/body_rules.rs.
 * The library's readers make one with the options they read once at their entry
 * (limit, maxPreallocated, inflate) and the request's content-length and content-encoding.
 */
class Body {
  constructor (limit, maxPreallocated, inflate, contentLength, contentEncoding, asText, digests = null, atFirstBytes = false) {
    // A body must fit one Buffer: larger ones are refused as 413 like any other body over
    // the limit (4 GiB on Node 20; from Node 22 a Buffer may be as long as memory allows).
    limit = Math.min(limit, MAX_LENGTH)
    const expected = parseContentLength(contentLength)
    const encoding = parseContentEncoding(contentEncoding)

    this._state = OPEN
    this._error = null
    this._received = 0
    this._expected = expected >= 0 ? expected : UNKNOWN
    this._limit = limit
    this._maxPreallocated = maxPreallocated
    // Bytes past it fail a push: a declared length, never over the limit, or the limit.
    this._bound = expected >= 0 ? expected : limit

    if (expected === INVALID) {
      this._store = emptyStore()
      this._fail(errors.bodyError('ERR_BODY_INVALID_LENGTH', {}))
    } else if (expected > limit && isIdentity(encoding)) {
      this._store = emptyStore()
      this._fail(errors.tooLarge(limit, expected, 0))
    } else {
      this._store = storeFor(expected, limit, maxPreallocated, encoding, inflate, asText, digests, atFirstBytes)
      // What only the store can refuse up front: an encoding (before the declared length,
      // which the core then checks itself), memory.
      const refused = this._store.error()
      if (refused !== null) this._fail(refused)
    }
  }

  /**
   * Copies the chunk before returning: uWS detaches its ArrayBuffer when onData returns.
   * Returns false from the first error on (see `error`).
   */
  push (chunk) {
    // The chunk first: a chunk push() cannot read is the program's mistake in any state.
    const bytes = this._store.bytes(chunk)
    if (this._state !== OPEN) return this._closed()
    const received = this._received + bytes.byteLength
    if (received > this._bound) return this._fail(this._overBound(received))
    this._received = received
    return bytes.byteLength === 0 || this._store.write(bytes) || this._notWritten(bytes)
  }

  /** The whole body as a Buffer the caller owns. Throws the body's error, if any. */
  finish () {
    this._end('finish')
    const body = this._store.finish()
    if (body === false) throw this._failed(this._store.error())
    this._state = FINISHED
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
    if (STRING_ENCODINGS[encoding] === undefined && !Buffer.isEncoding(encoding)) {
      throw new TypeError(`BodyAccumulator.finishString: unknown encoding ${JSON.stringify(encoding)}`)
    }
    this._end('finishString')
    const result = this._store.finishString(encoding)
    if (typeof result === 'string') {
      this._state = FINISHED
      return result
    }
    // A number: the body's length, too long for a string (Node's or V8's bound).
    throw this._failed(result === false ? this._store.error() : errors.stringTooLong(MAX_STRING_LENGTH, result))
  }

  /** Releases the body's memory now. Idempotent; does nothing after finish(). */
  abort () {
    if (this._state === OPEN) {
      this._error = errors.aborted(this._expected, this._received)
      this._store.release()
    } else if (this._state !== FAILED) {
      return
    }
    this._state = ABORTED
  }

  /** null, or the BodyError that made push() return false. */
  get error () {
    return this._error
  }

  get received () {
    return this._store.received
  }

  get length () {
    return this._store.held
  }

  /** Whether its memory is native (lib/body/buffered-read.js's readers watch for aborts sooner then). */
  get native () {
    return this._store.native
  }

  get capacity () {
    return this._store.capacity
  }

  /**
   * After finish() or finishString(): the digests the `digest` option asked for, of the
   * bytes the body gave ({ sha256: Buffer, ... }), or null when none were asked.
   */
  get digests () {
    return this._state === FINISHED ? this._store.digests() : null
  }

  _overBound (received) {
    if (this._expected >= 0) return errors.lengthMismatch(this._expected, received)
    return errors.tooLarge(this._limit, UNKNOWN, received)
  }

  // The store did not take a chunk: it failed, or it is a JS one that holds only a first
  // chunk, and the native core takes the body over.
  _notWritten (bytes) {
    if (this._store.error() === null) {
      this._store = this._store.moveToNative(this._limit, this._maxPreallocated, this._received)
      if (this._store.write(bytes)) return true
    }
    return this._fail(this._store.error())
  }

  // finish()'s and finishString()'s rules: throws the body's error, if any.
  _end (call) {
    if (this._state !== OPEN) {
      throw this._state === FINISHED ? errors.stateError(`${call}() after finish()`) : this._error
    }
    if (this._expected >= 0 && this._received !== this._expected) {
      throw this._failed(errors.lengthMismatch(this._expected, this._received))
    }
  }

  _closed () {
    if (this._state === FAILED) return false
    throw errors.stateError(this._state === ABORTED ? 'push() after abort()' : 'push() after finish()')
  }

  _fail (error) {
    this._state = FAILED
    this._error = error
    this._store.release()
    return false
  }

  _failed (error) {
    this._fail(error)
    return error
  }
}

// A BodyAccumulator its program drops without finish() or abort() (a client gone, and
// its onAborted forgot abort()) gives its JS-tier reservation back to the memory budget
// when V8 collects it. Native memory has its own finalizer.
const dropped = new FinalizationRegistry((store) => store.release())

/**
 * The public form (index.d.ts): its options, headers included, in one object read here.
 * Unlike the library's readers, which end every body they begin, its program may drop it
 * at any point. So its JS-tier Buffer and reservation are made with its first bytes, and
 * a body still incomplete after a push is watched for a drop (a registration costs more
 * than a whole 100-byte body: docs/performance.md, row 'budget per body'); one complete
 * in its first push, the usual small body, is not.
 */
class BodyAccumulator extends Body {
  constructor (options) {
    options = objectOption(options, 'options')
    super(parseLimit(options.limit), parseMaxPreallocated(options.maxPreallocated), parseInflate(options.inflate),
      options.contentLength, options.contentEncoding, options[AS_TEXT] === true,
      digestsFor(parseDigest(options.digest), options.contentDigest, options.reprDigest, options.contentMd5), true)
    this._watched = false
  }

  push (chunk) {
    const pushed = super.push(chunk)
    if (this._watched === false && this._store.reserved > 0 && this._received !== this._expected) {
      this._watched = true
      dropped.register(this, this._store)
    }
    return pushed
  }
}

module.exports = { Body, BodyAccumulator, JS_TIER_MAX, FIRST_CHUNK_MAX, AS_TEXT }
