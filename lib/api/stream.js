'use strict'
// bodyStream(res, req, options): a uWS request body as a Readable, with backpressure.
//
// Each uWS chunk is copied once, into the Buffer the stream pushes: an unencoded chunk by
// Buffer.allocUnsafe + set, an encoded one by the decoder itself, which writes straight
// into a JS Buffer (src/node/stream.rs). JS memory, not the native pool's: faster than an
// external Buffer of pooled memory per chunk (docs/performance.md, row 'stream slabs'),
// and a stream's pieces are short-lived garbage, which V8's scavenges collect cheaply.
//
// Backpressure: when push() returns false (the buffer passed highWaterMark) the client
// is paused (res.pause(): uWS stops reading its socket, so TCP slows the sender), and
// resumed when the stream is read again and everything decoded so far has been taken.
// uWS may still deliver chunks after pause(): the 20.30 fork the rest of one 512 KiB read,
// uWS 20.57 everything the kernel has queued for the socket (its reads go on while they
// fill the 512 KiB buffer; Linux autotunes that queue up to net.ipv4.tcp_rmem's max).
// Those chunks are pushed, or for an encoded body held encoded by the core until there is
// room, and the client stays paused until the stream has been read below its mark again,
// so memory stays bounded by highWaterMark plus that one queue.
const { Buffer } = require('node:buffer')
const { Readable } = require('node:stream')
const { AsyncResource } = require('node:async_hooks')
const native = require('../native/native')
const errors = require('../native/errors')
const { bytesOf, refusal } = require('../body/chunk')
const { headersOf } = require('../body/headers')
const { parseLimit, parseInflate, parseHighWaterMark } = require('../plan/limits')
const { parseContentLength, parseContentEncoding, isIdentity, UNKNOWN, INVALID } = require('../body/headers')
const { readNames, parseOnAborted, PAUSABLE_METHODS } = require('../plan/check')
const { readerForms } = require('../plan/reader')
const { parseTimeout } = require('../plan/timeout')
const { startTimer } = require('../body/deadlines')
const { attach } = require('../body/intake')
const { parseLinger } = require('../plan/linger')
const { parseDigest } = require('../plan/digest')
const { requestDigests, readDigests, SCRATCH } = require('../body/digest')
const budget = require('../body/budget')

// What bodyStream's argument errors call it, and what it needs of `res`.
const CALL = 'bodyStream(res, req)'

// Decoded bytes are written into slabs of this size and pushed as views of them, so that
// a small decoded piece pins no more than its share of one slab (the pieces of a slab are
// pushed in order and released with the last of them), with no second copy.
const SLAB = 128 * 1024
// A new slab is started when less room than this is left in the current one.
const MIN_ROOM = 8 * 1024
// What uWS may deliver after pause(): the rest of one read (the 20.30 fork's 512 KiB).
const AFTER_PAUSE = 512 * 1024
// Read only, never written: stands in for an empty view the addon refuses.
const EMPTY_ARRAY_BUFFER = new ArrayBuffer(0)

// bodyStream's options. A buffered reader's maxPreallocated is not one: a stream
// preallocates nothing, and taken and ignored it would look like a bound it is not.
const STREAM_OPTIONS = ['limit', 'inflate', 'timeout', 'highWaterMark', 'linger', 'onAborted', 'digest']

/**
 * A uWS request body as a Readable stream of Buffers (decoded, for an encoded body).
 * Call it synchronously in the route handler. It owns res.onData and res.onAborted.
 */
const STREAM = readerForms('bodyStream', 'streamReader', CALL, PAUSABLE_METHODS, streamOptions, (res, req, plan) => open(res, req, plan))
const bodyStream = STREAM.perCall
/** bodyStream compiled for a route: the options read once, `stream(res, req)` per request. */
const streamReader = STREAM.compiled

function open (res, req, o) {
  const { contentLength, contentEncoding } = headersOf(req, CALL)
  return new BodyStream(res, o, parseContentLength(contentLength), parseContentEncoding(contentEncoding), requestDigests(o.digest, req))
}

/** bodyStream's options, read and checked once: the frozen value the stream reads. */
function streamOptions (given) {
  if (given === undefined || given === null) return DEFAULTS
  const options = readNames(given, STREAM_OPTIONS, 'bodyStream option', 'bodyStream options')
  const onAborted = parseOnAborted(options.onAborted)
  return Object.freeze({
    // No limit unless asked for: a stream holds at most highWaterMark whatever the body's
    // size, so the limit is a policy on what a client may send (disk, time), which only
    // the application knows; Node's own request stream and busboy have none either.
    limit: options.limit === undefined || options.limit === null ? Infinity : parseLimit(options.limit),
    inflate: parseInflate(options.inflate),
    highWaterMark: parseHighWaterMark(options.highWaterMark),
    // No deadline unless asked for: a stream pins no body memory while it waits, and how
    // long a large upload may legitimately take is the application's call.
    timeout: parseTimeout(options.timeout, 0),
    onAborted,
    linger: parseLinger(options.linger),
    digest: parseDigest(options.digest)
  })
}

const DEFAULTS = streamOptions({})

class BodyStream extends Readable {
  constructor (res, { limit, inflate, timeout, highWaterMark, onAborted, linger: bounds, digest }, expected, encoding, digests) {
    super({ highWaterMark })
    // The digests a `digest` list asked for, set (and 'digest' emitted) before 'end'.
    this.digests = null
    this._digest = digest
    this._res = res
    this._expected = expected
    this._stopped = false
    this._handle = null
    this._encoded = !isIdentity(encoding)
    this._slab = null
    this._at = 0
    this._clientPaused = false
    this._async = null
    // Inside a pull loop: a read() from a consumer's handler only asks for more.
    this._pulling = false
    this._receivedBytes = 0
    // The stream's bytes held in JS are bounded by its mark plus what arrives after a
    // pause: that bound (or the declared length, if less) is reserved from the memory
    // budget for the stream's life (lib/body/budget.js), so a stream is admitted or refused
    // before any byte is read. The native core reserves what it holds itself.
    this._reserved = 0
    // Set on a timer's turn, which runs in the caller's async context already.
    this._clearTimer = startTimer(timeout, () => {
      this._fail(errors.timedOut(timeout, this._receivedBytes))
    })
    // uWS's callbacks belong to no request: the consumer's handlers (which push() and
    // destroy() run, or schedule) must see the async context bodyStream was called in.
    // One resource per stream, destroyed by hand with it (see lib/body/async-context.js).
    this._async = new AsyncResource('UWS_BODY_STREAM', { requireManualDestroy: true })
    // Attached whatever happens below: bytes that arrive for a refused or destroyed stream
    // go to its refusal, which drops them (and keeps the connection in step).
    this._intake = attach(res, bounds, onAborted, (chunk, isLast) => {
      if (this._handle !== null) this._async.runInAsyncScope(this._write, this, chunk, isLast)
    }, () => {
      if (this._handle !== null) {
        this._async.runInAsyncScope(this._fail, this, errors.aborted(expected >= 0 ? expected : UNKNOWN, this._receivedBytes))
      }
    })
    const bound = highWaterMark + AFTER_PAUSE + (this._encoded ? SLAB : 0)
    const reserve = expected >= 0 && !this._encoded ? Math.min(expected, bound) : bound
    if (expected === INVALID) {
      const error = errors.bodyError('ERR_BODY_INVALID_LENGTH', {})
      this._release(() => process.nextTick(() => this.destroy(error)), error)
    } else if (!budget.take(reserve)) {
      const error = errors.overBudget()
      this._release(() => process.nextTick(() => this.destroy(error)), error)
    } else {
      this._reserved = reserve
      this._handle = digests === null
        ? native.streamCreate(expected, limit, encoding, inflate)
        : native.streamCreate(expected, limit, encoding, inflate, digests.requested, digests.contentDigest, digests.reprDigest, digests.contentMd5)
      const refused = native.streamError(this._handle)
      if (refused !== null) {
        // Refused before any byte: 'error' once the rest is dropped, and never before the
        // next tick (listeners are not attached yet).
        const error = errors.bodyError(refused.code, refused)
        this._release(() => process.nextTick(() => this.destroy(error)), error)
      }
    }
  }

  _write (chunk, isLast) {
    const handle = this._handle
    if (!this._encoded) {
      const accepted = native.streamWrite(handle, chunk)
      if (accepted === null) return this._refused(chunk, isLast)
      this._receivedBytes += chunk.byteLength
      if (accepted === false) return this._failNative()
      if (chunk.byteLength !== 0) {
        const copy = Buffer.allocUnsafe(chunk.byteLength)
        // A view's bytes, not its elements (new Uint8Array(int16s) would convert them, and
        // of a DataView make an empty array, pushing allocUnsafe's old bytes).
        copy.set(ArrayBuffer.isView(chunk) ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength) : new Uint8Array(chunk))
        if (!this.push(copy)) this._pauseClient()
      }
    } else {
      this._room()
      // While the client is paused the stream is full: no room is offered, and the core
      // holds the chunk as it came (encoded, smaller) until there is.
      const n = native.streamWrite(handle, chunk, this._slab, this._clientPaused ? SLAB : this._at)
      if (n === null) return this._refused(chunk, isLast)
      this._receivedBytes += chunk.byteLength
      if (n === false) return this._failNative()
      if (n > 0 && !this._pushPiece(n)) this._pauseClient()
    }
    if (this._handle === null) return // a consumer destroyed the stream from push()
    if (isLast) native.streamEnd(handle)
    if (!this._clientPaused) this._pull()
  }

  // A chunk the addon does not read. uWS gives ArrayBuffers, but onData may be called by
  // other code with any value: an empty view is an empty chunk (the addon cannot tell it
  // from a detached one, lib/body/chunk.js can), anything else fails the stream with
  // lib/body/chunk.js's TypeError (never a throw inside the caller's onData).
  _refused (chunk, isLast) {
    let bytes
    try {
      bytes = bytesOf(chunk, 'bodyStream')
    } catch (error) {
      return this._fail(error)
    }
    if (bytes.length !== 0) return this._fail(refusal(chunk, 'bodyStream'))
    this._write(EMPTY_ARRAY_BUFFER, isLast)
  }

  _read () {
    if (this._handle === null || this._pulling) return
    this._pull()
  }

  // Hands on what the core holds until the stream is full, the core needs the next chunk
  // (then the client is resumed), or the body ended (then the stream ends).
  _pull () {
    this._pulling = true
    try {
      while (this._handle !== null) {
        this._room()
        const n = native.streamRead(this._handle, this._slab, this._at)
        if (n === true) return this._end()
        if (n === false) return this._failNative()
        if (n === 0) return this._resumeClient()
        if (!this._pushPiece(n)) return this._pauseClient()
      }
    } finally {
      this._pulling = false
    }
  }

  _pushPiece (n) {
    const piece = this._slab.subarray(this._at, this._at + n)
    this._at += n
    return this.push(piece)
  }

  _room () {
    if (this._encoded && (this._slab === null || SLAB - this._at < MIN_ROOM)) {
      this._slab = Buffer.allocUnsafeSlow(SLAB)
      this._at = 0
    }
  }

  _pauseClient () {
    if (!this._clientPaused && this._handle !== null) {
      this._clientPaused = true
      this._res.pause()
    }
  }

  _resumeClient () {
    if (this._clientPaused) {
      this._clientPaused = false
      if (!this._res.aborted) this._res.resume()
    }
  }

  _end () {
    if (this._digest > 0) this.digests = readDigests(this._digest, native.streamDigests(this._handle, SCRATCH))
    this._release()
    if (this.digests !== null) this.emit('digest', this.digests)
    this.push(null)
  }

  _failNative () {
    const fields = native.streamError(this._handle)
    return this._fail(errors.bodyError(fields.code, fields))
  }

  _fail (error) {
    if (this._handle === null) return
    this._release(() => this.destroy(error), error)
  }

  // Frees the native stream and the timer; a body not read to its end is refused
  // (lib/body/intake.js), and the client resumed if it was paused, so that uWS reads and drops
  // the rest; deliver() (the stream's error) runs once that is done.
  _release (deliver = noop, error = null) {
    if (this._handle !== null) {
      native.streamAbort(this._handle)
      this._handle = null
    }
    if (this._reserved !== 0) {
      budget.give(this._reserved)
      this._reserved = 0
    }
    if (!this._stopped) {
      this._stopped = true
      this._intake.refuse(this._expected >= 0 ? this._expected - this._receivedBytes : -1, error, deliver)
    } else {
      deliver()
    }
    if (this._async !== null) {
      this._async.emitDestroy()
      this._async = null
    }
    this._slab = null
    this._clearTimer()
    this._resumeClient()
  }

  _destroy (error, callback) {
    this._release()
    callback(error)
  }
}

function noop () {}

module.exports = { bodyStream, streamReader }
