'use strict'
// @fastify/busboy 3.2.1-3.2.6: an epilogue (bytes after the closing delimiter) in its own
// write, never parts, never a second end of the form. Trigger: an epilogue in a write of
// its own, 5 ms after the close: text, a whole fake part behind a delimiter, a second
// close, 100 KiB in pieces, after a file on disk; and the neighbours: an epilogue glued
// to `--B--` with no CRLF, and one that takes the body over `limit` (the whole body as
// sent counts), declared or chunked.
const { advisory, form, field, file, B } = require('../helpers/advisory')
const { multipart } = require('../..')

const parts = [field('a', '1'), file('f', 'x'.repeat(3000))]
const closed = form(parts)
const withEpilogue = (epilogue, end) => ({ body: Buffer.concat([form(parts, end === undefined ? {} : { end }), Buffer.from(epilogue)]), cuts: [(end === undefined ? closed.length : form(parts, { end }).length), closed.length + 1000], pause: 5 })
const whole = { status: 200, body: { a: '1' }, files: [{ fieldname: 'f', size: 3000 }] }
const FAKE = `--${B}\r\nContent-Disposition: form-data; name="evil"\r\n\r\nx\r\n--${B}--\r\n`

advisory(__filename, {
  routes: {
    memory: { middleware: () => multipart().any(), read: () => ({}) },
    disk: { middleware: ({ dir }) => multipart({ dest: dir }).any(), read: ({ dir }) => ({ storage: { dest: dir } }) },
    limited: { middleware: () => multipart({ limit: 4000 }).any(), read: () => ({ limit: 4000 }) }
  },
  cases: [
    { name: 'text, in its own write', route: 'memory', ...withEpilogue('bye\r\n'), want: whole },
    { name: 'a fake part behind a delimiter, in its own write', route: 'memory', ...withEpilogue(FAKE), want: whole },
    { name: 'a second close, in its own write', route: 'memory', ...withEpilogue(`--${B}--\r\n`), want: whole },
    { name: '100 KiB, in pieces', route: 'memory', ...withEpilogue('e'.repeat(100 * 1024)), want: whole },
    { name: 'after a file on disk, a fake part', route: 'disk', ...withEpilogue(FAKE), want: whole },
    { name: 'glued to --B-- with no CRLF', route: 'memory', ...withEpilogue('garbage', `--${B}--`), want: whole },
    { name: 'declaring a body over limit', route: 'limited', ...withEpilogue('e'.repeat(2000)), want: { status: 413, code: 'ERR_BODY_TOO_LARGE' } },
    { name: 'taking a chunked body over limit', route: 'limited', ...withEpilogue('e'.repeat(2000)), chunked: true, want: { status: 413, code: 'ERR_BODY_TOO_LARGE' } },
    { name: 'within limit', route: 'limited', ...withEpilogue('e'.repeat(100)), want: whole }
  ]
})
