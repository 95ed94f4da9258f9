'use strict'
// The size options, read once when a reader or middleware is made. A wrong option *type*
// is the programmer's mistake: TypeError.
const bytes = require('bytes')
const { describe } = require('./check')

const KIB = 1024
const MIB = 1024 * KIB
const DEFAULT_LIMIT = 100 * KIB
const DEFAULT_MAX_PREALLOCATED = MIB
// The streams' mark (bodyStream, multipart's file streams). Node 20's default (16 KiB)
// would pause the client after almost every uWS chunk (up to 512 KiB): each pause and
// resume is a system call (epoll_ctl) in uWS.
const DEFAULT_HIGH_WATER_MARK = 512 * KIB

// Parsing '100kb' costs a regex; options are usually one object per route, so a handful
// of distinct strings covers a whole app.
const limitCache = new Map()

// The limit strings accepted: a whole number of bytes ('1000', '1000b') or bytes' own
// format ('100kb', '1.5 MB'). bytes.parse, and so body-parser, reads anything else with
// parseInt: ' 10kb ' is 10 bytes and '1e3' is 1. Such a string is surely a mistake, so it
// is a TypeError when the middleware or accumulator is made, not a silent tiny limit;
// every string accepted means what it means to body-parser.
const LIMIT_STRING = /^(?:\d+ *b?|\+?\d+(?:\.\d+)? *(?:kb|mb|gb|tb|pb))$/i

function parseLimit (limit) {
  // Every body's options pass here: the common number is kept apart from the rest so that
  // this stays small enough for V8 to inline (docs/performance.md, row 'parseLimit inlined').
  // No limit is Infinity, in JS and to the addon alike (src/node/raw.rs `amount`).
  if (typeof limit === 'number' && limit >= 0) return Math.floor(limit)
  return parseLimitValue(limit)
}

function parseLimitValue (limit) {
  if (limit === undefined || limit === null) return DEFAULT_LIMIT
  if (typeof limit === 'string') {
    let n = limitCache.get(limit)
    if (n === undefined) {
      n = LIMIT_STRING.test(limit) ? bytes.parse(limit) : null
      if (n === null || !(n >= 0)) throw invalidLimit(limit)
      if (limitCache.size < 256) limitCache.set(limit, n)
    }
    return n
  }
  throw new TypeError(`uws-body: limit must be a number of bytes or a string like '100kb', got ${describe(limit)}`)
}

function invalidLimit (limit) {
  const misread = bytes.parse(limit)
  const why = misread >= 0 ? ` (bytes.parse, and so body-parser, reads it as ${misread})` : ''
  return new TypeError(`uws-body: invalid limit ${JSON.stringify(limit)}${why}: write a number of bytes or a string like '100kb' or '1.5mb'`)
}

function parseMaxPreallocated (value) {
  if (value === undefined || value === null) return DEFAULT_MAX_PREALLOCATED
  if (typeof value === 'number' && value >= 0) return Math.min(Math.floor(value), Number.MAX_SAFE_INTEGER)
  throw new TypeError(`uws-body: maxPreallocated must be a non-negative number, got ${describe(value)}`)
}

function parseInflate (value) {
  if (value === undefined || value === null) return true
  if (typeof value === 'boolean') return value
  throw new TypeError(`uws-body: inflate must be a boolean, got ${describe(value)}`)
}

/** The highWaterMark option: a non-negative number, default DEFAULT_HIGH_WATER_MARK. */
function parseHighWaterMark (value) {
  if (value === undefined || value === null) return DEFAULT_HIGH_WATER_MARK
  if (typeof value !== 'number' || !(value >= 0)) {
    throw new TypeError(`uws-body: highWaterMark must be a non-negative number, got ${describe(value)}`)
  }
  return value
}

module.exports = { KIB, MIB, DEFAULT_MAX_PREALLOCATED, parseLimit, parseMaxPreallocated, parseInflate, parseHighWaterMark }
