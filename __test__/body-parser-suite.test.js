'use strict'
// body-parser's own json, raw, text and urlencoded tests, from a checkout of its repository
// named by UWS_BODY_BODY_PARSER (none is kept here: they are its code), run by mocha with
// uws-body's parsers in body-parser's place (scripts/body-parser-suite/). Every test must
// pass but the ones docs/express.md's table ("body-parser's own tests") names, and those
// must fail. Without a checkout the test says it did not run.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { REPO } = require('./helpers/repository')

const CHECKOUT = process.env.UWS_BODY_BODY_PARSER
const FILES = ['json.js', 'raw.js', 'text.js', 'urlencoded.js']
const SHIM = path.join(REPO, 'scripts', 'body-parser-suite')
// The four files' tests at body-parser 2.4: a file that fails to load would make fewer.
const TESTS = 250
const TABLE_HEAD = '| body-parser test | difference | reason |'

/** The tests docs/express.md's table explains, by mocha's full title. */
function explained () {
  const lines = fs.readFileSync(path.join(REPO, 'docs', 'express.md'), 'utf8').split('\n')
  const at = lines.indexOf(TABLE_HEAD)
  assert.notEqual(at, -1, `docs/express.md has no table headed ${TABLE_HEAD}`)
  const names = []
  for (let i = at + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const m = /^\| `([^`]+)` \| [^|]+ \| [^|]+ \|$/.exec(lines[i])
    assert.ok(m, `docs/express.md:${i + 1}: a row is | \`test\` | difference | reason |`)
    names.push(m[1])
  }
  return names
}

/**
 * The checkout's four test files beside the shim, as their `require('..')` expects:
 * a temporary folder holding index.js (the shim) and test/.
 */
function suite () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-bp-suite-'))
  fs.mkdirSync(path.join(dir, 'test'))
  for (const f of fs.readdirSync(SHIM)) fs.copyFileSync(path.join(SHIM, f), path.join(dir, f))
  for (const f of FILES) fs.copyFileSync(path.join(CHECKOUT, 'test', f), path.join(dir, 'test', f))
  return dir
}

/** One mocha run over the suite in `cwd`: { passes, failures, pending } by full title. */
function mocha (cwd, extra) {
  let bin
  try {
    bin = require.resolve('mocha/bin/mocha.js')
  } catch {
    assert.fail('mocha is missing: it and supertest are devDependencies (npm install)')
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-bp-'))
  const out = path.join(dir, 'report.json')
  try {
    const run = spawnSync(process.execPath, [bin, '--check-leaks', '--reporter', 'json', '--reporter-option', `output=${out}`, ...extra, 'test/'], {
      cwd,
      // The suite's folder is outside this repository: its requires resolve from here.
      env: { ...process.env, NODE_PATH: path.join(REPO, 'node_modules'), UWS_BODY_UNDER_TEST: path.join(__dirname, '..') },
      encoding: 'utf8',
      timeout: 240_000
    })
    assert.ok(fs.existsSync(out), `mocha wrote no report (exit ${run.status}): ${run.stderr}`)
    const report = JSON.parse(fs.readFileSync(out, 'utf8'))
    const titles = (list) => list.map((t) => t.fullTitle)
    return { passes: titles(report.passes), failures: titles(report.failures), pending: titles(report.pending), report }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const skip = CHECKOUT ? false : 'UWS_BODY_BODY_PARSER names no checkout of expressjs/body-parser (2.4): its own tests did not run'
test('body-parser\'s own tests pass with uws-body\'s parsers, but those docs/express.md explains', { skip }, (t) => {
  const cwd = suite()
  t.after(() => fs.rmSync(cwd, { recursive: true, force: true }))
  const first = mocha(cwd, [])
  // The zstd tests the first run left pending, in their other branch (zstd-other-branch.js).
  const second = mocha(cwd, ['--require', './zstd-other-branch.js', '--grep', 'zstandard'])
  const ran = [...first.passes, ...first.failures, ...second.passes, ...second.failures]
  assert.equal(new Set(ran).size, ran.length, 'a test title ran twice')
  const pending = [...first.pending, ...second.pending].filter((t) => !ran.includes(t))
  assert.deepEqual(pending, [], 'every test runs in one of the two runs')
  assert.equal(ran.length, TESTS)

  const failed = [...first.failures, ...second.failures].sort()
  const failures = [...first.report.failures, ...second.report.failures]
  const why = failures.filter((t) => !explained().includes(t.fullTitle)).map((t) => `${t.fullTitle}: ${t.err.message}`)
  assert.deepEqual(why, [], 'failed, and not in docs/express.md\'s table')
  assert.deepEqual(failed, explained().sort(), 'docs/express.md\'s table names exactly the tests that fail')
  console.log(`body-parser's tests: ${ran.length - failed.length} pass, ${failed.length} fail as docs/express.md explains`)
})
