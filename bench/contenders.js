'use strict'
// The ways of reading a body that the benchmarks compare. Each takes the content-length
// (-1 unknown) and returns { push(ab), finish() -> Buffer }, as a uWS onData loop uses it.
const { BodyAccumulator } = require('..')

const MAX_PREALLOCATED_BODY = 1024 * 1024

/** (a) Today's common code: copy each chunk out, Buffer.concat at the end. */
function copyConcat () {
  const chunks = []
  return {
    push (ab) { chunks.push(Buffer.from(new Uint8Array(ab))) },
    finish () { return Buffer.concat(chunks) }
  }
}

/**
 * (b) JS preallocation: allocUnsafe + set when the length is known and at most
 * 1 MiB; otherwise (a), with its single-chunk shortcut.
 */
function jsPrealloc (contentLength) {
  if (contentLength >= 0 && contentLength <= MAX_PREALLOCATED_BODY) {
    const buf = Buffer.allocUnsafe(contentLength)
    let offset = 0
    return {
      push (ab) { buf.set(new Uint8Array(ab), offset); offset += ab.byteLength },
      finish () { return buf }
    }
  }
  const chunks = []
  return {
    push (ab) { chunks.push(Buffer.from(new Uint8Array(ab))) },
    finish () { return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }
  }
}

/** (c) uws-body. */
function uwsBody (contentLength, limit) {
  const acc = new BodyAccumulator({ contentLength: contentLength >= 0 ? contentLength : null, limit })
  return {
    push (ab) { if (!acc.push(ab)) throw acc.error },
    finish () { return acc.finish() }
  }
}

module.exports = { copyConcat, jsPrealloc, uwsBody }
