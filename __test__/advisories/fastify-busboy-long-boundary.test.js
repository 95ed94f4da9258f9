'use strict'
// @fastify/busboy 3.2.1-3.2.6: a boundary of 252+ characters, its delimiters split across
// writes. Trigger: boundaries of 252, 253 and 1 000 characters (quoted or not), the body
// cut every 37 bytes; each refused before its body is read (RFC 2046 allows 70): 400
// ERR_MULTIPART_BOUNDARY. The neighbours: 70 characters, accepted under every cut, with
// data holding all but the last byte of its delimiter, and 71, refused.
const { advisory, form, field, file } = require('../helpers/advisory')
const { multipart } = require('../..')

const BOUNDARY = { status: 400, code: 'ERR_MULTIPART_BOUNDARY' }
// Characters RFC 2046 allows that need no quotes in a header parameter.
const boundaryOf = (n) => ("0123456789'+_-." + 'abcdefghijklmnopqrstuvwxyz').repeat(30).slice(0, n)
const every = (step, length) => Array.from({ length: Math.floor(length / step) }, (_, i) => (i + 1) * step)

const cases = []
for (const n of [71, 252, 253, 1000]) {
  const boundary = boundaryOf(n)
  const body = form([field('a'), file('f', 'x'.repeat(500))], { boundary })
  for (const quoted of [false, true]) {
    cases.push({ name: `a boundary of ${n} characters${quoted ? ', quoted' : ''}, cut every 37 bytes`, route: 'form', body, contentType: `multipart/form-data; boundary=${quoted ? `"${boundary}"` : boundary}`, cuts: every(37, body.length), want: BOUNDARY })
  }
}
const b70 = boundaryOf(70)
// Data that holds the delimiter but for its last byte, then the delimiter itself split.
const near = `\r\n--${b70.slice(0, -1)}!`
for (const step of [1, 37, 71, 73]) {
  const body = form([field('a', near), file('f', near.repeat(20))], { boundary: b70 })
  cases.push({
    name: `a boundary of 70 characters, cut every ${step} bytes`,
    route: 'form',
    body,
    contentType: `multipart/form-data; boundary="${b70}"`,
    cuts: every(step, body.length),
    want: { status: 200, body: { a: near }, files: [{ fieldname: 'f', size: near.length * 20 }] }
  })
}

advisory(__filename, {
  routes: { form: { middleware: () => multipart().any(), read: () => ({}) } },
  cases
})
