'use strict'
// The rest of a refused body, and the answer that must reach a client still sending it.
//
// A body refused before its end (a limit, a bad encoding, a timeout, a consumer that
// stopped reading) leaves a client that is still sending. Answering it at once loses the
// answer more often than not (docs/early-answers.md has the measurements): uWS closes a
// `Connection: close` request's socket as soon as the answer is written, with the rest of
// the body unread in the kernel, so the close is a RST and the client's kernel drops the
// answer it had received; and node:http clients stop writing their body once a complete
// answer has arrived, so a keep-alive connection hangs until a timeout. Nothing answered
// early can be bounded afterwards either: uWS.js refuses every use of `res` once it has
// ended, so neither pause() nor close() is possible while uWS keeps reading the rest for
// as long as the client sends 16 KiB/s. So every API follows one rule:
//
//   1. The body's memory goes at once. The rest is read and dropped (counted, never kept)
//      until the body ends, for at most `linger.bytes` more bytes and `linger.timeout` ms
//      after the refusal (DEFAULT_BYTES, DEFAULT_TIMEOUT). A declared length whose rest
//      is over the byte bound is past it at once: nothing is read for nothing.
//   2. The body ended within the bound: the answer goes out as any answer. The client
//      has finished sending and reads it; a keep-alive connection stays in step (the
//      next request starts at the right byte) and a `Connection: close` one is closed
//      with nothing unread (FIN, not RST).
//   3. Past the bound: reading stops, the answer goes out with `Connection: close`, and
//      the connection is closed GRACE_MS later (a client that reads while it sends, as
//      node:http, fetch, curl and browsers do, has the answer by then).
//
// Who writes the answer:
//   - bare uWS (readBody, readText, bodyStream, readMultipart, and BodyAccumulator users):
//     the application, with answerError(res, err). The readers register the state of
//     each body they stop reading (refused() below), so answerError knows what to do;
//     it writes the answer when the rest has been dropped, or at once if it had.
//   - Express middleware (the parsers, multipart()): the framework's error handler, so
//     the middleware calls next(err) only when the rest has been dropped, or past the
//     bound with `Connection: close` set and reading stopped (beforeNext() below), as
//     body-parser and multer drain a body before next(err), but bounded.
//
// For a reader (this is what multipart's code calls):
//
//   Bare uWS. When the reader stops taking a body, before or at its end:
//     const drain = refused(res, { ended, remaining, linger })
//       ended      the body's last chunk (isLast) has been seen
//       remaining  the bytes still to come when the request declared its length
//                  (content-length minus what was read), else -1
//       linger     parseLinger(options.linger)
//     It returns null when `ended`; otherwise a Drain, and from then on the reader's
//     onData hands it every chunk that still arrives, drain.chunk(chunk, isLast), and
//     its onAborted calls drain.abort(). The reader must not pause the client after
//     this (resume it if it had). answerError(res, err) then does the rest.
//
//   Middleware. When the middleware refuses a body that has not ended:
//     const drain = beforeNext(res, controls, { remaining, linger }, proceed)
//       res        the framework's response (setHeader is used past the bound)
//       controls   { pause(), close(), holdClose() }: stop reading (uWS's res.pause()
//                  or the request stream's pause()); close the connection now (uWS's
//                  res.close() while the response is pending, or req.socket.destroy());
//                  optional, keep the framework from closing the connection as soon as
//                  its answer is written (node:http: lib/parsers/source.js)
//       proceed()  called once: after the body ended, the client went away, or past the
//                  bound (then the source is paused, `Connection: close` set, and the
//                  connection closed GRACE_MS later if it is still open); it calls
//                  next(err)
//     The middleware feeds drain.chunk(chunk, isLast) and drain.abort() as above.
const http = require('node:http')
const { Buffer } = require('node:buffer')
const { parseLimit, checkNames, describe } = require('./options')

const MIB = 1024 * 1024
// What the server reads of a refused body before giving up on it. Dropping costs uWS
// ~120-160 us of server CPU per MiB here (docs/early-answers.md), so 64 MiB is ~10 ms:
// less than reading a 10 MB body, for a client that pays for every byte it sends. It
// covers an upload a few times over any usual limit, which then gets its answer cleanly.
const DEFAULT_BYTES = 64 * MIB
// How long after the refusal the rest may take: upstream uWS's own idle timeout (10 s;
// the 20.57 build tested here has 30 s), so a refused request holds its connection no
// longer than an idle one is kept. A client sending 6.4 MB/s finishes 64 MiB within it.
const DEFAULT_TIMEOUT = 10000
// After a closing answer, how long the client has to read it before the connection
// closes: several round trips on any link, for ~200 bytes.
const GRACE_MS = 2000
// Past a bound reading is paused, but uWS may deliver more: what it had already read and,
// on 20.57, as much as the socket's kernel queue holds (its uSockets reads again at once
// after a full 512 KiB read, paused or not: loop.c read_more), which a sender as fast as
// the server can keep refilling. Past this much more the connection is closed at once.
const OVERRUN = 64 * MIB
// setTimeout's largest delay.
const MAX_TIMEOUT = 0x7fffffff

/**
 * The `linger` option: undefined/null for the defaults, false for none (nothing more is
 * read: the answer goes out at once with `Connection: close`), or { bytes, timeout }
 * (bytes: a number or a string like '64mb'; timeout: ms, 0 to wait for none of it).
 */
function parseLinger (value) {
  if (value === undefined || value === null) return DEFAULTS
  if (value === false) return NONE
  if (typeof value !== 'object') {
    throw new TypeError(`uws-body: linger must be false or { bytes, timeout }, got ${describe(value)}`)
  }
  checkNames(value, ['bytes', 'timeout'], 'linger option')
  const bytes = value.bytes === undefined || value.bytes === null ? DEFAULT_BYTES : parseLimit(value.bytes)
  let timeout = DEFAULT_TIMEOUT
  if (value.timeout !== undefined && value.timeout !== null) {
    timeout = value.timeout
    if (typeof timeout !== 'number' || !(timeout >= 0 && timeout <= MAX_TIMEOUT)) {
      throw new TypeError(`uws-body: linger.timeout must be a number of milliseconds from 0 to ${MAX_TIMEOUT} (a refused body's rest cannot be waited for forever), got ${typeof timeout === 'number' ? timeout : describe(timeout)}`)
    }
  }
  return Object.freeze({ bytes, timeout })
}

const DEFAULTS = Object.freeze({ bytes: DEFAULT_BYTES, timeout: DEFAULT_TIMEOUT })
const NONE = Object.freeze({ bytes: 0, timeout: 0 })

// Bytes handed to every drain in this process, also those that arrive after an outcome
// (what the server had read when it stopped): what the tests check the bounds against.
let droppedTotal = 0

// A Drain's outcome.
const ENDED = 'ended'
const BOUND = 'bound'
const ABORTED = 'aborted'

/**
 * Counts what still arrives of a refused body, holding none of it, until the body ends,
 * passes a bound or its client goes: then `onOutcome(outcome)` is called once (never
 * from the constructor: a bound passed at once is reported on the next tick). Past a
 * bound, `onOverrun()` is called once if more than OVERRUN bytes still come.
 */
class Drain {
  constructor (bounds, remaining, onOutcome, onOverrun) {
    this.outcome = null
    this.dropped = 0
    this._after = 0
    this._bytes = bounds.bytes
    this._onOutcome = onOutcome
    this._onOverrun = onOverrun || null
    this._timer = null
    if (remaining > bounds.bytes || bounds.timeout === 0) {
      // The rest is known to pass the bound, or none may be waited for.
      process.nextTick(() => this._finish(BOUND))
    } else {
      this._timer = setTimeout(() => this._finish(BOUND), bounds.timeout)
      this._timer.unref()
    }
  }

  /** A chunk of the rest (any value: only its byteLength is read); isLast at the end. */
  chunk (chunk, isLast) {
    const n = byteLengthOf(chunk)
    droppedTotal += n
    if (this.outcome !== null) {
      if (this.outcome === BOUND && this._onOverrun !== null && (this._after += n) > OVERRUN) {
        const onOverrun = this._onOverrun
        this._onOverrun = null
        onOverrun()
      }
      return
    }
    this.dropped += n
    if (isLast) this._finish(ENDED)
    else if (this.dropped > this._bytes) this._finish(BOUND)
  }

  /** The client went away. */
  abort () {
    this._finish(ABORTED)
  }

  _finish (outcome) {
    if (this.outcome !== null) return
    this.outcome = outcome
    if (this._timer !== null) {
      clearTimeout(this._timer)
      this._timer = null
    }
    const onOutcome = this._onOutcome
    this._onOutcome = null
    onOutcome(outcome)
  }
}

/**
 * A chunk's size in bytes, for any value onData may be given: 0 for what has none (a
 * detached DataView's getter throws; the readers report such chunks themselves).
 */
function byteLengthOf (chunk) {
  if (chunk instanceof ArrayBuffer) return chunk.byteLength
  if (chunk === null || typeof chunk !== 'object') return 0
  try {
    const n = chunk.byteLength
    return typeof n === 'number' ? n : 0
  } catch {
    return 0
  }
}

// ---- bare uWS ----

// res -> what answerError needs to know about its body: ENDED_BODY, or a UwsLinger.
const bodies = new WeakMap()
const ENDED_BODY = { state: ENDED }

// A UwsLinger's states.
const DRAINING = 0
const DRAINED = 1 // the body ended; waiting for the answer
const PAST_BOUND = 2 // reading stopped; waiting for the answer, GRACE_MS at most
const DONE = 3

/**
 * A bare-uWS body that was refused before its end: drains it, holds the application's
 * answer until it has ended (or the bound passed), then writes it.
 */
class UwsLinger {
  constructor (res, bounds, remaining) {
    this.res = res
    this.state = DRAINING
    this.reply = null
    this.timer = null
    this.drain = new Drain(bounds, remaining, (outcome) => this.outcome(outcome, bounds), () => this.close())
  }

  outcome (outcome, bounds) {
    if (this.state === DONE) return
    if (outcome === ABORTED) return this.done()
    if (outcome === ENDED) {
      this.state = DRAINED
      if (this.reply !== null) return this.send()
      // An application that never answers holds the connection no longer than the bound.
      return this.later(bounds.timeout || GRACE_MS, () => this.close())
    }
    this.state = PAST_BOUND
    if (!this.use(() => this.res.pause())) return this.done()
    if (this.reply !== null) return this.send()
    this.later(GRACE_MS, () => this.close())
  }

  answer (reply) {
    if (this.state === DONE || this.reply !== null) return
    this.reply = reply
    if (this.state !== DRAINING) this.send()
  }

  send () {
    this.clearTimer()
    const { res, reply } = this
    if (this.state === DRAINED) {
      this.done()
      return this.use(() => res.cork(() => writeAnswer(res, reply)))
    }
    // Past the bound: the whole answer goes out through writeStatus, so that uWS still
    // sees the response as pending and `res` stays usable for the close() that follows
    // (an end() would forbid it, and `end(body, true)` closes at once, with a RST).
    if (!this.use(() => res.cork(() => res.writeStatus(closingAnswer(reply))))) return this.done()
    this.state = PAST_BOUND
    this.later(GRACE_MS, () => this.close())
  }

  close () {
    const res = this.res
    this.done()
    this.use(() => res.close())
  }

  later (ms, fn) {
    this.clearTimer()
    this.timer = setTimeout(fn, ms)
    this.timer.unref()
  }

  clearTimer () {
    if (this.timer !== null) {
      clearTimeout(this.timer)
      this.timer = null
    }
  }

  done () {
    this.state = DONE
    this.clearTimer()
    if (bodies.get(this.res) === this) bodies.delete(this.res)
  }

  /**
   * Runs fn on `res`; false if `res` is gone: uWS.js throws on every use of a response
   * that was aborted or answered (the application may have answered it itself).
   */
  use (fn) {
    if (this.res.aborted === true) return false
    try {
      fn()
      return true
    } catch {
      return false
    }
  }
}

/**
 * A bare-uWS reader stops taking the body of `res` (see the top of this file). Returns
 * the Drain to feed, or null when the body had ended.
 */
function refused (res, { ended, remaining = -1, linger = DEFAULTS }) {
  if (ended) {
    bodies.set(res, ENDED_BODY)
    return null
  }
  const state = new UwsLinger(res, linger, remaining)
  bodies.set(res, state)
  return state.drain
}

// ---- answers ----

// A header field name (RFC 9110 token) and value. A value is visible ASCII, space and tab
// only: uWS's writeHeader sends a string as UTF-8 and the closing answer's head is one
// latin1 Buffer, so any other character would go out as different bytes on the two paths
// (and latin1 keeps only a character's low byte: U+010A would be a LF).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const SAFE_VALUE = /^[\t\x20-\x7e]*$/
// What may appear as an error's `code` in an answer.
const CODE = /^[A-Za-z0-9_.-]{1,64}$/

/**
 * Answers `error` on the uWS response `res`, by the rules at the top of this file:
 * status from error.status (400-599, else 500), a short JSON body
 * { status, code, message } (code and message only for errors meant for the client:
 * `expose`, or any status under 500), or options.body / options.contentType.
 * options.headers: more headers. options.bodyEnded, options.linger: for a body that
 * uws-body does not read (BodyAccumulator): whether its last chunk was seen (default
 * true), and, when not, the bounds for the rest, which answerError then reads itself
 * (its onData replaces the caller's). Does nothing once `res.aborted` is set.
 */
const ANSWER_OPTIONS = ['body', 'contentType', 'headers', 'bodyEnded', 'linger']

function answerError (res, error, options) {
  if (res === null || typeof res !== 'object' || typeof res.writeStatus !== 'function' || typeof res.onData !== 'function') {
    throw new TypeError(`uws-body: answerError(res, error) needs a uWS HttpResponse, got ${describe(res)}`)
  }
  if (options !== undefined && options !== null && typeof options !== 'object') {
    throw new TypeError(`uws-body: answerError options must be an object, got ${describe(options)}`)
  }
  const o = options || {}
  checkNames(o, ANSWER_OPTIONS, 'answerError option')
  const reply = replyOf(error, o)
  if (res.aborted === true) return
  let known = bodies.get(res)
  if (known === undefined && o.bodyEnded === false) {
    // The caller's body, refused before its end: its rest is read here.
    const drain = refused(res, { ended: false, linger: parseLinger(o.linger) })
    known = bodies.get(res)
    res.onData((chunk, isLast) => drain.chunk(chunk, isLast))
  }
  if (known === undefined || known === ENDED_BODY) {
    if (known === ENDED_BODY) bodies.delete(res)
    return res.cork(() => writeAnswer(res, reply))
  }
  known.answer(reply)
}

/** { status, statusText, contentType, body (Buffer), headers: [[name, value]] } for error and options. */
function replyOf (error, o) {
  const e = error !== null && typeof error === 'object' ? error : {}
  let status = e.status !== undefined ? e.status : e.statusCode
  if (!Number.isInteger(status) || status < 400 || status > 599) status = 500
  const exposed = typeof e.expose === 'boolean' ? e.expose : status < 500
  const statusText = http.STATUS_CODES[status] || 'Error'
  let body = o.body
  let contentType = o.contentType
  if (body === undefined || body === null) {
    const code = exposed && typeof e.code === 'string' && CODE.test(e.code) ? e.code : status >= 500 ? 'ERR_INTERNAL' : undefined
    const message = exposed && typeof e.message === 'string' && e.message !== '' ? e.message : statusText
    body = Buffer.from(JSON.stringify({ status, code, message }))
    if (contentType === undefined) contentType = 'application/json; charset=utf-8'
  } else if (typeof body === 'string') {
    body = Buffer.from(body)
    if (contentType === undefined) contentType = 'text/plain; charset=utf-8'
  } else if (!Buffer.isBuffer(body)) {
    throw new TypeError(`uws-body: answerError options.body must be a string or a Buffer, got ${describe(body)}`)
  }
  const headers = []
  if (contentType !== undefined) headers.push(['content-type', contentType])
  if (o.headers !== undefined && o.headers !== null) {
    if (typeof o.headers !== 'object') throw new TypeError(`uws-body: answerError options.headers must be an object, got ${describe(o.headers)}`)
    for (const name of Object.keys(o.headers)) headers.push([name, String(o.headers[name])])
  }
  for (const [name, value] of headers) {
    const lower = name.toLowerCase()
    if (!TOKEN.test(name) || !SAFE_VALUE.test(value) || lower === 'content-length' || lower === 'connection' || lower === 'transfer-encoding') {
      throw new TypeError(`uws-body: answerError cannot send the header ${JSON.stringify(name)}: ${JSON.stringify(value)} (a name is an RFC 9110 token, a value visible ASCII, space and tab; content-length, connection and transfer-encoding are answerError's own)`)
    }
  }
  return { status, statusText, body, headers }
}

function writeAnswer (res, reply) {
  res.writeStatus(`${reply.status} ${reply.statusText}`)
  for (const [name, value] of reply.headers) res.writeHeader(name, value)
  res.end(reply.body)
}

/**
 * The whole closing answer as the argument of writeStatus, which uWS sends as
 * "HTTP/1.1 " + it + "\r\n": that final CRLF is the body's last two bytes, and counted
 * in its content-length.
 */
function closingAnswer (reply) {
  let head = `${reply.status} ${reply.statusText}\r\n`
  for (const [name, value] of reply.headers) head += `${name}: ${value}\r\n`
  head += `connection: close\r\ncontent-length: ${reply.body.length + 2}\r\n\r\n`
  return Buffer.concat([Buffer.from(head, 'latin1'), reply.body])
}

// ---- middleware ----

/**
 * A middleware refused a body that has not ended (see the top of this file): returns the
 * Drain to feed; proceed() is called once when next(err) may run.
 */
function beforeNext (res, controls, { remaining = -1, linger = DEFAULTS }, proceed) {
  const close = () => controls.close()
  return new Drain(linger, remaining, (outcome) => {
    if (outcome === BOUND) {
      controls.pause()
      if (typeof controls.holdClose === 'function') controls.holdClose()
      // The client is told the connection ends with this answer, and a framework that
      // waits for the request to end before answering (Express's finalhandler) or an
      // application that never answers cannot hold it past GRACE_MS.
      if (res !== null && typeof res === 'object' && !res.headersSent && typeof res.setHeader === 'function') {
        try {
          res.setHeader('Connection', 'close')
        } catch {}
      }
      setTimeout(close, GRACE_MS).unref()
    }
    proceed()
  }, close)
}

module.exports = {
  DEFAULT_BYTES,
  DEFAULT_TIMEOUT,
  GRACE_MS,
  OVERRUN,
  Drain,
  byteLengthOf,
  parseLinger,
  refused,
  beforeNext,
  answerError,
  droppedBytes: () => droppedTotal
}
