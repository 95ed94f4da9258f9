'use strict'
// The seed's reader: ultimate-express PR #369's body reading, as the contender uws-body has
// to beat (issue 40). One preallocated Buffer when content-length is known, at most
// MAX_PREALLOCATED_BODY and the body is not encoded; otherwise a copy per chunk and one
// Buffer.concat, skipped for a single chunk. Encoded bodies are inflated by node:zlib's
// sync calls on the joined bytes, then parsed as ultimate-express's built-ins do.
const querystring = require('node:querystring')
const zlib = require('node:zlib')

const MAX_PREALLOCATED_BODY = 1024 * 1024

/** An Error whose `status` is the HTTP answer (413, 415, 400). */
function fail (status, message) {
  const err = new Error(message)
  err.status = status
  return err
}

// The decoded size is bounded by the route's limit too, as the other readers bound it.
const INFLATE = {
  gzip: (buf, limit) => zlib.gunzipSync(buf, { maxOutputLength: limit }),
  'x-gzip': (buf, limit) => zlib.gunzipSync(buf, { maxOutputLength: limit }),
  deflate: (buf, limit) => zlib.inflateSync(buf, { maxOutputLength: limit }),
  br: (buf, limit) => zlib.brotliDecompressSync(buf, { maxOutputLength: limit })
}

/**
 * A reader of one body: { push(ArrayBuffer), finish() -> Buffer }, or throws (413, 415)
 * before any byte is read. `contentLength` is -1 when unknown; `encoding` is the
 * content-encoding header ('' or undefined when none). push and finish throw an Error
 * with `status` for a body over `limit` or one that does not inflate.
 */
function seedReader (contentLength, encoding, limit) {
  if (contentLength > limit) throw fail(413, 'request entity too large')
  const encoded = encoding !== undefined && encoding !== '' && encoding !== 'identity'
  const inflate = encoded ? INFLATE[encoding.toLowerCase()] : null
  if (encoded && !inflate) throw fail(415, `unsupported content encoding "${encoding}"`)
  if (!encoded && contentLength >= 0 && contentLength <= MAX_PREALLOCATED_BODY) {
    const body = Buffer.allocUnsafe(contentLength)
    let offset = 0
    return {
      push (ab) {
        body.set(new Uint8Array(ab), offset)
        offset += ab.byteLength
      },
      finish () { return body }
    }
  }
  const chunks = []
  let total = 0
  return {
    push (ab) {
      total += ab.byteLength
      if (total > limit) throw fail(413, 'request entity too large')
      chunks.push(Buffer.from(new Uint8Array(ab)))
    },
    finish () {
      const joined = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total)
      if (!inflate) return joined
      try {
        return inflate(joined, limit)
      } catch (err) {
        throw err.code === 'ERR_BUFFER_TOO_LARGE' ? fail(413, 'request entity too large') : fail(400, err.message)
      }
    }
  }
}

/** The seed's parse of each route's body, from the Buffer finish() gave. */
const PARSE = {
  raw: (buf) => buf,
  json: (buf) => buf.length === 0 ? {} : JSON.parse(buf.toString()),
  text: (buf) => buf.toString(),
  urlencoded: (buf) => querystring.parse(buf.toString())
}

module.exports = { seedReader, PARSE, MAX_PREALLOCATED_BODY }
