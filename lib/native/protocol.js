'use strict'
// The numbers the JS layer and the addon pass each other, each named once here; the addon
// names them once too, in src/node/protocol.rs, and exports its tables as
// `native.protocol`: __test__/protocol.test.js checks that the two agree, name for name
// and value for value. Users take the names into module-level constants
// (`const { SKIP } = SINK`), so a hot path reads a constant, never a property.

/**
 * multipartFeed's `sink` argument: where the current part's data goes. STREAM and PENDING,
 * the two that write into the `room` argument, are the largest (upload.js tests
 * `sink >= STREAM`).
 */
const SINK = Object.freeze({ SKIP: 0, FIELD: 1, ARENA: 2, STREAM: 3, PENDING: 4 })

/** multipartFeed's answer; PART comes as the part's head instead of a number. */
const OUTCOME = Object.freeze({ PART: 1, DATA: 2, PART_END: 3, NEED_INPUT: 4, DONE: 5, FAILED: 6 })

/** finishString's `encoding` argument. */
const STRING_ENCODING = Object.freeze({ UTF8: 0, LATIN1: 1, UTF16LE: 2, UTF8_OR_BUFFER: 3 })

/**
 * The slots of the array multipartFeed gives for a new part's head. ENDED: the part before
 * (SKIP or ARENA) ended in the same call, at this arena length; null when none did.
 */
const HEAD = Object.freeze({ NAME: 0, FILENAME: 1, FILENAME_UTF8: 2, MIME_TYPE: 3, CHARSET: 4, ENCODING: 5, IS_FILE: 6, ENDED: 7 })

/** The slots of the array sizes() gives. */
const SIZES = Object.freeze({ RECEIVED: 0, LENGTH: 1, CAPACITY: 2 })

/** create()'s `requested` digests, one bit each (src/core/digest Algorithm::bit). */
const DIGEST = Object.freeze({ SHA256: 1, SHA512: 2, MD5: 4, CRC32C: 8 })

/**
 * The slots of multipartCreate's `form` Float64Array: the limits the native parser applies
 * (inclusive maxima, Infinity: none), the arena's first capacity, the declared length (< 0:
 * unknown), an encoded form's decoded limit, each part's digests to make (DIGEST bits).
 * SLOTS: how many there are.
 */
const FORM = Object.freeze({ FIELD_SIZE: 0, FIELDS: 1, FILE_SIZE: 2, FILES: 3, HEADER_PAIRS: 4, HEADER_SIZE: 5, PREALLOCATE: 6, EXPECTED: 7, DECODED_LIMIT: 8, REQUESTED: 9, SLOTS: 10 })

module.exports = Object.freeze({ SINK, OUTCOME, STRING_ENCODING, HEAD, SIZES, DIGEST, FORM })
