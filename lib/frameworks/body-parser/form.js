'use strict'
// A fast path for the common urlencoded body: flat `key=value&…` pairs in UTF-8. It gives
// exactly what qs.parse gives body-parser for such a body (__test__/form.test.js checks
// that on every generated body) and returns null for anything else, which then goes to
// qs: brackets (nesting, arrays, including %5B / %5D), a repeated key, the key
// __proto__. qs costs more (docs/performance.md, row 'flat forms'); these are most forms.

const UNSAFE = /[[\]]|%5[bd]/i
const hasOwn = Object.hasOwn

/** The parsed form, or null when the body needs qs. `str` is not empty. */
function parseFlatForm (str) {
  if (UNSAFE.test(str)) return null
  const out = {}
  let start = 0
  while (start <= str.length) {
    let end = str.indexOf('&', start)
    if (end === -1) end = str.length
    if (end > start) {
      const eq = str.indexOf('=', start)
      const split = eq !== -1 && eq < end
      const key = decode(str.slice(start, split ? eq : end))
      // qs drops empty keys; a repeated key becomes an array there, left to it here. Only
      // this loop adds own properties to `out`, so an own one is a key seen before.
      if (key !== '') {
        if (key === '__proto__' || hasOwn(out, key)) return null
        out[key] = split ? decode(str.slice(eq + 1, end)) : ''
      }
    }
    start = end + 1
  }
  return out
}

// qs's UTF-8 decoder: '+' is a space, then percent-decoding; a malformed escape leaves
// the whole string as it is (after the '+' replacement). Escapes of ASCII bytes are
// decoded here: decodeURIComponent is a call into V8's runtime (docs/performance.md, row
// 'ASCII escapes'). A string with any other escape (a byte of a multi-byte character) is
// left to it whole.
function decode (s) {
  let at = s.indexOf('%')
  const spaced = s.indexOf('+') === -1 ? s : s.replace(/\+/g, ' ')
  if (at === -1) return spaced
  let out = ''
  let from = 0
  do {
    const hi = hexValue(spaced.charCodeAt(at + 1))
    const lo = hexValue(spaced.charCodeAt(at + 2))
    // decodeURIComponent refuses the whole string for one malformed escape.
    if (hi === -1 || lo === -1) return spaced
    if (hi >= 8) return decodeUtf8(spaced)
    out += spaced.slice(from, at) + String.fromCharCode(hi * 16 + lo)
    from = at + 3
    at = spaced.indexOf('%', from)
  } while (at !== -1)
  return out + spaced.slice(from)
}

function decodeUtf8 (spaced) {
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}

/** The value of a hex digit's char code, or -1 (also for NaN, past the string's end). */
function hexValue (c) {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if (c >= 0x61 && c <= 0x66) return c - 0x57
  if (c >= 0x41 && c <= 0x46) return c - 0x37
  return -1
}

module.exports = { parseFlatForm }
