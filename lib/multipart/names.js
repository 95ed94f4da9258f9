'use strict'
// What both multipart APIs do to the names the native parser hands over: names come as
// latin1 strings (one char per byte as sent), busboy's way, and are read in the charset
// the application said (defParamCharset); `filename*` comes decoded already.
const { Buffer } = require('node:buffer')
const { describe } = require('../plan/check')

/** busboy's basename: what follows the last / or \, and '' for . and .. */
function basename (name) {
  for (let i = name.length - 1; i >= 0; --i) {
    const c = name.charCodeAt(i)
    if (c === 0x2f || c === 0x5c) {
      name = name.slice(i + 1)
      break
    }
  }
  return name === '..' || name === '.' ? '' : name
}

// Browsers escape LF, CR and " in names as %0A, %0D and %22 (HTML's multipart/form-data
// serialisation); busboy leaves them so, multer 2.5 turns exactly these three back
// (a literal `50%.pdf` stays).
const ESCAPED = /%0A|%0D|%22/gi
const unescapeName = (s) => s.indexOf('%') === -1 ? s : s.replace(ESCAPED, (m) => m[2] === 'A' || m[2] === 'a' ? '\n' : m[2] === '2' ? '"' : '\r')

const LATIN1 = new Set(['latin1', 'iso-8859-1', 'iso8859-1', 'binary', 'ascii', 'us-ascii'])
const UTF8 = new Set(['utf8', 'utf-8'])
const identity = (s) => s
const utf8 = (s) => Buffer.from(s, 'latin1').toString('utf8')

/**
 * The function that reads a name sent as a plain parameter (a latin1 string of its bytes)
 * in `charset` (defParamCharset: default latin1, as busboy). Any charset TextDecoder
 * knows; another is a TypeError when the options are read.
 */
function paramDecoder (charset) {
  if (charset === undefined || charset === null) return identity
  if (typeof charset !== 'string') throw new TypeError(`uws-body: defParamCharset must be a string, got ${describe(charset)}`)
  const c = charset.toLowerCase()
  if (LATIN1.has(c)) return identity
  if (UTF8.has(c)) return utf8
  let decoder
  try {
    decoder = new TextDecoder(c)
  } catch {
    throw new TypeError(`uws-body: defParamCharset: unknown charset ${JSON.stringify(charset)}`)
  }
  return (s) => decoder.decode(Buffer.from(s, 'latin1'))
}

// busboy reads these as latin1, whatever iconv-lite would make of windows-1252.
const BUSBOY_LATIN1 = new Set([...LATIN1, 'iso88591', 'iso_8859-1', 'windows-1252', 'iso_8859-1:1987', 'cp1252', 'x-cp1252'])
let iconv = null

/**
 * The function that reads a field sent without a charset (a Buffer of its bytes) in
 * `charset` (defCharset), or null for UTF-8, which the native side decodes itself (the
 * default, as busboy's). Any charset iconv-lite knows; another is a TypeError when the
 * options are read.
 */
function fieldDecoder (charset) {
  if (charset === undefined || charset === null) return null
  if (typeof charset !== 'string') throw new TypeError(`uws-body: defCharset must be a string, got ${describe(charset)}`)
  const c = charset.toLowerCase()
  if (UTF8.has(c)) return null
  if (BUSBOY_LATIN1.has(c)) return (buffer) => buffer.latin1Slice(0, buffer.length)
  if (iconv === null) iconv = require('iconv-lite')
  if (!iconv.encodingExists(c)) throw new TypeError(`uws-body: defCharset: unknown charset ${JSON.stringify(charset)}`)
  return (buffer) => iconv.decode(buffer, c, { stripBOM: false })
}

/** A field in a charset the native side does not decode: TextDecoder's, else UTF-8 (busboy). */
function decodeField (buffer, charset) {
  try {
    return new TextDecoder(charset).decode(buffer)
  } catch {
    return buffer.toString('utf8')
  }
}

/** `[` groups in a field's name (multer's fieldNestingDepth counts them so). */
function nestingOf (name) {
  let n = 0
  for (let at = name.indexOf('['); at !== -1; at = name.indexOf('[', at + 1)) n++
  return n
}

/** Whether a `[n]` index in `name` (a well-formed nested name) is over `limit` (multer's rule). */
function exceedsArrayIndex (name, limit) {
  if (!/^[^[]+(?:\[[^\]]+\])*(?:\[\])?$/.test(name)) return false
  const pattern = /\[(\d+)\]/g
  let m
  while ((m = pattern.exec(name)) !== null) if (Number(m[1]) > limit) return true
  return false
}

module.exports = { basename, unescapeName, paramDecoder, fieldDecoder, decodeField, nestingOf, exceedsArrayIndex }
