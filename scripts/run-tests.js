'use strict'
// Runs the test suite the way this Node can: all of it where uWebSockets.js's native
// binary loads, otherwise the files that do not need uWS, with uWS disabled
// (test-env/no-uws.js). Prints which files ran and which did not.
//   node scripts/run-tests.js [test dir]   (default: the repository's __test__)
// CI.yml runs it on every Node and platform; the package test runs it on the installed copy.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

// The test files that never start a uWS server (directly, through ultimate-express, or in
// a worker). A file not named here is taken to need uWS.
const WITHOUT_UWS = ['accumulator.test.js', 'form.test.js', 'loader.test.js', 'pool.test.js']

const dir = path.resolve(process.argv[2] || path.join(__dirname, '..', '__test__'))
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort()

function uwsLoads () {
  let pkg
  try {
    pkg = path.dirname(require.resolve('uWebSockets.js/package.json', { paths: [dir] }))
  } catch {
    return 'uWebSockets.js is not installed'
  }
  const binary = path.join(pkg, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`)
  if (!fs.existsSync(binary)) return `no ${path.basename(binary)} in ${pkg}`
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(binary)})`], { encoding: 'utf8' })
  return probe.status === 0 ? null : `${path.basename(binary)} does not load: ${probe.stderr.trim().split('\n').find((l) => /Error/.test(l)) || probe.stderr.trim()}`
}

const why = uwsLoads()
const run = why ? files.filter((f) => WITHOUT_UWS.includes(f)) : files
const skipped = files.filter((f) => !run.includes(f))
console.log(`run-tests: Node ${process.version} ${process.platform}-${process.arch}: ${why ? `uWS unavailable (${why})` : 'uWS loads: the whole suite'}`)
console.log(`run-tests: running ${run.join(' ')}`)
if (skipped.length) console.log(`run-tests: not run (they need uWS): ${skipped.join(' ')}`)

const args = ['--expose-gc']
if (why) args.push('--require', path.join(__dirname, 'test-env', 'no-uws.js'))
// One file at a time, as `npm test` does, where the flag exists (Node 18 has none).
args.push('--test')
if (spawnSync(process.execPath, ['--test-concurrency=1', '-e', '0']).status === 0) args.push('--test-concurrency=1')
args.push(...run.map((f) => path.join(dir, f)))
const result = spawnSync(process.execPath, args, { stdio: 'inherit' })
process.exit(result.status === null ? 1 : result.status)
