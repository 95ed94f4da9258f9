'use strict'
// Which tier reads a Buffer body of known length: readBody's, the parsers' (req.body) and a
// BodyAccumulator's are read in JS up to JS_TIER_MAX, above it by the native pool, whose
// memory a Buffer handed out holds (stats().bytesInUse) until V8 collects it.
const test = require('node:test')
const assert = require('node:assert/strict')
const uWS = require('uWebSockets.js')
const ultimateExpress = require('ultimate-express')
const { readBody, raw, stats, BodyAccumulator, JS_TIER_MAX } = require('..')
const { request, bodyOf } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

/** What the handler saw: the body's length and whether native memory held it. */
const seen = (body) => `${body.length} ${stats().bytesInUse >= body.length ? 'native' : 'js'}`

test('readBody, raw() under ultimate-express and a BodyAccumulator read up to JS_TIER_MAX in JS, larger bodies natively', async () => {
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
      [port, '/read', JS_TIER_MAX, 'js'],
      [port, '/read', JS_TIER_MAX + 1, 'native'],
      [ue.port, '/raw', JS_TIER_MAX, 'js'],
      [ue.port, '/raw', JS_TIER_MAX + 1, 'native']
    ]
    for (const [at, path, size, tier] of cases) {
      // The bodies before have been let go: the pool's bytes in use are this one's alone.
      await bytesInUseAfterGc()
      const r = await request(at, { path, body: bodyOf(size), headers: { 'content-type': 'application/octet-stream' } })
      assert.equal(r.body, `${size} ${tier}`, `${path} ${size} B`)
    }
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
