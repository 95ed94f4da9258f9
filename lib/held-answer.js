'use strict'
// The answer to a refused body, held on its uWS response until the rest of the body is
// dropped (lib/linger.js). While held, the response's writing methods are shadowed on the
// instance and record what the application (or ultimate-express, or answerError) writes:
//   release()        the body ended: the methods are back, and what was recorded is
//                    written with them.
//   closingAnswer()  past the bound: what was recorded, as one closing answer
//                    (Connection: close) for uWS's writeStatus.
// So whatever the handler writes (end, end(body, true), endWithoutBody, tryEnd, write)
// reaches a client that is still sending: an answer written early is what loses it
// (docs/early-answers.md).
const { Buffer } = require('node:buffer')

// The HttpResponse methods that write an answer. cork, pause, resume, close and the rest
// are left alone.
const WRITERS = ['writeStatus', 'writeHeader', 'write', 'end', 'endWithoutBody', 'tryEnd', 'getWriteOffset']
// Framing the closing answer sets itself.
const OWN_HEADERS = new Set(['connection', 'content-length', 'transfer-encoding'])
const EMPTY = Buffer.alloc(0)
// The end of the body's one chunk and the last chunk's line; uWS adds the final CRLF.
const LAST_CHUNK = Buffer.from('\r\n0\r\n')

class HeldAnswer {
  /** onComplete(): called once, when the answer recorded is whole (end, endWithoutBody, tryEnd's total). */
  constructor (res, onComplete) {
    this.res = res
    this.status = null
    this.headers = []
    this.chunks = []
    this.length = 0
    // null while open; else how it ended: 'end' (a body) or 'head' (endWithoutBody).
    this.ended = null
    this.closeConnection = false
    this.reported = undefined
    this.onComplete = onComplete
    this.saved = WRITERS.map((name) => [name, Object.prototype.hasOwnProperty.call(res, name), res[name]])
    const held = this
    // Each returns what uWS's own does, so that chained and checked calls go on as usual.
    res.writeStatus = function writeStatus (status) {
      if (held.ended === null) held.status = status
      return this
    }
    res.writeHeader = function writeHeader (name, value) {
      if (held.ended === null) held.headers.push([name, value])
      return this
    }
    res.write = function write (chunk) {
      held.append(chunk)
      return true
    }
    res.end = function end (body, closeConnection) {
      held.append(body)
      held.finish('end', closeConnection)
      return this
    }
    res.endWithoutBody = function endWithoutBody (reportedContentLength, closeConnection) {
      if (held.ended === null) held.reported = reportedContentLength
      held.finish('head', closeConnection)
      return this
    }
    res.tryEnd = function tryEnd (chunk, totalSize) {
      held.append(chunk)
      const done = held.length >= totalSize
      if (done) held.finish('end', false)
      return [true, done]
    }
    res.getWriteOffset = function getWriteOffset () {
      return held.length
    }
  }

  append (chunk) {
    if (this.ended !== null || chunk === undefined || chunk === null) return
    // Copied: the caller may reuse its memory once the call returns, as uWS allows.
    const bytes = Buffer.from(bytesOf(chunk))
    this.chunks.push(bytes)
    this.length += bytes.length
  }

  finish (how, closeConnection) {
    if (this.ended !== null) return
    this.ended = how
    this.closeConnection = closeConnection === true
    const onComplete = this.onComplete
    this.onComplete = null
    if (onComplete !== null) onComplete()
  }

  get complete () {
    return this.ended !== null
  }

  /** Writes `status` with the response's own writeStatus, the shadows left in place. */
  writeStatusThrough (status) {
    const [, own, value] = this.saved.find(([name]) => name === 'writeStatus')
    const writeStatus = own ? value : Object.getPrototypeOf(this.res).writeStatus
    writeStatus.call(this.res, status)
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

  /** The body ended: the methods are back, and what was recorded is written with them. */
  release () {
    this.onComplete = null
    if (this.saved.length !== 0) this.restore()
    const res = this.res
    if (this.status === null && this.headers.length === 0 && this.chunks.length === 0 && this.ended === null) return
    res.cork(() => {
      if (this.status !== null) res.writeStatus(this.status)
      for (const [name, value] of this.headers) res.writeHeader(name, value)
      const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)
      if (this.ended === 'end') res.end(body, this.closeConnection)
      else if (this.ended === 'head') res.endWithoutBody(...(this.reported === undefined ? [] : [this.reported, this.closeConnection]))
      else if (body.length !== 0) res.write(body)
    })
  }

  /**
   * The recorded answer as one closing answer, for the argument of uWS's writeStatus,
   * which sends "HTTP/1.1 " + it + "\r\n". That final CRLF ends the head of an answer with
   * no body, or the last chunk ("0\r\n\r\n") of a chunked one, so the body goes out
   * exactly as written. Strings are UTF-8, as uWS writes them.
   */
  closingAnswer () {
    let head = `${this.status === null ? '200 OK' : text(this.status)}\r\n`
    for (const [name, value] of this.headers) {
      const n = text(name)
      if (!OWN_HEADERS.has(n.toLowerCase())) head += `${n}: ${text(value)}\r\n`
    }
    head += 'connection: close\r\n'
    const body = this.ended === 'end' ? Buffer.concat(this.chunks) : EMPTY
    if (body.length === 0) {
      const length = this.ended === 'head' && this.reported !== undefined ? text(this.reported) : '0'
      return Buffer.from(`${head}content-length: ${length}\r\n`, 'latin1')
    }
    head += `transfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n`
    return Buffer.concat([Buffer.from(head, 'latin1'), body, LAST_CHUNK])
  }
}

// A status or header value as uWS writes it (a string as UTF-8, bytes as they are), as a
// latin1 string of those bytes: the head is built once and written byte for byte.
function text (value) {
  return Buffer.from(bytesOf(value)).toString('latin1')
}

function bytesOf (value) {
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  if (value instanceof ArrayBuffer) return new Uint8Array(value)
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  return Buffer.from(String(value), 'utf8')
}

module.exports = { HeldAnswer }
