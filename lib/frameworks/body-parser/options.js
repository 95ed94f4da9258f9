'use strict'
// The options of body-parser's factories, checked the way body-parser checks them:
// mistakes are TypeErrors when the middleware is made, not errors per request.
const typeis = require('type-is')
const { DEFAULT_MAX_PREALLOCATED, parseLimit } = require('../../plan/limits')
const { readNames } = require('../../plan/check')
const { DEFAULT_TIMEOUT, parseTimeout } = require('../../plan/timeout')
const { parseLinger } = require('../../plan/linger')
const { parseDigest } = require('../../plan/digest')

// Matching a content-type against the accepted types (type-is's media-type rules) costs
// a parse per request; the answer depends on the header string alone, so it is cached.
const MATCH_CACHE_MAX = 256

// body-parser's options for every parser, and uws-body's own (the same as readBody's).
const COMMON = ['inflate', 'limit', 'type', 'verify', 'timeout', 'linger', 'digest']

/**
 * The options every parser takes, and `own`, the ones its kind adds (json's `strict`,
 * ...), each read once: { given (every known name's value, for the kind's own), common
 * (the frozen value every request reads) }. An unknown name is a TypeError naming the
 * closest known one: body-parser ignores it, and a misspelt `limt` would silently keep
 * the default limit.
 */
function normalize (options, defaultType, own = []) {
  const o = readNames(options, [...COMMON, ...own], 'parser option', 'parser options')
  return { given: o, common: commonOptions(o, defaultType) }
}

function commonOptions (o, defaultType) {
  const verify = o.verify || false
  if (verify !== false && typeof verify !== 'function') throw new TypeError('option verify must be function')
  // Read once, when the middleware is made: the frozen value every request reads (its
  // body's accumulator included).
  return Object.freeze({
    limit: parseLimit(o.limit),
    maxPreallocated: DEFAULT_MAX_PREALLOCATED,
    timeout: parseTimeout(o.timeout, DEFAULT_TIMEOUT),
    linger: parseLinger(o.linger),
    // Declared digests checked, unless false; names: req.digests (lib/frameworks/body-parser/read.js).
    digest: parseDigest(o.digest),
    inflate: o.inflate !== false,
    verify,
    defaultCharset: o.defaultCharset || 'utf-8',
    shouldParse: typeMatcher(o.type || defaultType)
  })
}

/** `type` as body-parser takes it: a media type ('json', '*\/*', 'text/*'), a list, or a function of req. */
function typeMatcher (type) {
  if (typeof type === 'function') return type
  const types = Array.isArray(type) ? type : [type]
  const cache = new Map()
  // The last header's answer first: a route's requests mostly repeat one content-type,
  // and comparing it costs less than hashing each request's new string for the Map.
  let lastHeader = null
  let lastMatch = false
  // Only called for a request that has a body (read.js checks typeis.hasBody first).
  return function shouldParse (req) {
    const header = req.headers['content-type']
    if (header === undefined) return false
    if (header === lastHeader) return lastMatch
    let match = cache.get(header)
    if (match === undefined) {
      match = Boolean(typeis.is(header, types))
      if (cache.size < MATCH_CACHE_MAX) cache.set(header, match)
    }
    lastHeader = header
    lastMatch = match
    return match
  }
}

module.exports = { normalize }
