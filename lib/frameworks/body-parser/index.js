'use strict'
// Express middleware factories with body-parser's options and behaviour: json, raw,
// text, urlencoded. Only the reading is ours; media types (type-is), charsets
// (iconv-lite) and query strings (qs) are the libraries body-parser uses.
const { normalize } = require('./options')
const { createParser } = require('./read')
const errors = require('../../native/errors')
const { parseFlatForm } = require('./form')

function json (options) {
  const { given, common } = normalize(options, 'application/json', ['reviver', 'strict'])
  const reviver = given.reviver
  const strict = given.strict !== false
  return createParser(common, {
    // RFC 7159 section 8.1: JSON is UTF-8, -16 or -32.
    charset: (charset) => charset.startsWith('utf-'),
    parse (str) {
      // An empty body is a common client mistake that body-parser answers with {}.
      if (str.length === 0) return {}
      if (strict) {
        const first = firstNonSpace(str)
        if (first !== '{' && first !== '[') throw strictError(str, first)
      }
      return JSON.parse(str, reviver)
    }
  })
}

function raw (options) {
  return createParser(normalize(options, 'application/octet-stream').common, {
    charset: false,
    parse: (buf) => buf
  })
}

function text (options) {
  return createParser(normalize(options, 'text/plain', ['defaultCharset']).common, {
    charset: true,
    parse: (str) => str
  })
}

function urlencoded (options) {
  const { given, common } = normalize(options, 'application/x-www-form-urlencoded', ['extended', 'parameterLimit', 'depth', 'defaultCharset', 'charsetSentinel', 'interpretNumericEntities'])
  if (common.defaultCharset !== 'utf-8' && common.defaultCharset !== 'iso-8859-1') {
    throw new TypeError('option defaultCharset must be either utf-8 or iso-8859-1')
  }
  const extended = Boolean(given.extended)
  let parameterLimit = given.parameterLimit !== undefined ? given.parameterLimit : 1000
  const depth = extended ? (given.depth !== undefined ? given.depth : 32) : 0
  if (isNaN(parameterLimit) || parameterLimit < 1) throw new TypeError('option parameterLimit must be a positive number')
  if (isNaN(depth) || depth < 0) throw new TypeError('option depth must be a zero or a positive number')
  if (isFinite(parameterLimit)) parameterLimit = parameterLimit | 0
  const qsOptions = {
    allowPrototypes: true,
    depth,
    charsetSentinel: given.charsetSentinel,
    interpretNumericEntities: given.interpretNumericEntities,
    parameterLimit,
    strictDepth: true
  }
  const qs = require('qs')
  // The flat-form fast path matches qs only for qs's defaults in UTF-8.
  const flat = !qsOptions.charsetSentinel && !qsOptions.interpretNumericEntities
  return createParser(common, {
    charset: (charset) => charset === 'utf-8' || charset === 'iso-8859-1',
    parse (str, charset) {
      if (str.length === 0) return {}
      const count = countParameters(str, parameterLimit)
      if (count === -1) throw errors.bodyError('ERR_BODY_PARAMETERS_TOO_MANY', {})
      const form = flat && charset === 'utf-8' ? parseFlatForm(str) : null
      if (form !== null) return form
      try {
        return qs.parse(str, { ...qsOptions, charset, arrayLimit: extended ? Math.max(100, count) : count })
      } catch (err) {
        if (err instanceof RangeError) throw errors.bodyError('ERR_BODY_DEPTH_EXCEEDED', {})
        throw err
      }
    }
  })
}

/** Parameters in a query string, or -1 as soon as there are more than `limit`. */
function countParameters (str, limit) {
  let count = 0
  let at = -1
  do {
    if (++count > limit) return -1
    at = str.indexOf('&', at + 1)
  } while (at !== -1)
  return count
}

// JSON's whitespace (RFC 8259): space, tab, line feed, carriage return.
function firstNonSpace (str) {
  for (let i = 0; i < str.length; i++) {
    const c = str.charCodeAt(i)
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return str[i]
  }
  return undefined
}

// body-parser's message for a top-level value strict refuses is V8's own SyntaxError for
// its first character, which differs between V8 versions: it is built the same way, by
// parsing a copy masked with '#' from that character on and putting the text back.
const MASK = /#+/g

function strictError (str, first) {
  const at = first === undefined ? -1 : str.indexOf(first)
  const masked = at === -1 ? '' : str.slice(0, at) + '#'.repeat(str.length - at)
  try {
    JSON.parse(masked)
  } catch (err) {
    const message = err.message.replace(MASK, (run) => str.slice(at, at + run.length))
    err.stack = err.stack.replace(err.message, message)
    err.message = message
    return err
  }
  return new SyntaxError('strict violation') // unreachable: the mask is never valid JSON
}

module.exports = { json, raw, text, urlencoded }
