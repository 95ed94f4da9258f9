'use strict'
// The body rules as one table (fixtures/body-rules.json), run here through BodyAccumulator
// and by tests/body_rules.rs through the native core's Body: the rules written in JS
// (lib/body/accumulator.js) and in Rust (src/core/body.rs) give the same outcome, case by case.
const test = require('node:test')
const assert = require('node:assert/strict')
const { BodyAccumulator } = require('..')
const { cases } = require('./fixtures/body-rules.json')

// The fields a body error may carry; a case names every one its error has.
const FIELDS = ['limit', 'length', 'expected', 'received', 'encoding', 'reason']

const bytesOf = (chunk) => typeof chunk === 'number' ? new Uint8Array(chunk).fill(97) : Buffer.from(chunk, 'hex')

/** The case run through an accumulator made with `extra` options: what happened, where. */
function run (c, extra) {
  const acc = new BodyAccumulator({ contentLength: c.length, limit: c.limit, contentEncoding: c.encoding, inflate: c.inflate, ...extra })
  let at = acc.error !== null ? 'create' : null
  c.chunks.forEach((chunk, i) => {
    const accepted = acc.push(bytesOf(chunk))
    if (at !== null) assert.equal(accepted, false, `${c.name}: push ${i + 1} after the error`)
    else if (!accepted) at = `push ${i + 1}`
  })
  let body = null
  if (c.end === 'abort') {
    acc.abort()
    if (at === null) at = 'abort'
  } else {
    try {
      body = acc.finish()
    } catch (error) {
      if (at === null) at = 'finish'
      assert.equal(error, acc.error, `${c.name}: finish throws the body's error`)
    }
  }
  return { at, error: acc.error, body }
}

for (const [tier, extra] of [['the tier the body takes', {}], ['the native tier', { maxPreallocated: 0 }]]) {
  test(`the body rules table, ${tier}`, () => {
    for (const c of cases) {
      const { at, error, body } = run(c, extra)
      if (c.error === undefined) {
        assert.equal(error, null, `${c.name}: ${error && error.code}`)
        assert.equal(body.length, c.body, c.name)
        continue
      }
      assert.equal(at, c.error.at, `${c.name}: where the error shows`)
      assert.equal(error.code, c.error.code, c.name)
      assert.equal(error.status, c.error.status, c.name)
      const fields = Object.fromEntries(FIELDS.filter((k) => error[k] !== undefined).map((k) => [k, error[k]]))
      assert.deepStrictEqual(fields, c.error.fields, `${c.name}: the error's fields`)
    }
  })
}

test('the table has a case for every rule and every error of a body', () => {
  const codes = new Set(cases.filter((c) => c.error).map((c) => c.error.code))
  for (const code of ['ERR_BODY_TOO_LARGE', 'ERR_BODY_LENGTH_MISMATCH', 'ECONNABORTED', 'ERR_BODY_ENCODING_UNSUPPORTED', 'ERR_BODY_ENCODING_INVALID']) {
    assert.ok(codes.has(code), code)
  }
  const ats = new Set(cases.filter((c) => c.error).map((c) => c.error.at.split(' ')[0]))
  assert.deepStrictEqual([...ats].sort(), ['abort', 'create', 'finish', 'push'])
})
