'use strict'
// The answer to a refused body, held on its uWS response until the rest of the body is
// dropped (lib/refusal/refusal.js). While held, the response's writing methods are shadowed on the
// instance: they record the calls (their bytes copied) and return what uWS's would, from
// one model of how uWS frames an answer (Framing, below). Then:
//   release()        the body ended: the calls are made again, in order, on uWS's own
//                    methods, which are then back: the answer is the one uWS frames.
//   closingAnswer()  past the bound: the same calls as Framing writes them, as one closing
//                    answer (Connection: close) for uWS's writeStatus, which leaves the
//                    response usable for the close() that follows.
// So whatever the handler writes (end, end(body, true), endWithoutBody, tryEnd, write)
// reaches a client that is still sending, framed as uWS frames it: an answer written
// early is what loses it (docs/early-answers.md).
const { Buffer } = require('node:buffer')

// The HttpResponse methods that write an answer. cork, pause, resume, close, onWritable
// and the rest are left alone.
const WRITERS = ['writeStatus', 'writeHeader', 'write', 'end', 'endWithoutBody', 'tryEnd', 'getWriteOffset']
const EMPTY = Buffer.alloc(0)
const OK = Buffer.from('200 OK')
const CRLF = Buffer.from('\r\n')
const LAST_CHUNK = Buffer.from('\r\n0\r\n\r\n')
// What uWS.js makes of a length it cannot convert (NaN, out of range) on x86-64.
const UNCONVERTIBLE = 2n ** 63n

/**
 * How uWS's HttpResponse (HttpResponse.h; the same bytes on both builds tested) frames a
 * sequence of calls: the state behind what each call returns and, given `out` (an array),
 * the closing answer's bytes. Those are uWS's but for two things: `Connection: close` goes
 * where end(body, true) writes it (after the application's headers, before Date), in
 * place of any connection header of the application's; and Date is the only mark written
 * (uWS's `uWebSockets: 20` header is switched off process-wide by ultimate-express, and
 * nothing tells whether it is).
 */
class Framing {
  constructor (out) {
    this.out = out
    this.status = false
    // write() was called: the body is chunked (HTTP_WRITE_CALLED).
    this.chunked = false
    // The head was ended by end/tryEnd/endWithoutBody (HTTP_END_CALLED).
    this.ended = false
    // Date is written: the head's fields end.
    this.marked = false
    // Whole: uWS.js would now refuse every use of the response.
    this.done = false
    this.offset = 0
  }

  put (...parts) {
    if (this.out !== null) for (const part of parts) this.out.push(typeof part === 'string' ? Buffer.from(part, 'latin1') : part)
  }

  writeStatus (status) {
    if (this.status) return
    this.status = true
    this.put('HTTP/1.1 ', status, CRLF)
  }

  writeHeader (key, value) {
    this.writeStatus(OK)
    if (this.out !== null && !this.marked && key.toString('latin1').toLowerCase() === 'connection') return
    this.put(key, ': ', value, CRLF)
  }

  mark () {
    this.marked = true
    if (this.out !== null) this.put(`Connection: close\r\nDate: ${new Date().toUTCString()}\r\n`)
  }

  write (chunk) {
    this.writeStatus(OK)
    if (chunk.length === 0) return
    if (!this.chunked) {
      this.mark()
      this.put('Transfer-Encoding: chunked\r\n')
      this.chunked = true
    }
    this.put(`\r\n${chunk.length.toString(16)}\r\n`, chunk)
  }

  end (body) {
    this.internalEnd(body, BigInt(body.length), true)
    this.done = true
  }

  tryEnd (chunk, totalSize) {
    this.internalEnd(chunk, lengthOf(totalSize), true)
  }

  endWithoutBody (reportedContentLength) {
    if (arguments.length === 0) this.internalEnd(EMPTY, 0n, false)
    else this.internalEnd(EMPTY, lengthOf(reportedContentLength), true)
    this.done = true
  }

  internalEnd (data, totalSize, withLength) {
    this.writeStatus(OK)
    if (totalSize === 0n) totalSize = BigInt(data.length)
    if (this.chunked) {
      this.write(data)
      this.put(LAST_CHUNK)
      this.done = true
      return
    }
    if (!this.ended) {
      this.ended = true
      this.mark()
      this.put(withLength ? `Content-Length: ${totalSize}\r\n\r\n` : CRLF)
    }
    this.put(data)
    this.offset += data.length
    if (BigInt(this.offset) === totalSize) this.done = true
  }
}

class HeldAnswer {
  /** onComplete(): called once, when the answer recorded is whole (end, endWithoutBody, tryEnd's total). */
  constructor (res, onComplete) {
    this.res = res
    // [name, args] of each call, in order; release() replays them from `next`.
    this.calls = []
    this.next = 0
    this.framing = new Framing(null)
    this.onComplete = onComplete
    // Replaying waits for uWS to take the rest of a tryEnd (its writes are optional).
    this.waiting = false
    this.saved = WRITERS.map((name) => [name, Object.prototype.hasOwnProperty.call(res, name), res[name]])
    const held = this
    // Each returns what uWS's own does, so that chained and checked calls go on as usual.
    res.writeStatus = function writeStatus (status) {
      held.record('writeStatus', [bytesOf(status)])
      return this
    }
    res.writeHeader = function writeHeader (key, value) {
      held.record('writeHeader', [bytesOf(key), bytesOf(value)])
      return this
    }
    res.write = function write (chunk) {
      held.record('write', [bytesOf(chunk)])
      return true
    }
    res.end = function end (body, closeConnection) {
      held.record('end', [bytesOf(body), closeConnection])
      return this
    }
    res.endWithoutBody = function endWithoutBody (...args) {
      held.record('endWithoutBody', args.slice(0, 2))
      return this
    }
    res.tryEnd = function tryEnd (chunk, totalSize) {
      held.record('tryEnd', [bytesOf(chunk), totalSize])
      return [true, held.framing.done]
    }
    res.getWriteOffset = function getWriteOffset () {
      return held.framing.offset
    }
  }

  /** A call on the held answer; none once it is whole (uWS.js would throw). */
  record (name, args) {
    const framing = this.framing
    if (framing.done) return
    this.calls.push([name, args])
    framing[name](...args)
    if (framing.done && this.onComplete !== null) {
      const onComplete = this.onComplete
      this.onComplete = null
      onComplete()
    }
  }

  get complete () {
    return this.framing.done
  }

  /** The response's own method `name`. */
  own (name) {
    const [, own, value] = this.saved.find(([n]) => n === name)
    return own ? value : Object.getPrototypeOf(this.res)[name]
  }

  /** Writes `status` with the response's own writeStatus, the shadows left in place. */
  writeStatusThrough (status) {
    this.own('writeStatus').call(this.res, status)
  }

  /** Puts the response's own methods back. */
  restore () {
    const res = this.res
    for (const [name, own, value] of this.saved) {
      if (own) res[name] = value
      else delete res[name]
    }
    this.saved = []
  }

  /** The client went away: nothing more is written or kept. */
  drop () {
    this.onComplete = null
    this.calls = []
    this.waiting = false
    if (this.saved.length !== 0) this.restore()
  }

  /** The body ended: the calls are made on uWS's own methods, which are then back. */
  release () {
    this.onComplete = null
    if (this.saved.length === 0) return
    if (this.next < this.calls.length) this.res.cork(() => this.replay())
    if (!this.waiting) this.restore()
  }

  /**
   * Makes the recorded calls from `next` on. A tryEnd that uWS takes in part (its writes
   * are optional: the rest is not kept) is continued once the socket drains, the shadows
   * still recording what comes meanwhile; the handler told it all went.
   */
  replay () {
    const res = this.res
    while (this.next < this.calls.length) {
      const [name, args] = this.calls[this.next]
      if (name === 'tryEnd') {
        const before = this.own('getWriteOffset').call(res)
        const [ok, done] = this.own('tryEnd').apply(res, args)
        if (!ok && !done) {
          args[0] = args[0].subarray(this.own('getWriteOffset').call(res) - before)
          if (!this.waiting) {
            this.waiting = true
            res.onWritable(() => this.resume())
          }
          return
        }
      } else {
        this.own(name).apply(res, args)
      }
      this.calls[this.next++] = null
    }
    this.calls = []
    this.next = 0
    this.waiting = false
  }

  /** The socket drained while a tryEnd waited: true once every recorded call is made. */
  resume () {
    if (!this.waiting) return true
    this.res.cork(() => this.replay())
    if (this.waiting) return false
    this.restore()
    return true
  }

  /**
   * The recorded answer as one closing answer, for the argument of uWS's writeStatus,
   * which sends "HTTP/1.1 " + it + "\r\n". That CRLF ends the head of an answer without a
   * body, or the last chunk of a chunked one; after a body framed by its length it follows
   * the answer, where a client reading a closing answer ignores it.
   */
  closingAnswer () {
    const out = []
    const framing = new Framing(out)
    for (const [name, args] of this.calls) framing[name](...args)
    const answer = Buffer.concat(out)
    const end = answer.length >= 2 && answer[answer.length - 2] === 0x0d && answer[answer.length - 1] === 0x0a ? answer.length - 2 : answer.length
    return answer.subarray('HTTP/1.1 '.length, end)
  }
}

/**
 * A status, header or data argument as the bytes uWS writes (a string as UTF-8), copied:
 * the caller may reuse its memory once the call returns. What uWS.js refuses is refused
 * with its message.
 */
function bytesOf (value) {
  if (value === undefined) return EMPTY
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  if (value instanceof ArrayBuffer) return Buffer.from(new Uint8Array(value))
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return Buffer.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))
  throw new Error('Text and data can only be passed by String, ArrayBuffer or TypedArray.')
}

/** A length argument as uWS.js converts it to its 64-bit unsigned integer. */
function lengthOf (value) {
  let n
  try {
    n = Math.trunc(Number(value))
  } catch {
    return UNCONVERTIBLE
  }
  if (!Number.isFinite(n) || n >= 2 ** 64 || n < -(2 ** 63)) return UNCONVERTIBLE
  return BigInt.asUintN(64, BigInt(n))
}

module.exports = { HeldAnswer }
