'use strict'
// Drives the native multipart parser (src/node/multipart.rs) over a body's chunks and
// tells its consumer (the engine, ./engine.js) what it finds. The consumer decides, for
// each part, where its data goes, and each byte is copied once into that place:
//   SKIP   nowhere;
//   FIELD  a string, given at the part's end (decoded natively: no Buffer between);
//   ARENA  a file kept in memory: the body's arena files share one native block, given
//          as one Buffer when the body is done (files are ranges of it, sized from the
//          body's length when known: no growth copies);
//   STREAM a file handed on as it arrives, as Buffers the consumer may keep (to write to
//          disk or a stream): one per chunk, shared by the parts that chunk holds;
//   PENDING as STREAM, for a file the consumer has not decided to keep (an asynchronous
//          filter): its size limit waits until setSink() says STREAM (the bytes so far
//          count then) or SKIP (multer holds only accepted files to fileSize).
// A chunk is parsed through before write() returns (uWS takes its memory back then): a
// consumer that must slow the client down pauses the source, as bodyStream does.
const { Buffer } = require('node:buffer')
const native = require('../native/native')
const { bytesOf } = require('../body/chunk')
const { SINK, OUTCOME, HEAD, FORM } = require('../native/protocol')
const { keepShape } = require('./shapes')
const { readDigests, SCRATCH } = require('../body/digest')

const { SKIP, FIELD, ARENA, STREAM, PENDING } = SINK
// multipartFeed's outcomes (PART comes as the head).
const { PART, DATA, PART_END, NEED_INPUT, DONE, FAILED } = OUTCOME
const { NAME, FILENAME, FILENAME_UTF8, MIME_TYPE, CHARSET, ENCODING, IS_FILE, ENDED } = HEAD
const { FIELD_SIZE, FIELDS, FILE_SIZE, FILES, HEADER_PAIRS, HEADER_SIZE, PREALLOCATE, EXPECTED, DECODED_LIMIT, REQUESTED, SLOTS } = FORM

// Most bytes a chunk's parts can carry besides the chunk's own: a partial delimiter held
// from the chunk before (src/core/multipart: at most 74).
const CARRY_MAX = 80

// multipartCreate's numbers (protocol's FORM slots), written before each call, which reads
// them at once: one array for every form, no object of named properties to look up.
const FORM_SCRATCH = new Float64Array(SLOTS)

const EMPTY = new ArrayBuffer(0)
const NO_HEAD = Object.freeze(Object.assign([], { [NAME]: '', [FILENAME]: null, [FILENAME_UTF8]: false, [MIME_TYPE]: '', [CHARSET]: null, [ENCODING]: '', [IS_FILE]: true, [ENDED]: null }))

/** A part's head, named, from multipartFeed's array (src/node/multipart.rs head_array). */
function partHead (head) {
  return { name: head[NAME], filename: head[FILENAME], filenameUtf8: head[FILENAME_UTF8], mimeType: head[MIME_TYPE], charset: head[CHARSET], encoding: head[ENCODING], isFile: head[IS_FILE] }
}

/**
 * consumer: {
 *   part(head) -> SKIP | FIELD | ARENA | STREAM | PENDING
 *                                                 a part begins; head: { name, filename,
 *                                                 filenameUtf8, mimeType, charset, encoding,
 *                                                 isFile } (lib/native/protocol.js HEAD)
 *   field(value)                                  a FIELD part's value (string or Buffer)
 *   fieldBytes                                    true: a field without a charset comes
 *                                                 as a Buffer (else as UTF-8)
 *   data(buffer)                                  bytes of a STREAM or PENDING part
 *   partEnd(range)                                any part ends; range: [start, end) in
 *                                                 the arena for an ARENA part, else null
 *   done(arena)                                   the body is complete: arena is a Buffer
 *                                                 holding every ARENA file, or null
 *   fail(fields)                                  refused: `{ code, reason?, max? }`, or
 *                                                 a body error's fields (encoded forms)
 * }
 * Exactly one of done() and fail() is called, once; nothing after it.
 */
class MultipartUpload {
  /**
   * @param {string} contentType the request's content-type header
   * @param {object} limits ./limits.js parseLimits's: the native parser applies fieldSize,
   *   fields, fileSize, files, headerPairs and headerSize (inclusive maxima, Infinity:
   *   none); the engine checks the others (fieldNameSize, parts, the names' nesting)
   * @param {number} preallocate the arena's first capacity when the length is known
   * @param {number} expected the body's declared length, or -1
   * @param {string | null} contentEncoding the request's content-encoding: the form is
   *   parsed from the decoded bytes (gzip, deflate, br, zstd, or two of them)
   * @param {number} decodedLimit the most bytes an encoded form may decode to
   * @param {object | null} digests lib/body/digest.js requestDigests(): `requested`, each
   *   part's digests to make, read at its end by partDigests(); the request's digest
   *   headers, checked over the whole body at its end (a mismatch is fail())
   * @returns {MultipartUpload | object} the upload, or the error fields when the
   *   content-type is not multipart/form-data with a usable boundary, or the encoding
   *   is not one the native side decodes
   */
  static create (contentType, limits, preallocate, expected, contentEncoding, decodedLimit, consumer, digests = null) {
    const form = FORM_SCRATCH
    form[FIELD_SIZE] = limits.fieldSize
    form[FIELDS] = limits.fields
    form[FILE_SIZE] = limits.fileSize
    form[FILES] = limits.files
    form[HEADER_PAIRS] = limits.headerPairs
    form[HEADER_SIZE] = limits.headerSize
    form[PREALLOCATE] = preallocate
    form[EXPECTED] = expected
    form[DECODED_LIMIT] = decodedLimit
    form[REQUESTED] = digests === null ? 0 : digests.requested
    const handle = digests === null
      ? native.multipartCreate(String(contentType), form, contentEncoding)
      : native.multipartCreate(String(contentType), form, contentEncoding, digests.contentDigest, digests.reprDigest, digests.contentMd5)
    if (typeof handle.code === 'string') return handle
    return new MultipartUpload(handle, consumer, digests === null ? 0 : digests.requested)
  }

  constructor (handle, consumer, requested) {
    this.handle = handle
    this.consumer = consumer
    this.requested = requested
    this.sink = SKIP
    // Arena files are appended back to back: the next one starts where the last ended.
    this.arenaStart = 0
    this.arenaEnd = 0
    this.state = new Float64Array(2)
    this.settled = false
    // A field without a charset comes as its bytes (a Buffer), for the consumer's defCharset.
    this.fieldBytes = consumer.fieldBytes === true
  }

  /** The current part's data goes to `sink` from now on (a decision made between chunks). */
  setSink (sink) {
    if (!this.settled) this.sink = sink
  }

  /**
   * In consumer.partEnd(): the digests of the part that just ended ({ sha256: Buffer,
   * ... }), or null when none were asked.
   */
  partDigests () {
    return this.requested > 0 ? readDigests(this.requested, native.multipartDigests(this.handle, SCRATCH)) : null
  }

  /** Parses one chunk (an ArrayBuffer or a view) through. */
  write (chunk) {
    if (this.settled) return
    this.feed(chunk)
  }

  /** The body is complete: the final delimiter must have been seen. */
  end () {
    if (this.settled) return
    native.multipartEnd(this.handle)
    this.feed(EMPTY)
  }

  /** Releases everything now (client gone, a consumer's error). No call follows. */
  abort () {
    if (this.settled) return
    this.settled = true
    native.multipartAbort(this.handle)
    this.letGo()
  }

  /** Settled: the native upload is freed by its external's GC, nothing else is held. */
  letGo () {
    this.handle = null
    this.consumer = null
    keepShape('upload', this)
    // A head made as the form's were, of no names (./shapes.js).
    keepShape('head', partHead(NO_HEAD))
  }

  feed (chunk) {
    const { handle, state, consumer } = this
    let offset = 0
    let room = null
    let roomAt = 0
    for (;;) {
      let outcome
      if (this.sink >= STREAM) {
        if (room === null || roomAt === room.length) {
          const size = (chunk.byteLength - offset) + CARRY_MAX
          room = Buffer.allocUnsafe(size)
          roomAt = 0
        }
        outcome = native.multipartFeed(handle, chunk, offset, this.sink, roomAt === 0 ? room : room.subarray(roomAt), state)
      } else {
        outcome = native.multipartFeed(handle, chunk, offset, this.sink, undefined, state)
      }
      let head = null
      if (typeof outcome !== 'number' && outcome !== null) {
        // A new part: multipartFeed gives its head in place of the outcome's number.
        head = outcome
        outcome = PART
      }
      if (outcome === null) {
        // Not a chunk the native side reads: bytesOf throws the TypeError saying why,
        // or the chunk is an empty view, which holds nothing to parse.
        bytesOf(chunk, 'multipart')
        if (chunk.byteLength !== 0) throw new TypeError('uws-body: a chunk the parser cannot read')
        return
      }
      offset = state[0]
      if (this.sink >= STREAM && state[1] > 0) {
        const n = state[1]
        consumer.data(room.subarray(roomAt, roomAt + n))
        roomAt += n
        if (this.settled) return
      }
      switch (outcome) {
        case PART: {
          if (head[ENDED] !== null) {
            // The part before (ARENA or SKIP) ended in the same call: multipartFeed
            // parses on from a part's end, one crossing per part instead of two.
            const ended = this.sink
            this.sink = SKIP
            if (ended === ARENA) {
              this.arenaEnd = head[ENDED]
              consumer.partEnd([this.arenaStart, this.arenaEnd])
            } else {
              consumer.partEnd(null)
            }
            if (this.settled) return
          }
          this.sink = consumer.part(partHead(head))
          if (this.settled) return
          if (this.sink === ARENA) this.arenaStart = this.arenaEnd
          break
        }
        case DATA:
          break
        case PART_END: {
          const sink = this.sink
          this.sink = SKIP
          if (sink === FIELD) {
            consumer.field(native.multipartField(handle, this.fieldBytes))
          } else if (sink === ARENA) {
            this.arenaEnd = state[1]
            consumer.partEnd([this.arenaStart, this.arenaEnd])
            break
          }
          if (this.settled) return
          consumer.partEnd(null)
          break
        }
        case NEED_INPUT:
          return
        case DONE: {
          this.settled = true
          const arena = native.multipartArena(handle)
          native.multipartAbort(handle)
          this.letGo()
          consumer.done(arena)
          return
        }
        case FAILED: {
          this.settled = true
          const fields = native.multipartError(handle)
          native.multipartAbort(handle)
          this.letGo()
          consumer.fail(fields)
          return
        }
        default:
          throw new Error(`uws-body: unknown multipart outcome ${outcome}`)
      }
      if (this.settled) return
    }
  }
}

/**
 * A Buffer made by the native side, as every arena is: Node gives such a Buffer its
 * prototype after making it, which gives it a hidden class of its own, and the code that
 * cuts files out of an arena (Buffer's subarray, the engine's done()) is optimized
 * against it. One of a byte stands for them (./shapes.js): the value of a field in a
 * charset the native side leaves to JS, a copy in Node's memory (an arena would hold a
 * pooled block for ever).
 */
function keepNativeBufferShape () {
  const keeper = {
    part: () => FIELD,
    field (value) { keepShape('nativeBuffer', value) },
    data () {},
    partEnd () {},
    done () {},
    fail () {}
  }
  const none = { fieldSize: Infinity, fields: Infinity, fileSize: Infinity, files: Infinity, headerPairs: Infinity, headerSize: Infinity }
  const upload = MultipartUpload.create('multipart/form-data; boundary=b', none, 0, -1, null, 1, keeper)
  upload.write(Buffer.from('--b\r\ncontent-disposition: form-data; name="f"\r\ncontent-type: text/plain; charset=x-none\r\n\r\nx\r\n--b--'))
  upload.end()
}
keepNativeBufferShape()

module.exports = { MultipartUpload, SKIP, FIELD, ARENA, STREAM, PENDING }
