'use strict'
// A fast path for the common urlencoded body: flat `key=value&…` pairs in UTF-8. It gives
// exactly what qs.parse gives body-parser for such a body (__test__/form.test.js checks
// that on every generated body) and returns null for anything else, which then goes to
// qs: brackets (nesting, arrays, including %5B / %5D), a repeated key, the key
// __proto__. qs costs about 3x as much on a 2 KiB form; these are most forms.

const UNSAFE = /[[\]]|%5[bd]/i

/** The parsed form, or null when the body needs qs. `str` is not empty. */
function parseFlatForm (str) {
  if (UNSAFE.test(str)) return null
  const out = {}
  const seen = new Set()
  let start = 0
  while (start <= str.length) {
    let end = str.indexOf('&', start)
    if (end === -1) end = str.length
    if (end > start) {
      const eq = str.indexOf('=', start)
      const split = eq !== -1 && eq < end
      const key = decode(str.slice(start, split ? eq : end))
      // qs drops empty keys; a repeated key becomes an array there, left to it here.
      if (key !== '') {
        if (key === '__proto__' || seen.has(key)) return null
        seen.add(key)
        out[key] = split ? decode(str.slice(eq + 1, end)) : ''
      }
    }
    start = end + 1
  }
  return out
}

// qs's UTF-8 decoder: '+' is a space, then percent-decoding; a malformed escape leaves
// the whole string as it is (after the '+' replacement).
function decode (s) {
  if (s.indexOf('%') === -1) return s.indexOf('+') === -1 ? s : s.replace(/\+/g, ' ')
  const spaced = s.replace(/\+/g, ' ')
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}

module.exports = { parseFlatForm }
