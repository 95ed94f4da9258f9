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

async function startBoth (configs, { makeOurs, makeMulter, destOurs, destMulter, oursOnExpress = false } = {}) {
  const makeOursOrDefault = makeOurs || ((c) => middlewareOf(uwsBody.multipart, c))
  let ours, oursPort
  if (oursOnExpress) {
    ours = http.createServer(mount(express(), configs, makeOursOrDefault, destOurs))
    await new Promise((resolve) => ours.listen(0, '127.0.0.1', resolve))
    oursPort = ours.address().port
  } else {
    ours = mount(ultimateExpress(), configs, makeOursOrDefault, destOurs)
    oursPort = await new Promise((resolve) => ours.listen(0, '127.0.0.1', () => resolve(ours.port)))
  }
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

/** Runs `cases` on both servers and requires the same answers; returns them (ours). */
async function compare (servers, cases, check = () => {}) {
  const results = []
  for (const c of cases) {
    const theirs = await send(servers.theirsPort, c.index, c)
    const ours = await send(servers.oursPort, c.index, c)
    delete ours.status
    delete theirs.status
    assert.deepEqual(ours, theirs, `case ${c.index} (SEED=${SEED}): ${JSON.stringify(c.config)}`)
    await check(c, ours)
    results.push(ours)
  }
  return results
}

test(`under plain Express 5 (node:http) too, multipart() answers as multer (SEED=${SEED})`, async () => {
  const rnd = random(SEED + 1)
  const cases = []
  const configs = new Map()
  for (let i = 0; i < 50; i++) {
    const c = generateCase(rnd, i)
    cases.push(c)
    configs.set(String(i), c.config)
  }
  const servers = await startBoth(configs, { oursOnExpress: true })
  try {
    await compare(servers, cases)
  } finally {
    servers.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

test(`disk storage: the same files on disk as multer's, and none left after a failure (SEED=${SEED})`, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-multer-'))
  const destOurs = path.join(root, 'ours')
  const destMulter = path.join(root, 'multer')
  const rnd = random(SEED + 2)
  const cases = []
  const configs = new Map()
  for (let i = 0; i < 60; i++) {
    const c = generateCase(rnd, i)
    // Mostly any(): files get stored (and, when a later part fails, removed).
    if (i % 3 !== 0) c.config.strategy = { kind: 'any' }
    cases.push(c)
    configs.set(String(i), c.config)
  }
  // Ours with its own diskStorage, with `dest`, and with multer's DiskStorage as a foreign
  // engine (fed through file.stream); multer with its own.
  const makeOurs = (config, id) => {
    const dir = path.join(destOurs, id)
    const storage = [uwsBody.multipart.diskStorage({ destination: dir }), undefined, multer.diskStorage({ destination: dir })][Number(id) % 3]
    if (storage === undefined) return middlewareOf((options) => uwsBody.multipart({ ...options, dest: dir }), config)
    return middlewareOf(uwsBody.multipart, config, storage)
  }
  const makeMulter = (config, id) => middlewareOf(multer, config, multer.diskStorage({ destination: path.join(destMulter, id) }))
  const servers = await startBoth(configs, { makeOurs, makeMulter, destOurs, destMulter })
  let stored = 0
  let failed = 0
  try {
    await compare(servers, cases, (c, result) => {
      const mine = fs.readdirSync(path.join(destOurs, String(c.index)))
      const theirs = fs.readdirSync(path.join(destMulter, String(c.index)))
      assert.equal(mine.length, theirs.length, `case ${c.index}: files on disk ${JSON.stringify(c.config)} ${JSON.stringify(result).slice(0, 300)}`)
      if (result.error) {
        assert.deepEqual(mine, [], `case ${c.index}: a failed upload leaves nothing`)
        failed++
      } else {
        stored += mine.length
      }
    })
  } finally {
    servers.close()
    fs.rmSync(root, { recursive: true, force: true })
  }
  assert.ok(stored > 10 && failed > 5, `stored ${stored}, failed ${failed}`)
})
