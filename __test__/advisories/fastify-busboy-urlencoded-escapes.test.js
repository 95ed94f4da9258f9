'use strict'
// @fastify/busboy 3.2.1-3.2.6 (urlencoded): malformed % escapes (`%`, `%4`, `%zz`, a
// truncated or invalid UTF-8 sequence) against the urlencoded limits. Trigger: those
// escapes in names and values, for urlencoded() plain and extended, against
// parameterLimit and `limit` at and one over their bounds; each answer as body-parser 2
// gives it (escapes it cannot decode are kept as sent, %26 and %3D are data).
const { advisory, times } = require('../helpers/advisory')
const { urlencoded } = require('../..')

const ok = (body) => ({ status: 200, body })
const TOO_MANY = { status: 413, code: 'ERR_BODY_PARAMETERS_TOO_MANY' }
const TOO_LARGE = { status: 413, code: 'ERR_BODY_TOO_LARGE' }
// [what, body, answer (plain and extended alike, unless [plain, extended])]
const BODIES = [
  ['a lone %', '%', ok({ '%': '' })],
  ['a=%4', 'a=%4', ok({ a: '%4' })],
  ['%zz=%zz', '%zz=%zz', ok({ '%zz': '%zz' })],
  ['a=%%&%%=b', 'a=%%&%%=b', ok({ a: '%%', '%%': 'b' })],
  ['a%=b', 'a%=b', ok({ 'a%': 'b' })],
  ['a truncated UTF-8 sequence', 'a=%E0%A4%A', ok({ a: '%E0%A4%A' })],
  ['invalid UTF-8', 'a=%FF%FE', ok({ a: '%FF%FE' })],
  ['%00 in a name and a value', 'a=%00&%00=b', ok({ a: '\u0000', '\u0000': 'b' })],
  ['encoded brackets', 'a%5Bb%5D=c', [ok({ 'a[b]': 'c' }), ok({ a: { b: 'c' } })]],
  ['100 000 % in a value', 'a=' + '%'.repeat(100000), ok({ a: '%'.repeat(100000) })],
  ['a=1%26b%3D2 (escaped separators are data)', 'a=1%26b%3D2', ok({ a: '1&b=2' })],
  ['1 000 %zz parameters', times(1000, () => '%zz').join('&'), ok({ '%zz': times(1000, () => '') })],
  ['1 001 %zz parameters', times(1001, () => '%zz').join('&'), TOO_MANY]
]
// parameterLimit 3, limit 64 bytes.
const BOUNDED = [
  ['3 escaped names', '%41=1&%42=2&%43=3', ok({ A: '1', B: '2', C: '3' })],
  ['4 escaped names', '%41=1&%42=2&%43=3&%44=4', TOO_MANY],
  ['10 escaped & in one parameter', 'a=' + '%26'.repeat(10), ok({ a: '&'.repeat(10) })],
  ['64 bytes of %', 'a=' + '%'.repeat(62), ok({ a: '%'.repeat(62) })],
  ['65 bytes of %', 'a=' + '%'.repeat(63), TOO_LARGE],
  ['65 bytes of %zz', 'a=%zz' + '%zz'.repeat(20), TOO_LARGE]
]

const cases = []
for (const [route, index] of [['plain', 0], ['extended', 1]]) {
  for (const [what, body, want] of BODIES) cases.push({ name: `${route}: ${what}`, route, body, want: Array.isArray(want) ? want[index] : want })
}
for (const [what, body, want] of BOUNDED) cases.push({ name: `parameterLimit 3, limit 64: ${what}`, route: 'bounded', body, want })

advisory(__filename, {
  routes: {
    plain: { kind: 'urlencoded', middleware: () => urlencoded() },
    extended: { kind: 'urlencoded', middleware: () => urlencoded({ extended: true }) },
    bounded: { kind: 'urlencoded', middleware: () => urlencoded({ extended: true, parameterLimit: 3, limit: 64 }) }
  },
  cases
})
