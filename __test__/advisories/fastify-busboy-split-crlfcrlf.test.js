'use strict'
// @fastify/busboy 3.2.1-3.2.6: the CRLFCRLF that ends a part's header block, split across
// writes. Trigger: each part's CRLFCRLF split after each of its bytes, in writes 2 ms
// apart, for a field and a file, first and second part, with data that itself begins with
// CRLF or CRLFCRLF; and the whole header block a byte a write. Each part read exactly as
// sent.
const { advisory, form, field, file } = require('../helpers/advisory')
const { multipart } = require('../..')

const parts = [field('a', '\r\n\r\nvalue'), file('f', '\r\nfile data\r\n\r\n'), field('b', 'plain')]
const body = form(parts)
/** Where each part's header block ends (the offsets of its CRLFCRLF). */
const ends = []
for (let at = body.indexOf('\r\n\r\n'); at !== -1 && ends.length < parts.length; at = body.indexOf('\r\n\r\n', body.indexOf('Content-Disposition', at))) ends.push(at)
const whole = { status: 200, body: { a: '\r\n\r\nvalue', b: 'plain' }, files: [{ fieldname: 'f', size: 15 }] }

const cases = []
for (const [i, end] of ends.entries()) {
  for (const k of [0, 1, 2, 3, 4]) {
    cases.push({ name: `part ${i + 1}'s CRLFCRLF split after its byte ${k}`, route: 'form', body, cuts: [end + k], pause: 2, want: whole })
  }
  cases.push({ name: `part ${i + 1}'s CRLFCRLF a byte a write`, route: 'form', body, cuts: [end + 1, end + 2, end + 3, end + 4], pause: 2, want: whole })
}
const firstHead = body.indexOf('Content-Disposition')
cases.push({ name: 'the first header block a byte a write', route: 'form', body, cuts: Array.from({ length: ends[0] + 4 - firstHead }, (_, i) => firstHead + i + 1), want: whole })

advisory(__filename, {
  routes: { form: { middleware: () => multipart().any(), read: () => ({}) } },
  cases
})
