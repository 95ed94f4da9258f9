'use strict'
// multer's own test suite with uws-body's multipart() in multer's place.
//   node scripts/multer-suite.js <multer checkout> [--expect N]
// The checkout is multer's repository at a tag, its devDependencies installed (`npm
// install` in it: mocha, form-data, ...). Its test folder is copied beside a stand-in
// for multer's index.js that exports multipart() (the suite's `require('../')`), and run
// with the checkout's mocha; nothing of the checkout is changed but that folder, removed
// after. Prints each failure and `N passed, N failed`; exits non-zero on a failure, or
// when --expect N is given and N did not pass.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const REPO = path.join(__dirname, '..')

function main (argv) {
  const checkout = argv[0] && path.resolve(argv[0])
  const at = argv.indexOf('--expect')
  const expect = at === -1 ? null : Number(argv[at + 1])
  if (!checkout || !fs.existsSync(path.join(checkout, 'test')) || (expect !== null && !Number.isInteger(expect))) {
    console.error('usage: node scripts/multer-suite.js <multer checkout> [--expect N]')
    return 2
  }
  const mocha = path.join(checkout, 'node_modules', 'mocha', 'bin', 'mocha.js')
  if (!fs.existsSync(mocha)) {
    console.error(`multer-suite: no mocha in ${checkout}/node_modules: run npm install there first`)
    return 2
  }
  // Inside the checkout, so the tests find its node_modules; `../` is the stand-in.
  const suite = path.join(checkout, '.uws-body-suite')
  fs.rmSync(suite, { recursive: true, force: true })
  try {
    fs.cpSync(path.join(checkout, 'test'), path.join(suite, 'test'), { recursive: true })
    fs.writeFileSync(path.join(suite, 'index.js'), `module.exports = require(${JSON.stringify(REPO)}).multipart\n`)
    // A test of multer's own helper reaches it as ../lib/...: multer's, from the checkout.
    fs.mkdirSync(path.join(suite, 'lib'))
    for (const f of fs.readdirSync(path.join(checkout, 'lib'))) {
      fs.writeFileSync(path.join(suite, 'lib', f), `module.exports = require(${JSON.stringify(path.join(checkout, 'lib', f))})\n`)
    }
    const run = spawnSync(process.execPath, [mocha, '--reporter', 'json', '--exit', '--check-leaks', path.join(suite, 'test')], {
      cwd: checkout, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 10 * 60 * 1000
    })
    const json = run.stdout.slice(run.stdout.indexOf('{'))
    let report
    try {
      report = JSON.parse(json)
    } catch {
      console.error(`multer-suite: mocha gave no report (exit ${run.status})\n${run.stderr}`)
      return 1
    }
    for (const f of report.failures) console.log(`failed: ${f.fullTitle}: ${f.err && f.err.message}`)
    const { passes, failures, pending } = report.stats
    console.log(`multer-suite: ${passes} passed, ${failures} failed${pending ? `, ${pending} skipped` : ''}`)
    if (failures > 0) return 1
    if (expect !== null && passes !== expect) {
      console.error(`multer-suite: expected ${expect} to pass`)
      return 1
    }
    return 0
  } finally {
    fs.rmSync(suite, { recursive: true, force: true })
  }
}

process.exitCode = main(process.argv.slice(2))
