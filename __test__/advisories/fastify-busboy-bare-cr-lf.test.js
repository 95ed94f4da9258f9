'use strict'
// @fastify/busboy 3.2.1-3.2.6: a bare CR or LF in part headers and names, which must
// never pass for a line break. Trigger: a bare CR and a bare LF in a field's name, a file
// name, a header value, a header name, and as a line ending; each a 400
// ERR_MULTIPART_HEADER as busboy 1 (multer's) answers. The neighbours: CR and LF in a
// part's data, a tab in a name, and the same header block with CRLF.
const { advisory, form, field, file } = require('../helpers/advisory')
const { multipart } = require('../..')

const HEADER = { status: 400, code: 'ERR_MULTIPART_HEADER' }
const raw = (head) => form([{ head, value: 'v' }])
const DISPOSITION = 'Content-Disposition: form-data; name="a"'

const cases = []
for (const [what, c] of [['CR', '\r'], ['LF', '\n']]) {
  cases.push(
    { name: `a bare ${what} in a field's name`, route: 'form', body: form([field(`a${c}b`)]), want: HEADER },
    { name: `a bare ${what} in a file's name`, route: 'form', body: form([file('f', 'x', `a${c}b.txt`)]), want: HEADER },
    { name: `a bare ${what} in a header's value`, route: 'form', body: raw(`${DISPOSITION}\r\nX-A: b${c}c\r\n`), want: HEADER },
    { name: `a bare ${what} in a header's name`, route: 'form', body: raw(`${DISPOSITION}\r\nX${c}-A: b\r\n`), want: HEADER },
    { name: `a bare ${what} before the first header`, route: 'form', body: raw(`${c}${DISPOSITION}\r\n`), want: HEADER },
    { name: `a bare ${what} ending a header line`, route: 'form', body: raw(`${DISPOSITION}${c}Content-Type: text/plain\r\n`), want: HEADER },
    { name: `a bare ${what} smuggling a second Content-Disposition`, route: 'form', body: raw(`${DISPOSITION}\r\nX-A: b${c}Content-Disposition: form-data; name="evil"\r\n`), want: HEADER }
  )
}
cases.push(
  { name: 'header lines ended by LF alone', route: 'form', body: Buffer.from(`--advisoryboundary\r\n${DISPOSITION}\n\nv\r\n--advisoryboundary--\r\n`), want: HEADER },
  { name: 'CR, LF and CRLF in a field\'s data', route: 'form', body: form([field('a', 'x\ry\nz\r\n')]), want: { status: 200, body: { a: 'x\ry\nz\r\n' } } },
  { name: 'a tab in a name', route: 'form', body: form([field('a\tb')]), want: { status: 200, body: { 'a\tb': 'v' } } },
  { name: 'the same header block with CRLF', route: 'form', body: raw(`${DISPOSITION}\r\nX-A: b\r\nContent-Type: text/plain\r\n`), want: { status: 200, body: { a: 'v' } } }
)

advisory(__filename, {
  routes: { form: { middleware: () => multipart().any(), read: () => ({}) } },
  cases
})
