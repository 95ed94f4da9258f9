'use strict'
// Empty and absent bodies: uws-body keeps body-parser 2's req.body, which differs from
// ultimate-express's built-in parsers in exactly the cases README lists ("Use with
// ultimate-express"). This pins both sides of that list.
const test = require('node:test')
const assert = require('node:assert/strict')
const express = require('express')
const bodyParser = require('body-parser')
const ultimateExpress = require('ultimate-express')
const uwsBody = require('..')
const { request } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const TYPES = { json: 'application/json', raw: 'application/octet-stream', text: 'text/plain', urlencoded: 'application/x-www-form-urlencoded' }
const show = (body) => (body === undefined ? 'undefined' : Buffer.isBuffer(body) ? `Buffer(${body.length})` : JSON.stringify(body))

/** [label, parser, request options, body-parser and uws-body's req.body, the built-in's]. */
const CASES = []
for (const [kind, type] of Object.entries(TYPES)) {
  const empty = { json: '{}', raw: 'Buffer(0)', text: '""', urlencoded: '{}' }[kind]
  CASES.push(
    [`${kind}: content-length 0`, kind, { headers: { 'content-type': type } }, empty, kind === 'raw' || kind === 'text' ? '{}' : empty],
    [`${kind}: chunked, empty`, kind, { headers: { 'content-type': type }, chunked: true }, empty, empty],
    [`${kind}: POST without a body`, kind, { headers: { 'content-type': type }, declaredLength: false }, 'undefined', empty],
    [`${kind}: GET without a body`, kind, { method: 'GET', headers: { 'content-type': type }, declaredLength: false }, 'undefined', '{}'],
    [`${kind}: a type the parser does not take`, kind, { headers: { 'content-type': 'image/png' }, body: Buffer.from('x') }, 'undefined', '{}'],
    [`${kind}: no content-type`, kind, { headers: {}, body: Buffer.from('x') }, 'undefined', '{}']
  )
}

async function listen (app, lib) {
  for (const kind of Object.keys(TYPES)) app.all(`/${kind}`, lib[kind](), (req, res) => res.send(show(req.body)))
  if (lib === bodyParser) {
    const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
    return { port: server.address().port, close: () => server.close() }
  }
  await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve))
  return { port: app.port, close: () => app.close() }
}

test('empty bodies: body-parser 2\'s req.body, and the listed differences from the built-ins', async () => {
  const servers = {
    bodyParser: await listen(express(), bodyParser),
    uwsBody: await listen(ultimateExpress(), uwsBody),
    builtIn: await listen(ultimateExpress(), ultimateExpress)
  }
  try {
    for (const [label, kind, options, expected, builtIn] of CASES) {
      const get = async (server) => (await request(server.port, { path: `/${kind}`, ...options })).body
      assert.equal(await get(servers.bodyParser), expected, `body-parser, ${label}`)
      assert.equal(await get(servers.uwsBody), expected, `uws-body, ${label}`)
      assert.equal(await get(servers.builtIn), builtIn, `ultimate-express built-in, ${label}`)
    }
  } finally {
    for (const server of Object.values(servers)) server.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})
