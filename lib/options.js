'use strict'
// Option checking. A wrong option *type* is the programmer's mistake: TypeError. A bad
// content-length *value* comes from the client: it becomes the body's 400 error.
const bytes = require('bytes')

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
    if (value.length > 15) return DIGITS.test(value) ? Number(value) : INVALID
    // The header of every request comes here: a loop beats the regex and Number() for
    // the usual 1-9 digits (docs/performance.md, row 'content-length digits').
    let n = 0
    for (let i = 0; i < value.length; i++) {
      const digit = value.charCodeAt(i) - 48
      if (digit < 0 || digit > 9) return INVALID
      n = n * 10 + digit
    }
    return n
  }
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : INVALID
  throw new TypeError(`uws-body: contentLength must be a string, number or null, got ${describe(value)}`)
}

/**
 * What is still to come of a body whose content-length header is `contentLength`,
 * `received` bytes in, or -1 when its length is not known. Parsed again, off the path
 * of bodies that are read: only a refusal asks (a rest known to pass linger's bound is
 * not waited for).
 */
function remainingOf (contentLength, received) {
  const expected = parseContentLength(contentLength)
  return expected >= 0 ? expected - received : -1
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

/**
 * Throws a TypeError for the first key of `options` that is not in `known`, naming the
 * closest known one: a misspelt option (`limt`) would otherwise be silently ignored.
 */
function checkNames (options, known, what) {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue
    const near = closest(key, known)
    throw new TypeError(`uws-body: unknown ${what} ${JSON.stringify(key)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}; known: ${known.join(', ')}`)
  }
}

/**
 * checkNames for the per-body paths: a Set of the known names, no array made unless a name
 * is unknown (a for-in over an options literal costs a few ns a key).
 */
function checkKnown (options, known, what) {
  for (const key in options) {
    if (!known.has(key)) checkNames(options, [...known], what)
  }
}

/** The known name nearest `name` by edit distance, if it is near enough to be a typo. */
function closest (name, known) {
  let best = null
  let bestDistance = Infinity
  const lower = name.toLowerCase()
  for (const k of known) {
    const d = distance(lower, k.toLowerCase())
    if (d < bestDistance) { best = k; bestDistance = d }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : null
}

function distance (a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    row = next
  }
  return row[b.length]
}

function describe (value) {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
}

/** The highWaterMark option: a non-negative number, default DEFAULT_HIGH_WATER_MARK. */
function parseHighWaterMark (value) {
  if (value === undefined || value === null) return DEFAULT_HIGH_WATER_MARK
  if (typeof value !== 'number' || !(value >= 0)) {
    throw new TypeError(`uws-body: highWaterMark must be a non-negative number, got ${describe(value)}`)
  }
  return value
}

// What an absent options object reads as.
const NO_OPTIONS = Object.freeze({})

/**
 * An options object as given, or NO_OPTIONS for undefined or null; anything else is a
 * TypeError naming it as `name` ('options', 'parser options', 'limits'...).
 */
function objectOption (value, name) {
  if (value === undefined || value === null) return NO_OPTIONS
  if (typeof value !== 'object') throw new TypeError(`uws-body: ${name} must be an object, got ${describe(value)}`)
  return value
}

/**
 * An API's options, checked against `names` (an unknown one is a TypeError naming the
 * closest) and each known one read once, into a plain object the API then reads: a
 * getter or a proxy is asked once, so no check can pass on one value and the code run on
 * another.
 */
function readNames (options, names, what, name = 'options') {
  const o = objectOption(options, name)
  checkNames(o, names, what)
  const given = {}
  for (const n of names) given[n] = o[n]
  return given
}

/** The onAborted option: a function, or undefined. */
function parseOnAborted (value) {
  if (value !== undefined && typeof value !== 'function') throw new TypeError('uws-body: options.onAborted must be a function')
  return value
}

/**
 * Throws the TypeError for a `res` that is not a uWS HttpResponse with `methods`, named
 * as `call` (readBody(res, req)...).
 */
function checkResponse (res, call, methods) {
  if (res !== null && typeof res === 'object' && methods.every((m) => typeof res[m] === 'function')) return
  const extra = methods.includes('pause') ? ' (with pause and resume)' : ''
  throw new TypeError(`uws-body: ${call} needs a uWS HttpResponse${extra}, got ${describe(res)}`)
}

module.exports = {
  KIB,
  MIB,
  DEFAULT_HIGH_WATER_MARK,
  parseHighWaterMark,
  checkResponse,
  objectOption,
  readNames,
  parseOnAborted,
  DEFAULT_LIMIT,
  DEFAULT_MAX_PREALLOCATED,
  UNKNOWN,
  INVALID,
  parseLimit,
  parseMaxPreallocated,
  parseContentLength,
  remainingOf,
  parseContentEncoding,
  parseInflate,
  isIdentity,
  checkNames,
  checkKnown,
  describe
}
