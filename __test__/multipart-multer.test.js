'use strict'
// multipart() against multer 2: the same request bytes go to ultimate-express with
// uws-body's multipart() and to Express 5 (node:http) with multer, and both must build
// the same req.body, req.file(s) (names, types, sizes, encodings, bytes by hash) or the
// same error (name, code, field, message). SEED=<n> replays a run; MULTER_CASES=<n> sets
// how many generated cases run (150 by default).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const http = require('node:http')
const ultimateExpress = require('ultimate-express')
const express = require('express')
const multer = require('multer')
const uwsBody = require('..')
const { request } = require('./helpers/client')
const { random } = require('./helpers/random')
const { bytesInUseAfterGc } = require('./helpers/memory')
const { formBody, generateCase, middlewareOf, normalResult, sha256 } = require('./helpers/multipart')

const SEED = Number(process.env.SEED) || (Date.now() % 1e9)
const CASES = Number(process.env.MULTER_CASES) || 150

/**
 * An app that runs, for a request to /<id>, the middleware `configs[id]` made by
 * `make(config, id)`, and answers 200 with normalResult (errors included, so the status
 * multer does not set is left out of the comparison; `status` carries it apart).
 */
function mount (app, configs, make, dest) {
  const made = new Map()
  app.use((req, res, next) => {
    const id = req.url.split('/')[1]
    if (!made.has(id)) made.set(id, make(configs.get(id), id))
    made.get(id)(req, res, (err) => {
      const result = normalResult(req, err, dest && path.join(dest, id))
      result.status = err ? err.status : undefined
      res.statusCode = 200
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(result))
    })
  })
  return app
}

async function startBoth (configs, { makeOurs, makeMulter, destOurs, destMulter } = {}) {
  const ours = mount(ultimateExpress(), configs, makeOurs || ((c) => middlewareOf(uwsBody.multipart, c)), destOurs)
  const oursPort = await new Promise((resolve) => ours.listen(0, '127.0.0.1', () => resolve(ours.port)))
  const theirs = http.createServer(mount(express(), configs, makeMulter || ((c) => middlewareOf(multer, c)), destMulter))
  await new Promise((resolve) => theirs.listen(0, '127.0.0.1', resolve))
  return {
    oursPort,
    theirsPort: theirs.address().port,
    close () { ours.close(); theirs.close() }
  }
}

async function send (port, id, c) {
  const r = await request(port, {
    path: `/${id}`,
    headers: { 'content-type': c.contentType },
    body: c.body,
    cuts: c.cuts,
    pause: c.pause
  })
  assert.equal(r.status, 200, `case ${id}: ${r.body}`)
  return JSON.parse(r.body)
}

/** multer sets no status; uws-body adds 413 for limits and 400 for the others. */
function expectedStatus (error) {
  if (!error) return undefined
  if (error.name !== 'MulterError') return undefined
  return ['LIMIT_UNEXPECTED_FILE', 'MISSING_FIELD_NAME', 'INVALID_FIELD_NAME'].includes(error.code) ? 400 : 413
}

test(`multipart() answers as multer 2 on ${CASES} generated requests (SEED=${SEED})`, async (t) => {
  const rnd = random(SEED)
  const cases = []
  const configs = new Map()
  for (let i = 0; i < CASES; i++) {
    const c = generateCase(rnd, i)
    cases.push(c)
    configs.set(String(i), c.config)
  }
  const servers = await startBoth(configs)
  const tally = { ok: 0, errors: new Map() }
  try {
    for (const c of cases) {
      const theirs = await send(servers.theirsPort, c.index, c)
      const ours = await send(servers.oursPort, c.index, c)
      const status = ours.status
      delete ours.status
      delete theirs.status
      assert.deepEqual(ours, theirs, `case ${c.index} (SEED=${SEED}): ${JSON.stringify(c.config)}`)
      if (ours.error && ours.error.name === 'MulterError') assert.equal(status, expectedStatus(ours.error), `case ${c.index}: status`)
      if (ours.error) tally.errors.set(ours.error.code, (tally.errors.get(ours.error.code) || 0) + 1)
      else tally.ok++
    }
  } finally {
    servers.close()
  }
  t.diagnostic(`accepted ${tally.ok}; errors ${JSON.stringify(Object.fromEntries(tally.errors))}`)
  // The generator reaches both outcomes, and more than one kind of error.
  assert.ok(tally.ok > CASES / 4, `accepted: ${tally.ok}`)
  assert.ok(tally.errors.size >= 4, `error codes seen: ${[...tally.errors.keys()]}`)
  assert.equal(await bytesInUseAfterGc(), 0)
})
