'use strict'
// The flat-form fast path (lib/frameworks/body-parser/form.js) against qs with body-parser's options,
// on generated bodies full of the characters that matter: it must give the same object
// or step aside (null).
const test = require('node:test')
const assert = require('node:assert/strict')
const qs = require('qs')
const { parseFlatForm } = require('../lib/frameworks/body-parser/form')
const { random } = require('./helpers/random')

const PIECES = ['a', 'b', 'key', '0', '12', '=', '=', '&', '&', '+', '%20', '%41', '%2B', '%2f', '%25', '%7F', '%00', '%80', '%e9', '%C3%A9', '%zz', '%', '%2', '.', '[', ']', '%5B', '%5d',
  '__proto__', 'constructor', 'toString', 'hasOwnProperty', '\u00e9', '\ud83d\ude00', ' ', ',', ';', '?']

function qsLikeBodyParser (str, extended) {
  const count = str.split('&').length
  return qs.parse(str, {
    allowPrototypes: true,
    arrayLimit: extended ? Math.max(100, count) : count,
    depth: extended ? 32 : 0,
    charset: 'utf-8',
    parameterLimit: 1000,
    strictDepth: true
  })
}

test('the flat-form fast path equals qs wherever it answers', () => {
  const next = random(12345)
  let answered = 0
  for (let i = 0; i < 40000; i++) {
    const n = 1 + Math.floor(next() * 12)
    let str = ''
    for (let j = 0; j < n; j++) str += PIECES[Math.floor(next() * PIECES.length)]
    const fast = parseFlatForm(str)
    if (fast === null) continue
    answered++
    for (const extended of [false, true]) {
      assert.deepEqual(fast, qsLikeBodyParser(str, extended), `${JSON.stringify(str)} extended=${extended}`)
    }
  }
  assert.ok(answered > 10000, `only ${answered} answered`)
  // Typical forms take the fast path.
  assert.deepEqual(parseFlatForm('name=J%C3%B6rg+M&age=41&ok'), { name: 'J\u00f6rg M', age: '41', ok: '' })
  assert.equal(parseFlatForm('a[b]=1'), null)
  assert.equal(parseFlatForm('a=1&a=2'), null)
})
