'use strict'
// The test suite: the files in __test__, one at a time, against one build of
// uWebSockets.js, then a summary of what ran, what did not and why.
//   node scripts/run-tests.js [test dir] [--all] [--only <prefix>]
//     (default: the repository's __test__ and its advisories/ folder, all but the HEAVY
//     files below: `npm test`;
//     --all: every file, `npm run test:all`, what CI runs; --only: the files whose names
//     start with <prefix>, heavy or not, e.g. `--only s3` for npm run test:s3, which then
//     builds garage with scripts/garage.sh if it is missing, or fails; an --only run in
//     which no test passed fails)
//   node scripts/run-tests.js file.test.js ...   (some files; `npm test -- __test__/x.test.js`)
//
// UWS_BODY_TEST_SKIP=<prefix>,...: leave out the files whose names start with these, said
// in the summary (the ASan and package runs leave out what the matrix covers);
// UWS_BODY_TEST_ONLY=<prefix>,...: run only those (CI's 20.30 cell: the rest ran in the
// package test, on the same Node and uWS).
// UWS_BODY_TEST_LOAD=light: the heaviest tests on fewer tries and files
// (__test__/helpers/load.js), said in the summary.
//
// Which uWS build: UWS_BODY_TEST_UWS=<build> (a key of BUILDS, or `none`) names it, and
// then it must load or the run fails. Unset, the first build whose native binary loads on
// this Node and libc is used (20.57 needs glibc 2.38 and Node 20-25; the 20.30 fork runs
// Node <= 20 on older glibc); with none, only the files that need no uWS run, and under
// CI=true that is a failure unless UWS_BODY_TEST_UWS=none says it is expected. The builds,
// how one is probed and how the fork is swapped in: test-env/loadable-uws.js.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { BUILDS, probe, envFor } = require('./test-env/loadable-uws')

// The test files that never start a uWS server (directly, through ultimate-express, or in
// a worker). A file not named here is taken to need uWS.
const WITHOUT_UWS = ['accumulator.test.js', 'body-parser-suite.test.js', 'multer-suite.test.js', 'option-reads.test.js', 'body-rules.test.js', 'figure-rows.test.js', 'caps.test.js', 'errors.test.js', 'exports.test.js', 'layers.test.js', 'external-strings.test.js', 'form.test.js', 'gc.test.js', 'loader.test.js', 'multipart-file.test.js', 'multipart-multer-cases.test.js', 'multipart-options.test.js', 'option-names.test.js', 'pool.test.js', 'protocol.test.js', 'v8-memory.test.js']

// The files the everyday `npm test` leaves out (said in its summary), by name prefix: each
// takes minutes or needs what a first clone lacks. `npm run test:all` runs them, as CI
// does; so do --only, UWS_BODY_TEST_ONLY and files named. Measured here (2 cores):
//   early-answer        refused uploads from real clients (node:http, fetch, curl): ~3 min
//   native-edge-faults  builds the addon with fault injection (cargo): up to ~2.5 min
//   s3                  a real S3 server (garage: bash scripts/garage.sh): ~3.5 min
const HEAVY = ['early-answer', 'native-edge-faults', 's3']

const given = process.argv.slice(2)
const allAt = given.indexOf('--all')
const all = allAt !== -1
if (all) given.splice(allAt, 1)
const onlyAt = given.indexOf('--only')
const only = onlyAt === -1 ? '' : given.splice(onlyAt, 2)[1] || ''
if (onlyAt !== -1 && only === '') {
  console.error('run-tests: --only needs a file name prefix (--only s3)')
  process.exit(2)
}
const named = given.length > 0 && given.every((a) => a.endsWith('.test.js'))
const dir = named ? path.dirname(path.resolve(given[0])) : path.resolve(given[0] || path.join(__dirname, '..', '__test__'))
// The test folder's own files, then those of its folders here (advisories/: one file per
// published advisory, __test__/helpers/advisory.js), named by their path in it
// ('advisories/CVE-….test.js'), so that --only advisories and the prefixes below pick them.
const FOLDERS = ['advisories']
const testsIn = (folder) => fs.readdirSync(path.join(dir, folder)).filter((f) => f.endsWith('.test.js')).map((f) => path.join(folder, f))
const files = named
  ? given.map((a) => path.relative(dir, path.resolve(a)))
  : [...testsIn('.'), ...FOLDERS.filter((f) => fs.existsSync(path.join(dir, f))).flatMap(testsIn)].filter((f) => f.startsWith(only)).sort()

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
    const p = probe(b, dir)
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
// UWS_BODY_TEST_ONLY=s3,...: the other way round, only the files whose names start with
// these (the rest ran on the same stack in another run of the matrix), also said.
const prefixes = (name) => (process.env[name] || '').split(',').map((p) => p.trim()).filter(Boolean)
const leftOut = prefixes('UWS_BODY_TEST_SKIP')
const onlyThese = prefixes('UWS_BODY_TEST_ONLY')
const purposes = [leftOut.length && `UWS_BODY_TEST_SKIP=${leftOut.join(',')}`, onlyThese.length && `UWS_BODY_TEST_ONLY=${onlyThese.join(',')}`].filter(Boolean).join(', ')
// Asked for by name (--only, files named, UWS_BODY_TEST_ONLY): heavy files too.
const asking = only !== '' || named || onlyThese.length > 0
const everyday = all || asking ? files : files.filter((f) => !HEAVY.some((p) => f.startsWith(p)))
const heavyLeftOut = files.filter((f) => !everyday.includes(f))
const chosen = everyday.filter((f) => !leftOut.some((p) => f.startsWith(p)) && (onlyThese.length === 0 || onlyThese.some((p) => f.startsWith(p))))
const run = build === null ? chosen.filter((f) => WITHOUT_UWS.includes(f)) : chosen
const skipped = chosen.filter((f) => !run.includes(f))
const skippedOnPurpose = everyday.filter((f) => !chosen.includes(f))
if (chosen.length === 0) {
  console.error(`run-tests: no test file in ${dir} is chosen (${[only && `--only ${only}`, purposes].filter(Boolean).join(', ') || 'none found'})`)
  process.exit(1)
}
const uwsLine = build !== null
  ? `uWS ${build} (${BUILDS[build]}@${found.version})`
  : asked === 'none' ? 'no uWS (UWS_BODY_TEST_UWS=none)' : `no uWS build loads (${tried.join('; ')})`
// Read through the tests' own helper, which refuses a misspelled value before any test runs.
const loadLine = require('../__test__/helpers/load').LOAD === 'light' ? ', UWS_BODY_TEST_LOAD=light (fewer tries and files: __test__/helpers/load.js)' : ''
console.log(`run-tests: ${platform}, ${uwsLine}${loadLine}`)
if (tried.length && build !== null) console.log(`run-tests: not used: ${tried.join('; ')}`)
// --only: the files asked for must run; a build of uWS that loads is not one to skip for.
if (only !== '' && skipped.length) {
  console.log(`run-tests: --only ${only}: ${skipped.join(' ')} need a uWS build that loads (${tried.join('; ')})`)
  process.exit(1)
}
// The S3 files (s3*.test.js) need garage: said here, and by each skipped test (under CI
// they fail instead of skipping). Asked for with --only (npm run test:s3), they run or
// the run fails: a missing garage is built first (scripts/garage.sh: cached, 6-15 min the
// first time).
const s3Files = run.filter((f) => f.startsWith('s3'))
let s3Line = ''
if (s3Files.length) {
  const { findGarage } = require('../__test__/helpers/garage')
  let garage = findGarage()
  if (!garage.bin && only !== '') {
    console.log(`run-tests: --only ${only}: ${garage.why}; building it: bash scripts/garage.sh (cached after, 6-15 min the first time)`)
    const built = spawnSync('bash', [path.join(__dirname, 'garage.sh')], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (built.status === 0) garage = findGarage()
    if (!garage.bin) {
      console.log(`run-tests: --only ${only}: the S3 files need garage 2.x, and bash scripts/garage.sh ${built.status === 0 ? 'ran but it is still not found' : 'failed (why is above; it needs cargo: https://rustup.rs)'}; run it, or set UWS_BODY_GARAGE to a garage 2.x binary`)
      process.exit(1)
    }
  }
  s3Line = garage.bin
    ? `S3 tests: garage ${garage.version} (${garage.bin})`
    : `S3 tests (${s3Files.join(' ')}) ${process.env.CI ? 'FAIL' : 'are skipped'}: ${garage.why}`
  console.log(`run-tests: ${s3Line}`)
}

// NODE_OPTIONS, not flags: the test runner's child processes and the Node processes the
// tests start must load the same build.
const env = build === null
  ? { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS || ''} --require=${path.join(__dirname, 'test-env', 'no-uws.js')}`.trim() }
  : { ...envFor(build, found.dir) }

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
let passed = 0
try {
  const report = fs.readFileSync(tap, 'utf8')
  const count = (what) => (report.match(new RegExp(`^# ${what} (\\d+)$`, 'm')) || [])[1] || '?'
  passed = Number(count('pass')) || 0
  counts = ['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo'].map((w) => `${w} ${count(w)}`).join(', ')
  // Each failure again with its error, so that a log's tail (all CI shows of a long run)
  // says why, not only what.
  for (const failure of failures(report)) console.log(`run-tests: failed: ${failure}`)
} catch {}
fs.rmSync(path.dirname(tap), { recursive: true, force: true })
const status = result.status === null ? 1 : result.status
const seconds = ((Date.now() - started) / 1000).toFixed(0)
const inFolders = FOLDERS.map((f) => [f, run.filter((r) => r.startsWith(f + path.sep)).length]).filter(([, n]) => n > 0).map(([f, n]) => `${n} in ${f}/`)
console.log(`run-tests: summary: ${platform}, ${build !== null ? `uWS ${build}` : 'no uWS'}${loadLine ? ', light load' : ''}: ${run.length} files${inFolders.length ? ` (${inFolders.join(', ')})` : ''}, ${counts}, ${seconds} s, exit ${status}`)
if (skipped.length) console.log(`run-tests: files not run (they need uWS): ${skipped.join(' ')}`)
if (skippedOnPurpose.length) console.log(`run-tests: files not run (${purposes}): ${skippedOnPurpose.join(' ')}`)
if (heavyLeftOut.length) console.log(`run-tests: files not run (the heavy ones: npm run test:all runs every file): ${heavyLeftOut.join(' ')}`)
if (s3Line) console.log(`run-tests: ${s3Line}`)
let exit = status
// A command that names what it tests (npm run test:s3) must test it: all skipped is a failure.
if (only !== '' && exit === 0 && passed === 0) {
  console.log(`run-tests: --only ${only}: no test passed (each skipped one says why above)`)
  exit = 1
}
if (build === null && asked !== 'none' && process.env.CI) {
  console.log('run-tests: CI: no uWS build loads, so most of the suite did not run (set UWS_BODY_TEST_UWS=none where that is expected)')
  exit = 1
}
process.exit(exit)
