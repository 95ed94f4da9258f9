'use strict'
// @fastify/busboy 3.2.1-3.2.6: a body that ends inside a skipped part (one the
// application refused), which must fail as truncated, once. Trigger: the body ends inside
// a file the fileFilter refused (at once, or 20 ms later), in its data, just after it,
// and inside a skipped preamble; each 400 ERR_MULTIPART_TRUNCATED. The neighbours: the
// same refused file followed by the close.
const { advisory, form, field, file, B } = require('../helpers/advisory')
const { bodyOf } = require('../helpers/client')
const { multipart } = require('../..')

const TRUNCATED = { status: 400, code: 'ERR_MULTIPART_TRUNCATED' }
const refusing = (fileFilter) => ({ middleware: ({ dir }) => multipart({ dest: dir, fileFilter }).any() })
const parts = [field('a', '1'), file('f', bodyOf(50000))]
// Halfway through the refused file's data.
const inData = form(parts, { end: '' }).subarray(0, -25000)

advisory(__filename, {
  routes: {
    now: refusing((req, f, cb) => cb(null, false)),
    later: refusing((req, f, cb) => setTimeout(cb, 20, null, false)),
    any: { middleware: () => multipart().any(), read: () => ({}) }
  },
  cases: [
    { name: 'refused at once: the body ends in its data', route: 'now', body: inData, want: TRUNCATED },
    { name: 'refused 20 ms later: the body ends in its data', route: 'later', body: inData, want: TRUNCATED },
    { name: 'refused at once: the body ends just after its data', route: 'now', body: form(parts, { end: '' }), want: TRUNCATED },
    { name: 'refused 20 ms later: the body ends inside the next delimiter', route: 'later', body: form(parts, { end: `--${B.slice(0, 4)}` }), want: TRUNCATED },
    { name: 'the body ends inside the preamble', route: 'any', body: `preamble\r\n--${B.slice(0, 4)}`, want: TRUNCATED },
    { name: 'the body is a preamble alone', route: 'any', body: 'x'.repeat(5000), want: TRUNCATED },
    { name: 'refused at once, then the close', route: 'now', body: form(parts), want: { status: 200, body: { a: '1' }, files: [] } },
    { name: 'refused 20 ms later, then the close', route: 'later', body: form(parts), want: { status: 200, body: { a: '1' }, files: [] } }
  ]
})
