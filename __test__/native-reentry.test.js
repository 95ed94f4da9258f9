'use strict'
// JS can run while the addon builds a value for a handle (a setter on Object.prototype
// reached by error()'s object): a call back into the addon from that JS would find the
// handle already lent out, and is refused (src/node/external.rs's `with`).
const test = require('node:test')
const assert = require('node:assert/strict')
const native = require('../lib/native/native')

/** What each call the setter makes on `body` gives, while error(body) builds its object. */
function fromSetter (calls) {
  const body = native.create(3, 1, 0, null, true)
  native.push(body, Buffer.from('hello')) // over the limit: error() has a `limit` to set
  const seen = []
  // eslint-disable-next-line no-extend-native, accessor-pairs -- the hostile JS under test
  Object.defineProperty(Object.prototype, 'limit', {
    configurable: true,
    set () {
      for (const call of calls) {
        try {
          seen.push(call(body) === undefined ? 'undefined' : 'served')
        } catch (e) {
          seen.push(e.code)
        }
      }
    }
  })
  try {
    native.error(body)
  } finally {
    delete Object.prototype.limit
  }
  native.abort(body)
  return seen
}

test('a call back into the addon on the handle error() is reading is refused', () => {
  const calls = [(b) => native.abort(b), (b) => native.push(b, Buffer.from('x')), (b) => native.sizes(b)]
  assert.deepEqual(fromSetter(calls), ['ERR_UWS_BODY_INTERNAL', 'ERR_UWS_BODY_INTERNAL', 'ERR_UWS_BODY_INTERNAL'])
})

test('after it, the handle is served again', () => {
  const body = native.create(-1, 100, 0, null, true)
  fromSetter([])
  assert.equal(native.push(body, Buffer.from('x')), true)
  native.abort(body)
})
