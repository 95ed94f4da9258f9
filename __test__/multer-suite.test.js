'use strict'
// multer's own test suite with multipart() in multer's place (scripts/multer-suite.js),
// from a checkout of expressjs/multer (at v2.1.1 or later, `npm install` run in it) that
// UWS_BODY_MULTER names: none is kept in this repository. Without one the test says it did
// not run. Every test of the suite must pass.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')
const { REPO } = require('./helpers/repository')

const CHECKOUT = process.env.UWS_BODY_MULTER
const skip = CHECKOUT ? false : 'UWS_BODY_MULTER names no checkout of expressjs/multer: its own tests did not run'

test('multer\'s own tests pass with multipart() in its place', { skip, timeout: 600_000 }, () => {
  const run = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'multer-suite.js'), CHECKOUT], { encoding: 'utf8' })
  const summary = /multer-suite: (\d+) passed, (\d+) failed/.exec(run.stdout)
  assert.ok(summary, `multer-suite.js gave no summary (exit ${run.status}): ${run.stdout}${run.stderr}`)
  assert.equal(Number(summary[2]), 0, run.stdout)
  assert.equal(run.status, 0, run.stdout + run.stderr)
  console.log(summary[0])
})
