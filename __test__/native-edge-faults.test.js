'use strict'
// N-API calls that fail only when Node is in trouble (an exception pending), made to fail
// on purpose by the addon built with fault injection (helpers/fault-addon.js). cargo
// builds it on each run: seconds when nothing changed, 154 s in a run here that rebuilt it.
// Its own file, so that the everyday `npm test` leaves that build to `npm run test:all`
// (scripts/run-tests.js HEAVY).
const test = require('node:test')
const assert = require('node:assert/strict')
const { runChild, ending } = require('./helpers/child')
const { faultAddon } = require('./helpers/fault-addon')

test('N-API refusing a body\'s Buffer because an exception is pending: the block is freed, the exception thrown', (t) => {
  // napi_create_external_buffer checks for a pending exception (or an environment that can
  // no longer run JS) before it takes the block: the block is then still ours, to free.
  // Taking every failure to mean Node owns it leaked the block; the nudge after the Buffer
  // must not let its own failure replace the Buffer.
  const addon = faultAddon()
  if (addon.skip) return t.skip(addon.skip)
  const source = `
    const native = require(ROOT + '/lib/native/native')
    const BEFORE_BUFFER = 1
    const BEFORE_NUDGE = 2
    const read = (fault) => {
      const body = native.create(300000, 1e9, 1e9, null, true)
      native.push(body, Buffer.alloc(300000, 5))
      native.injectFault(fault)
      try { return native.finish(body) } catch (err) { return err }
    }
    const refused = read(BEFORE_BUFFER)
    const inUse = native.stats().bytesInUse
    const nudged = read(BEFORE_NUDGE)
    console.log(JSON.stringify({
      refused: refused.code, inUse, reported: native.stats().bytesReported,
      nudged: Buffer.isBuffer(nudged) && nudged.length === 300000 && nudged.every((b) => b === 5)
    }))`
  const r = runChild(source, { env: { UWS_BODY_NATIVE_PATH: addon.file } })
  assert.equal(r.status, 0, ending(r))
  const out = JSON.parse(r.stdout)
  assert.equal(out.refused, 'ERR_INJECTED', 'the pending exception is what the program sees')
  assert.equal(out.inUse, 0, 'the refused block is freed at once (Node never took it)')
  assert.ok(out.reported >= 0)
  assert.equal(out.nudged, true, 'a failed nudge leaves the Buffer as the result')
})
