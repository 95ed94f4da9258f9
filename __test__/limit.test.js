'use strict'
// Limit strings: every string accepted means what it means to body-parser (bytes.parse);
// the ones bytes.parse reads only through parseInt (' 10kb ' is 10 bytes, '1e3' is 1)
// are TypeErrors when the middleware, the accumulator or the read is set up.
const test = require('node:test')
const assert = require('node:assert/strict')
const bytes = require('bytes')
const { BodyAccumulator, readBody, readText, json, raw, text, urlencoded } = require('..')
const { bytesInUseAfterGc } = require('./helpers/memory')

const MISTAKES = [' 10kb ', '10kb ', ' 10kb', '1e3', '10 kilobytes', '1.5b', '0x10', '', 'kb', '-1kb', '10k', '1,000']
const ACCEPTED = ['0', '100', '100b', '100B', '100 b', '10kb', '10KB', '10 kb', '1.5mb', '+1kb', '2gb', '1.5 MB']

/** The limit an accumulator enforces: the largest body it takes. */
function enforced (limit) {
  const n = bytes.parse(limit)
  const at = new BodyAccumulator({ limit, contentLength: n })
  const over = new BodyAccumulator({ limit, contentLength: n + 1 })
  const result = { at: at.error, over: over.error && over.error.type, limit: over.error && over.error.limit }
  at.abort()
  over.abort()
  return result
}

test('limit strings bytes.parse would misread are TypeErrors wherever a limit is taken', () => {
  const res = { onData () { throw new Error('no handler may be attached') }, onAborted () { throw new Error('no handler may be attached') } }
  for (const limit of MISTAKES) {
    const invalid = { name: 'TypeError', message: new RegExp(`invalid limit ${JSON.stringify(limit).replace(/[.+]/g, '\\$&')}`) }
    assert.throws(() => new BodyAccumulator({ limit }), invalid, limit)
    assert.throws(() => readBody(res, {}, { limit }), invalid, limit)
    assert.throws(() => readText(res, {}, { limit }), invalid, limit)
    for (const factory of [json, raw, text, urlencoded]) assert.throws(() => factory({ limit }), invalid, limit)
  }
  assert.throws(() => json({ limit: ' 10kb ' }), /bytes\.parse, and so body-parser, reads it as 10\b/)
  assert.throws(() => json({ limit: '1e3' }), /reads it as 1\b/)
})

test('accepted limit strings mean exactly what they mean to body-parser', async () => {
  for (const limit of ACCEPTED) {
    assert.deepEqual(enforced(limit), { at: null, over: 'entity.too.large', limit: bytes.parse(limit) }, limit)
  }
  assert.equal(bytes.parse('1.5mb'), 1572864)
  assert.equal(await bytesInUseAfterGc(), 0)
})
