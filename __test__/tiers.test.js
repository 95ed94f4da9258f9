'use strict'
// Which tier reads a Buffer body of known length, by how it is handed out (lib/body-store.js
// READ): a bare uWS handler's (readBody) in JS up to UWS_JS_TIER_MAX, a framework's
// req.body (the parsers) and a BodyAccumulator's up to JS_TIER_MAX; above, the native
// pool, whose memory a Buffer handed out holds (stats().bytesInUse) until V8 collects it.
const test = require('node:test')
const assert = require('node:assert/strict')
const uWS = require('uWebSockets.js')
const ultimateExpress = require('ultimate-express')
const { readBody, raw, stats, BodyAccumulator, JS_TIER_MAX } = require('..')
const { UWS_JS_TIER_MAX } = require('../lib/body-store')
const { request, bodyOf } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

test('the bounds: a bare handler\'s Buffer stays in JS longer than a framework\'s', () => {
  assert.equal(JS_TIER_MAX, 32 * 1024)
  assert.equal(UWS_JS_TIER_MAX, 128 * 1024)
})

/** What the handler saw: the body's length and whether native memory held it. */
const seen = (body) => `${body.length} ${stats().bytesInUse >= body.length ? 'native' : 'js'}`

test('readBody reads up to UWS_JS_TIER_MAX in JS, raw() under ultimate-express up to JS_TIER_MAX', async () => {
  const app = uWS.App().post('/read', (res, req) => {
    readBody(res, req, { limit: '1mb' }).then((body) => {
      if (!res.aborted) res.cork(() => res.end(seen(body)))
    })
  })
  const listen = await new Promise((resolve) => app.listen('127.0.0.1', 0, resolve))
  const port = uWS.us_socket_local_port(listen)
  const ue = ultimateExpress()
  ue.post('/raw', raw({ limit: '1mb' }), (req, res) => res.send(seen(req.body)))
  await new Promise((resolve) => ue.listen(0, '127.0.0.1', resolve))
  try {
    const cases = [
      [port, '/read', UWS_JS_TIER_MAX, 'js'],
      [port, '/read', UWS_JS_TIER_MAX + 1, 'native'],
      [ue.port, '/raw', JS_TIER_MAX, 'js'],
      [ue.port, '/raw', JS_TIER_MAX + 1, 'native']
    ]
    for (const [at, path, size, tier] of cases) {
      // The bodies before have been let go: the pool's bytes in use are this one's alone.
      await bytesInUseAfterGc()
      const r = await request(at, { path, body: bodyOf(size), headers: { 'content-type': 'application/octet-stream' } })
      assert.equal(r.body, `${size} ${tier}`, `${path} ${size} B`)
    }
    // A BodyAccumulator's, as the parsers'.
    for (const [size, tier] of [[JS_TIER_MAX, 'js'], [JS_TIER_MAX + 1, 'native']]) {
      await bytesInUseAfterGc()
      const acc = new BodyAccumulator({ contentLength: size, limit: '1mb' })
      acc.push(bodyOf(size))
      assert.equal(seen(acc.finish()), `${size} ${tier}`)
    }
  } finally {
    uWS.us_listen_socket_close(listen)
    ue.close()
  }
})
