'use strict'
// The request's own headers as the read path reads them: content-length, content-encoding.
// A bad content-length *value* comes from the client: it becomes the body's 400 error; a
// wrong *type* given to the API is the programmer's mistake: TypeError.
const { describe } = require('../plan/check')
const { CONTENT_LENGTH, CONTENT_ENCODING } = require('./header-keys')

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

/**
 * True for a content-encoding that means "not encoded": absent, empty, or a list of
 * identity and empty members, each trimmed and in any case (' IDENTITY ', 'identity, ').
 * The native core's rule (src/core/encoding.rs parse), so that both tiers take the same
 * path for a body: the usual absent header and an exact 'identity' are answered first.
 */
function isIdentity (encoding) {
  if (encoding === null || encoding === undefined || encoding === '' || encoding === 'identity') return true
  for (const member of encoding.split(',')) {
    const coding = member.trim()
    if (coding !== '' && coding.toLowerCase() !== 'identity') return false
  }
  return true
}

/**
 * body-parser's own test, kept for its drop-ins: absent, empty, or exactly 'identity' in
 * any case; anything else (' identity ', 'identity, identity') is an encoding, which
 * body-parser refuses with a 415 under `inflate: false`.
 */
function isBodyParserIdentity (encoding) {
  return !encoding || encoding.toLowerCase() === 'identity'
}

/**
 * The content-length and content-encoding of a uWS HttpRequest or a headers object;
 * anything else is a TypeError naming `call` (readBody(res, req)...).
 */
function headersOf (req, call) {
  if (req !== null && typeof req === 'object' && typeof req.getHeader === 'function') {
    const contentEncoding = req.getHeader(CONTENT_ENCODING)
    // uWS's getHeader() gives '' for a header the request does not have.
    return { contentLength: req.getHeader(CONTENT_LENGTH), contentEncoding: contentEncoding === '' ? null : contentEncoding }
  }
  if (req !== null && typeof req === 'object') {
    // A plain headers object, as frameworks keep them (lower-case names).
    const contentEncoding = req['content-encoding']
    return { contentLength: req['content-length'], contentEncoding: contentEncoding === '' ? null : contentEncoding }
  }
  throw new TypeError(`uws-body: ${call} needs a uWS HttpRequest or a headers object, got ${describe(req)}`)
}

module.exports = { UNKNOWN, INVALID, parseContentLength, remainingOf, parseContentEncoding, isIdentity, isBodyParserIdentity, headersOf }
