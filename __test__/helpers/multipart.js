'use strict'
// multipart/form-data bodies for the tests: built from a list of parts, or generated
// from a seed (random fields and files, binary contents full of CRLF and pieces of the
// boundary, unicode and RFC 8187 names).
const { random } = require('./random')

/**
 * parts: [{ name, value }] for fields, [{ name, filename, type, data }] for files;
 * `headers` (a string of header lines, each ending in CRLF) replaces the generated ones.
 * `end: false` leaves out the final delimiter.
 */
function formBody (parts, boundary = 'XbOuNdArYx', { end = true } = {}) {
  const out = []
  for (const part of parts) {
    out.push(Buffer.from(`--${boundary}\r\n`))
    if (part.headers !== undefined) {
      out.push(Buffer.from(part.headers))
    } else {
      let disposition = `Content-Disposition: form-data; name="${part.name}"`
      if (part.filenameStar !== undefined) disposition += `; filename*=${part.filenameStar}`
      if (part.filename !== undefined) disposition += `; filename="${part.filename}"`
      out.push(Buffer.from(disposition + '\r\n', 'latin1'))
      if (part.type !== undefined) out.push(Buffer.from(`Content-Type: ${part.type}\r\n`))
    }
    out.push(Buffer.from('\r\n'))
    const data = part.data !== undefined ? part.data : Buffer.from(part.value === undefined ? '' : part.value)
    out.push(data)
    out.push(Buffer.from('\r\n'))
  }
  if (end) out.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(out)
}

const contentType = (boundary = 'XbOuNdArYx') => `multipart/form-data; boundary=${boundary}`

/** `size` bytes from a seed, rich in what a parser could mistake for a delimiter. */
function trickyBytes (size, next, boundary) {
  const out = Buffer.allocUnsafe(size)
  const pieces = [Buffer.from('\r\n'), Buffer.from(`\r\n--${boundary}`.slice(0, 1 + Math.floor(next() * (boundary.length + 4)))), Buffer.from(`--${boundary}`), Buffer.from('\r\n--'), Buffer.from('-')]
  let i = 0
  while (i < size) {
    const r = next()
    if (r < 0.15) {
      const piece = pieces[Math.floor(next() * pieces.length)]
      const n = Math.min(piece.length, size - i)
      piece.copy(out, i, 0, n)
      i += n
    } else {
      out[i++] = Math.floor(next() * 256)
    }
  }
  return breakDelimiters(out, boundary)
}

/**
 * A client picks a boundary its contents do not hold: breaks every whole delimiter in
 * `out` with a '!' (no boundary here holds one). A part's data follows a CRLF, so a
 * `--boundary` at the very start counts too (RFC 2046: a part may end right after its
 * header block).
 */
function breakDelimiters (out, boundary) {
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  for (;;) {
    const at = Buffer.concat([Buffer.from('\r\n'), out]).indexOf(delimiter)
    if (at < 0) return out
    out[at + 2] = 0x21
  }
}

const UNICODE = ['é', 'ß', 'ü', '中文', '日本', '😀', 'Ω', 'ñ', 'ç']
const ASCII = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-'

function word (next, max, unicode) {
  let s = ''
  const n = 1 + Math.floor(next() * max)
  for (let i = 0; i < n; i++) {
    s += unicode && next() < 0.2 ? UNICODE[Math.floor(next() * UNICODE.length)] : ASCII[Math.floor(next() * ASCII.length)]
  }
  return s
}

/**
 * A random form from `seed`: { boundary, parts, body, spec } where spec lists what a
 * reader should find: fields { name, value } and files { name, filename, type, data }.
 * Names are UTF-8 bytes in plain parameters (as browsers send them) or RFC 8187
 * `filename*` values; contents are binary with CRLF and pieces of the boundary.
 */
function randomForm (seed, { maxParts = 8, maxFile = 64 * 1024 } = {}) {
  const next = random(seed)
  const boundary = next() < 0.3 ? '----WebKitFormBoundary' + word(next, 16, false).replace(/[.]/g, 'x') : word(next, 40, false).replace(/[.]/g, 'x')
  const count = Math.floor(next() * (maxParts + 1))
  const parts = []
  for (let i = 0; i < count; i++) {
    const name = word(next, 12, true)
    if (next() < 0.45) {
      const value = next() < 0.5 ? word(next, 40, true) : breakDelimiters(Buffer.from(trickyBytes(Math.floor(next() * 300), next, boundary).toString('latin1').replace(/[^\x20-\x7e\r\n]/g, 'x'), 'latin1'), boundary).toString('latin1')
      parts.push({ name, value, nameBytes: Buffer.from(name, 'utf8').toString('latin1') })
    } else {
      const size = next() < 0.2 ? 0 : Math.floor(next() ** 3 * maxFile)
      const data = trickyBytes(size, next, boundary)
      const filename = word(next, 20, true) + (next() < 0.5 ? '.bin' : '')
      const types = ['application/octet-stream', 'image/png', 'text/plain', undefined]
      const part = { name, filename, type: types[Math.floor(next() * types.length)], data, nameBytes: Buffer.from(name, 'utf8').toString('latin1') }
      if (next() < 0.2) {
        part.filenameStar = `UTF-8''${encodeURIComponent(filename)}`
        part.filenameSent = undefined
      } else {
        part.filenameSent = Buffer.from(filename, 'utf8').toString('latin1')
      }
      parts.push(part)
    }
  }
  const wire = parts.map((p) => p.data !== undefined
    ? { name: p.nameBytes, filename: p.filenameSent, filenameStar: p.filenameStar, type: p.type, data: p.data }
    : { name: p.nameBytes, data: Buffer.from(p.value, 'utf8') })
  const body = formBody(wire, boundary)
  return { boundary, parts, body, next }
}

module.exports = { formBody, contentType, randomForm, trickyBytes }
