'use strict'
// The test suite (`npm test`): every file in __test__, one at a time, against one build of
// uWebSockets.js, then a summary of what ran, what did not and why.
//   node scripts/run-tests.js [test dir] [--only <prefix>]   (default: the repository's __test__;
//   --only: the files whose names start with <prefix>, e.g. `--only s3` for npm run test:s3)
//   node scripts/run-tests.js file.test.js ...   (some files; `npm test -- __test__/x.test.js`)
//
// UWS_BODY_TEST_SKIP=<prefix>,...: leave out the files whose names start with these, said
// in the summary (CI runs the S3 files in some cells of its matrix only).
//
// Which uWS build: UWS_BODY_TEST_UWS=<build> (a key of BUILDS, or `none`) names it, and
// then it must load or the run fails. Unset, the first build whose native binary loads on
// this Node and libc is used (20.57 needs glibc 2.38 and Node 20-25; the 20.30 fork runs
// Node <= 20 on older glibc); with none, only the files that need no uWS run, and under
// CI=true that is a failure unless UWS_BODY_TEST_UWS=none says it is expected.
// Both builds are devDependencies: `uWebSockets.js` is 20.57, the fork is installed under
// another name and swapped in by test-env/uws.js (so ultimate-express loads it too).
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

// build -> the package name it is installed under (package.json devDependencies).
const BUILDS = { 20.57: 'uWebSockets.js', '20.30': 'uws-fork-20.30' }

// The test files that never start a uWS server (directly, through ultimate-express, or in
// a worker). A file not named here is taken to need uWS.
const WITHOUT_UWS = ['accumulator.test.js', 'caps.test.js', 'errors.test.js', 'form.test.js', 'gc.test.js', 'loader.test.js', 'multipart-multer-cases.test.js', 'multipart-options.test.js', 'option-names.test.js', 'pool.test.js', 'protocol.test.js', 'v8-memory.test.js']

const given = process.argv.slice(2)
const onlyAt = given.indexOf('--only')
const only = onlyAt === -1 ? '' : given.splice(onlyAt, 2)[1] || ''
const named = given.length > 0 && given.every((a) => a.endsWith('.test.js'))
const dir = named ? path.dirname(path.resolve(given[0])) : path.resolve(given[0] || path.join(__dirname, '..', '__test__'))
const files = named
  ? given.map((a) => path.relative(dir, path.resolve(a)))
  : fs.readdirSync(dir).filter((f) => f.endsWith('.test.js') && f.startsWith(only)).sort()

/** The package folder of `name` as the tests would find it, or null. */
function packageDir (name) {
  try {
    // Not `name/package.json`: a package's `exports` may hide it (20.57 does).
    let at = path.dirname(require.resolve(name, { paths: [dir] }))
    while (!fs.existsSync(path.join(at, 'package.json'))) {
      const up = path.dirname(at)
      if (up === at) return null
      at = up
    }
    return at
  } catch {
    return null
  }
}

/** { dir, version } if the build's native binary loads here, else { why }. */
function probe (build) {
  const pkg = packageDir(BUILDS[build])
  if (pkg === null) return { why: `${BUILDS[build]} is not installed (npm install)` }
  // A native binary must be what loaded: the fork falls back to a JS imitation of uWS
  // where its binary does not load, and a test passing against that proves nothing.
  const check = `const uws = require(${JSON.stringify(pkg)});
    if (!Object.keys(require.cache).some((f) => f.endsWith('.node'))) throw new Error('no native binary loaded');
    if (typeof uws.App !== 'function') throw new Error('no App()')`
  const r = spawnSync(process.execPath, ['-e', check], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  if (r.status !== 0) {
    const lines = r.stderr.split('\n').map((l) => l.trim())
    const line = lines.find((l) => /GLIBC_[0-9.]+' not found/.test(l)) || lines.find((l) => /^(\w*Error)[: ]/.test(l)) || r.stderr.trim()
    return { why: line.replace(/^Error: /, '').slice(0, 300) }
  }
  const version = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version
  return { dir: pkg, version }
}

const asked = process.env.UWS_BODY_TEST_UWS || ''
if (asked !== '' && asked !== 'none' && !(asked in BUILDS)) {
  console.error(`run-tests: UWS_BODY_TEST_UWS=${asked}: known builds are ${Object.keys(BUILDS).join(', ')} and none`)
  process.exit(2)
}
const tried = []
let build = null
let found = null
if (asked !== 'none') {
  for (const b of asked ? [asked] : Object.keys(BUILDS)) {
    const p = probe(b)
    if (p.dir) { build = b; found = p; break }
    tried.push(`${b}: ${p.why}`)
  }
}
const platform = `Node ${process.version} ${process.platform}-${process.arch}`
if (asked && asked !== 'none' && build === null) {
  console.error(`run-tests: ${platform}: uWS ${asked} was asked for (UWS_BODY_TEST_UWS) and does not load: ${tried.join('; ')}`)
  process.exit(1)
}
// UWS_BODY_TEST_SKIP=s3,...: files whose names start with these are left out on purpose
// (a run that repeats what another run of the same matrix covers), and said so.
const leftOut = (process.env.UWS_BODY_TEST_SKIP || '').split(',').map((p) => p.trim()).filter(Boolean)
const chosen = files.filter((f) => !leftOut.some((p) => f.startsWith(p)))
const run = build === null ? chosen.filter((f) => WITHOUT_UWS.includes(f)) : chosen
const skipped = chosen.filter((f) => !run.includes(f))
const skippedOnPurpose = files.filter((f) => !chosen.includes(f))
const uwsLine = build !== null
  ? `uWS ${build} (${BUILDS[build]}@${found.version})`
  : asked === 'none' ? 'no uWS (UWS_BODY_TEST_UWS=none)' : `no uWS build loads (${tried.join('; ')})`
console.log(`run-tests: ${platform}, ${uwsLine}`)
if (tried.length && build !== null) console.log(`run-tests: not used: ${tried.join('; ')}`)
// The S3 files (s3*.test.js) need garage: said here, and by each skipped test (under CI
// they fail instead of skipping).
const s3Files = run.filter((f) => f.startsWith('s3'))
let s3Line = ''
if (s3Files.length) {
  const garage = require('../__test__/helpers/garage').findGarage()
  s3Line = garage.bin
    ? `S3 tests: garage ${garage.version} (${garage.bin})`
    : `S3 tests (${s3Files.join(' ')}) ${process.env.CI ? 'FAIL' : 'are skipped'}: ${garage.why}`
  console.log(`run-tests: ${s3Line}`)
}

const env = { ...process.env }
const preload = []
if (build === null) preload.push(path.join(__dirname, 'test-env', 'no-uws.js'))
else if (BUILDS[build] !== 'uWebSockets.js') {
  env.UWS_BODY_UWS_DIR = found.dir
  preload.push(path.join(__dirname, 'test-env', 'uws.js'))
}
// NODE_OPTIONS, not flags: the test runner's child processes and the Node processes the
// tests start must load the same build.
if (preload.length) env.NODE_OPTIONS = [env.NODE_OPTIONS || '', ...preload.map((p) => `--require=${p}`)].join(' ').trim()

// Two reporters: the usual one for people, TAP into a file for the summary's counts.
const tap = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-tests-')), 'report.tap')
const args = ['--expose-gc', '--test', '--test-concurrency=1',
  '--test-reporter=spec', '--test-reporter-destination=stdout',
  '--test-reporter=tap', `--test-reporter-destination=${tap}`,
  ...run.map((f) => path.join(dir, f))]
/**
 * The top-level failures in a TAP report: "name (location): error", the error's lines
 * joined (at most 12 of them).
 */
function failures (report) {
  const found = []
  for (const m of report.matchAll(/^not ok \d+ - (.*)\n {2}---\n([\s\S]*?)\n {2}\.\.\.$/gm)) {
    const [, name, yaml] = m
    const location = (yaml.match(/^ {2}location: '(.*)'$/m) || [])[1]
    const block = yaml.match(/^ {2}error: (?:\|-\n)?([\s\S]*?)(?=\n {2}\S)/m)
    const error = block ? block[1].split('\n').map((l) => l.trim()).filter(Boolean).slice(0, 12).join(' / ') : ''
    found.push(`${name}${location ? ` (${location.replace(/^.*\//, '')})` : ''}${error ? `: ${error}` : ''}`)
  }
  return found
}

const started = Date.now()
const result = spawnSync(process.execPath, args, { stdio: 'inherit', env })
let counts = 'no report'
try {
  const report = fs.readFileSync(tap, 'utf8')
  const count = (what) => (report.match(new RegExp(`^# ${what} (\\d+)$`, 'm')) || [])[1] || '?'
  counts = ['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo'].map((w) => `${w} ${count(w)}`).join(', ')
  // Each failure again with its error, so that a log's tail (all CI shows of a long run)
  // says why, not only what.
  for (const failure of failures(report)) console.log(`run-tests: failed: ${failure}`)
} catch {}
fs.rmSync(path.dirname(tap), { recursive: true, force: true })
const status = result.status === null ? 1 : result.status
const seconds = ((Date.now() - started) / 1000).toFixed(0)
console.log(`run-tests: summary: ${platform}, ${build !== null ? `uWS ${build}` : 'no uWS'}: ${run.length} files, ${counts}, ${seconds} s, exit ${status}`)
if (skipped.length) console.log(`run-tests: files not run (they need uWS): ${skipped.join(' ')}`)
if (skippedOnPurpose.length) console.log(`run-tests: files not run (UWS_BODY_TEST_SKIP=${leftOut.join(',')}): ${skippedOnPurpose.join(' ')}`)
if (s3Line) console.log(`run-tests: ${s3Line}`)
let exit = status
if (build === null && asked !== 'none' && process.env.CI) {
  console.log('run-tests: CI: no uWS build loads, so most of the suite did not run (set UWS_BODY_TEST_UWS=none where that is expected)')
  exit = 1
}
process.exit(exit)
