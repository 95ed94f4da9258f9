'use strict'
// Option checking. A wrong option *type* is the programmer's mistake: TypeError. A bad
// content-length *value* comes from the client: it becomes the body's 400 error.
const bytes = require('bytes')

const DEFAULT_LIMIT = 100 * 1024
const DEFAULT_MAX_PREALLOCATED = 1024 * 1024

// Parsing '100kb' costs a regex; options are usually one object per route, so a handful
// of distinct strings covers a whole app.
const limitCache = new Map()

function parseLimit (limit) {
  if (limit === undefined || limit === null) return DEFAULT_LIMIT
  if (typeof limit === 'number') {
    if (limit >= 0) return limit === Infinity ? Number.MAX_SAFE_INTEGER : Math.floor(limit)
  } else if (typeof limit === 'string') {
    let n = limitCache.get(limit)
    if (n === undefined) {
      n = bytes.parse(limit)
      if (n === null || !(n >= 0)) throw new TypeError(`uws-body: invalid limit ${JSON.stringify(limit)}`)
      if (limitCache.size < 256) limitCache.set(limit, n)
    }
    return n
  }
  throw new TypeError(`uws-body: limit must be a number of bytes or a string like '100kb', got ${describe(limit)}`)
}

function parseMaxPreallocated (value) {
  if (value === undefined || value === null) return DEFAULT_MAX_PREALLOCATED
  if (typeof value === 'number' && value >= 0) return Math.min(Math.floor(value), Number.MAX_SAFE_INTEGER)
  throw new TypeError(`uws-body: maxPreallocated must be a non-negative number, got ${describe(value)}`)
}

const UNKNOWN = -1
const INVALID = -2
const DIGITS = /^[0-9]+$/

/**
 * The content-length header as a number: UNKNOWN when absent, INVALID when it is not a
 * non-negative integer. '' counts as absent because uWS's req.getHeader() returns '' for
 * a header the request does not have.
 */
function parseContentLength (value) {
  if (value === undefined || value === null || value === '') return UNKNOWN
  if (typeof value === 'string') {
    // Digits only: no sign, no exponent, no list ("5, 5"). Above 2^53 precision goes, but
    // such a length is over any limit this process could honour, which is what matters.
    return DIGITS.test(value) ? Number(value) : INVALID
  }
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : INVALID
  throw new TypeError(`uws-body: contentLength must be a string, number or null, got ${describe(value)}`)
}

function parseContentEncoding (value) {
  if (value === undefined || value === null) return null
  if (typeof value === 'string') return value
  throw new TypeError(`uws-body: contentEncoding must be a string or null, got ${describe(value)}`)
}

function parseInflate (value) {
  if (value === undefined || value === null) return true
  if (typeof value === 'boolean') return value
  throw new TypeError(`uws-body: inflate must be a boolean, got ${describe(value)}`)
}

/** True for the encodings that mean "not encoded": absent, empty or identity. */
function isIdentity (encoding) {
  return encoding === null || encoding === '' || encoding === 'identity'
}

function describe (value) {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
}

module.exports = {
  DEFAULT_LIMIT,
  DEFAULT_MAX_PREALLOCATED,
  UNKNOWN,
  INVALID,
  parseLimit,
  parseMaxPreallocated,
  parseContentLength,
  parseContentEncoding,
  parseInflate,
  isIdentity,
  describe
}
