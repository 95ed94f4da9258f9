'use strict'
// readBody and readText: one rule for argument errors. The program's mistakes (a wrong
// res, req, option type, limit string or encoding) throw a TypeError synchronously, before
// any handler is attached to res and before any memory is taken; the promise rejects only
// with a BodyError, for what the client sent or did. Each reader's TypeError names that
// reader, not another.
const test = require('node:test')
const assert = require('node:assert/strict')
const { readBody, readText, bodyStream, readMultipart, stats, BodyError } = require('..')

/** A uWS-like response that fails the test if anything is attached to it. */
const untouchable = () => ({
  onData () { throw new Error('onData attached despite the argument error') },
  onAborted () { throw new Error('onAborted attached despite the argument error') }
})

// A declared length past the JS tier: an accumulator made too early would hold native memory.
const HEADERS = { 'content-length': String(512 * 1024) }

const MISTAKES = [
  ['res is not a uWS response', () => [{}, HEADERS]],
  ['res is null', () => [null, HEADERS]],
  ['req is a string', () => [untouchable(), 'x']],
  ['req is null', () => [untouchable(), null]],
  ['options is a number', () => [untouchable(), HEADERS, 5]],
  ['limit is an object', () => [untouchable(), HEADERS, { limit: {} }]],
  ['limit string misread by bytes.parse', () => [untouchable(), HEADERS, { limit: ' 10kb ' }]],
  ['maxPreallocated is negative', () => [untouchable(), HEADERS, { maxPreallocated: -1 }]],
  ['inflate is a string', () => [untouchable(), HEADERS, { inflate: 'no' }]],
  ['onAborted is not a function', () => [untouchable(), HEADERS, { onAborted: 'later' }]]
]

test('argument errors throw TypeError synchronously, attach nothing, hold no memory', () => {
  for (const fn of [readBody, readText]) {
    for (const [label, args] of MISTAKES) {
      const before = stats().bytesInUse
      assert.throws(() => fn(...args()), TypeError, `${fn.name}: ${label}`)
      assert.equal(stats().bytesInUse, before, `${fn.name}: ${label}: memory taken`)
    }
  }
  for (const encoding of ['nope', 'utf-9', 42]) {
    const before = stats().bytesInUse
    assert.throws(() => readText(untouchable(), HEADERS, { encoding }), { name: 'TypeError', message: /unknown encoding/ })
    assert.equal(stats().bytesInUse, before)
  }
})

test('each reader\'s argument errors name that reader', () => {
  const readers = { readBody, readText, bodyStream, readMultipart }
  // bodyStream and readMultipart also pause and resume the client.
  const res = () => ({ ...untouchable(), pause () {}, resume () {} })
  const mistakes = [
    ['res is not a uWS response', () => [{}, HEADERS], '(res, req) needs a uWS HttpResponse'],
    ['req is a string', () => [res(), 'x'], '(res, req) needs a uWS HttpRequest'],
    ['req is null', () => [res(), null], '(res, req) needs a uWS HttpRequest'],
    ['options is a number', () => [res(), HEADERS, 5], ' options must be an object'],
    ['an unknown option', () => [res(), HEADERS, { limt: 1 }], ' option "limt"']
  ]
  for (const [name, fn] of Object.entries(readers)) {
    for (const [label, args, says] of mistakes) {
      assert.throws(() => fn(...args()), (err) => {
        assert.ok(err instanceof TypeError, `${name}: ${label}: ${err}`)
        assert.ok(err.message.includes(`${name}${says}`), `${name}: ${label}: ${err.message}`)
        for (const other of Object.keys(readers)) {
          if (other !== name) assert.ok(!err.message.includes(`${other}(`) && !err.message.includes(`${other} `), `${name}: ${label} names ${other}: ${err.message}`)
        }
        return true
      })
    }
  }
})

test('what the client sent rejects the promise with a BodyError, never throws', async () => {
  const handlers = {}
  const res = { onData (fn) { handlers.data = fn }, onAborted (fn) { handlers.aborted = fn } }
  for (const fn of [readBody, readText]) {
    const cases = [
      [{ 'content-length': '999999999' }, 'entity.too.large'],
      [{ 'content-length': '-1' }, 'request.size.invalid'],
      [{ 'content-length': '3', 'content-encoding': 'compress' }, 'encoding.unsupported']
    ]
    for (const [headers, type] of cases) {
      const promise = fn(res, headers)
      handlers.data(new ArrayBuffer(0), true)
      await assert.rejects(promise, (err) => err instanceof BodyError && err.type === type)
    }
  }
})

// Each method set names its methods twice: as a list (for messages) and in a test that
// reads them by name (lib/plan/check.js says why). The two must agree.
test('each method set\'s test takes exactly the methods it names', () => {
  const { READER_METHODS, PAUSABLE_METHODS, ANSWER_METHODS } = require('../lib/plan/check')
  for (const set of [READER_METHODS, PAUSABLE_METHODS, ANSWER_METHODS]) {
    const all = Object.fromEntries(set.names.map((name) => [name, () => {}]))
    assert.equal(set.has(all), true, set.names.join(', '))
    for (const name of set.names) {
      assert.equal(set.has({ ...all, [name]: undefined }), false, `without ${name}`)
    }
  }
})
