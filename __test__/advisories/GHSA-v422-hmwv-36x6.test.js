'use strict'
// GHSA-v422-hmwv-36x6 (body-parser): a `limit` that does not parse must throw, never
// become no limit. Trigger: limits that do not parse ('abc', '', '1x', ' 1kb', '-1', -1,
// NaN, 'Infinity', true, {}) must throw a TypeError where the reader is made (the four
// parsers, multipart()) or called (readMultipart); the neighbours that do parse ('1kb',
// '1 kb', 1024, '0') must hold a body to them: 1024 bytes pass, 1025 are 413.
const assert = require('node:assert/strict')
const { advisory, form, field } = require('../helpers/advisory')
const uwsBody = require('../..')

const BAD = ['abc', '', '1x', ' 1kb', '1kb ', '-1', -1, NaN, 'Infinity', true, {}, '1 kb x']
const GOOD = ['1kb', '1 kb', '1KB', 1024, '1024']
const MAKERS = ['json', 'urlencoded', 'text', 'raw', 'multipart']
const TOO_LARGE = { status: 413, code: 'ERR_BODY_TOO_LARGE' }

// A body of exactly n bytes for each parser.
const BODIES = {
  json: (n) => `{"a":"${'x'.repeat(n - 8)}"}`,
  urlencoded: (n) => `a=${'x'.repeat(n - 2)}`,
  text: (n) => 'x'.repeat(n),
  raw: (n) => 'x'.repeat(n)
}
const formOf = (n) => {
  const empty = form([field('a', '')]).length
  return form([field('a', 'x'.repeat(n - empty))])
}

const routes = {
  bad: { read: () => ({ limit: 'abc' }) },
  emptyLimit: { read: () => ({ limit: '' }) }
}
const cases = [
  { name: 'readMultipart, limit "abc": thrown at the call', route: 'bad', body: formOf(100), want: { status: 500, code: 'TypeError' } },
  { name: 'readMultipart, limit "": thrown at the call', route: 'emptyLimit', body: formOf(100), want: { status: 500, code: 'TypeError' } }
]
for (const limit of GOOD) {
  for (const kind of Object.keys(BODIES)) {
    const route = `${kind}-${String(limit).replace(/\W/g, '_')}`
    routes[route] = { kind, middleware: () => uwsBody[kind]({ limit, type: () => true, ...(kind === 'urlencoded' ? { extended: true } : {}) }) }
    cases.push(
      { name: `${kind}({ limit: ${JSON.stringify(limit)} }): 1024 bytes`, route, body: BODIES[kind](1024), want: { status: 200 } },
      { name: `${kind}({ limit: ${JSON.stringify(limit)} }): 1025 bytes`, route, body: BODIES[kind](1025), want: TOO_LARGE }
    )
  }
  const route = `multipart-${String(limit).replace(/\W/g, '_')}`
  routes[route] = { middleware: () => uwsBody.multipart({ limit }).any(), read: () => ({ limit }) }
  cases.push(
    { name: `multipart({ limit: ${JSON.stringify(limit)} }): a form of 1024 bytes`, route, body: formOf(1024), want: { status: 200 } },
    { name: `multipart({ limit: ${JSON.stringify(limit)} }): a form of 1025 bytes`, route, body: formOf(1025), want: TOO_LARGE }
  )
}

advisory(__filename, {
  routes,
  cases,
  tests (test) {
    test('a limit that does not parse is a TypeError where the reader is made', () => {
      for (const make of MAKERS) {
        for (const limit of BAD) {
          assert.throws(() => uwsBody[make]({ limit }), (err) => err instanceof TypeError && /limit/.test(err.message), `${make}({ limit: ${JSON.stringify(limit)} })`)
        }
      }
    })
  }
})
