'use strict'
// readBody and readText: one rule for argument errors. The program's mistakes (a wrong
// res, req, option type, limit string or encoding) throw a TypeError synchronously, before
// any handler is attached to res and before any memory is taken; the promise rejects only
// with a BodyError, for what the client sent or did.
const test = require('node:test')
const assert = require('node:assert/strict')
const { readBody, readText, stats, BodyError } = require('..')

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
