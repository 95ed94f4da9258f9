'use strict'
// What one call into the addon costs, by the kind of export: a hand-written N-API callback
// (src/node/raw.rs's `callback`, as push, streamWrite, streamRead and multipartFeed are), a
// `#[napi]` function, one under `#[napi(catch_unwind)]`, one whose body runs under the same
// guard as raw.rs's (catch_unwind and the memory report: what a `#[napi]` export must do to
// keep the same promises), a class method; and finding the value behind an external, by
// our type tag or by napi-rs's `External<T>`. Each probe takes two arguments and answers
// `true` (src/node/probe.rs, built with `--features call-cost` into the target directory's call-cost/).
// A second table times the shapes of the once-per-body exports (a handle in and null, a
// Buffer or a string out; six arguments in and a new handle out), each hand-written and
// as a `#[napi]` function written as those exports are.
// Contenders alternate within each round (the order rotates each round), each in its own
// loop; a run is ROUNDS rounds in one process, and RUNS runs (CALL_COST_RUNS, default 5)
// are made, each in its own process. The tables give per contender the median over the
// runs of each run's median ns per call, with the runs' range, and the paired difference
// (within each round, then the median over rounds and over runs).
// "JS function" is an empty JS function in the same loop: the loop's own cost.
//   node bench/call-cost.js                 this Node
//   node bench/call-cost.js NODE...         each of these Node binaries in turn, its tables
//                                           (e.g. target/tools/node/linux-x64-24/bin/node,
//                                           from scripts/node-dist.sh 24)
// Prints tables; asserts nothing about time.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { median, table } = require('./stats')

const ROOT = path.join(__dirname, '..')
// Cargo's target directory (CARGO_TARGET_DIR, as cargo reads it); the probe addon is
// copied to call-cost/ in it.
const TARGET = process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target')
const ADDON = path.join(TARGET, 'call-cost', 'uws-body-call-cost.node')
const ROUNDS = Number(process.env.CALL_COST_ROUNDS) || 21
const RUNS = Number(process.env.CALL_COST_RUNS) || 5
const CALLS = 200000

/** Builds the probe addon (release, as shipped); without cargo, an earlier build of it. */
function build () {
  const cargo = spawnSync('cargo', ['build', '--release', '--lib', '--features', 'call-cost', '--target-dir', TARGET], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  if (cargo.error && fs.existsSync(ADDON)) return ADDON
  if (cargo.status !== 0) throw new Error('bench/call-cost.js: cargo build --features call-cost failed')
  fs.mkdirSync(path.dirname(ADDON), { recursive: true })
  fs.copyFileSync(path.join(TARGET, 'release', 'libuws_body.so'), ADDON)
  return ADDON
}

// [name, the call, as JS source over `p` (the addon), `c` (a class instance), `t` (our
// tagged external), `x` (napi-rs's External) and `b` (a Buffer)].
const CONTENDERS = [
  ['hand-written callback (raw.rs)', 'p.probeRaw(t, b)'],
  ['#[napi] function', 'p.probeNapi(t, b)'],
  ['#[napi(catch_unwind)] function', 'p.probeNapiCatch(t, b)'],
  ['#[napi] function, raw.rs\'s guard', 'p.probeGuarded(t, b)'],
  ['#[napi] class method', 'c.method(t, b)'],
  ['hand-written + our tagged external', 'p.probeRawTagged(t, b)'],
  ['#[napi], guard + our tagged external', 'p.probeGuardedTagged(t, b)'],
  ['#[napi] + napi-rs &External<T>', 'p.probeNapiExternal(x, b)'],
  ['JS function (the loop alone)', 'j(t, b)']
]

// The shapes of the once-per-body exports: [row, the hand-written call, the `#[napi]` one,
// written as those exports are, calls per loop (fewer where each call makes an object for
// the GC)]. docs/performance.md's table "Once-per-body calls" names these rows.
const SHAPES = [
  ['handle -> null (abort, streamEnd, ...)', 'p.probeRawNull(t)', 'p.probeNapiNull(t)', CALLS],
  ['handle -> Buffer (finish)', 'p.probeRawBuffer(t)', 'p.probeNapiBuffer(t)', CALLS / 20],
  ['handle -> string (finishString)', 'p.probeRawString(t)', 'p.probeNapiString(t)', CALLS / 4],
  ['6 arguments -> new handle (create)', 'p.probeRawCreate(1, 2, 3, \'gzip\', true, 4)', 'p.probeNapiCreate(1, 2, 3, \'gzip\', true, 4)', CALLS / 20]
]

/**
 * A timing loop per contender, each its own function (new Function), so that every call
 * site sees one callee, as a server's call to push does.
 */
function loops (p) {
  const args = { p, c: new p.ProbeClass(), t: p.probeTagged(), x: p.probeExternal(), b: Buffer.alloc(16), j: (a, b) => a !== b }
  const calls = [...CONTENDERS, ...SHAPES.flatMap(([row, raw, napi, n]) => [[`${row}: raw`, raw, n], [`${row}: #[napi]`, napi, n]])]
  return calls.map(([name, call, calls = CALLS]) => {
    // eslint-disable-next-line no-new-func
    const loop = new Function('p', 'c', 't', 'x', 'b', 'j', 'n', `let ok = 0; for (let i = 0; i < n; i++) { const r = ${call}; if (r !== undefined && r !== false) ok++ } return ok`)
    return { name, calls, run: (n) => loop(args.p, args.c, args.t, args.x, args.b, args.j, n) }
  })
}

/** ns per call of `loop`, over its calls. */
function time (loop) {
  const start = process.hrtime.bigint()
  const ok = loop.run(loop.calls)
  const ns = Number(process.hrtime.bigint() - start) / loop.calls
  if (ok !== loop.calls) throw new Error(`${loop.name}: a probe did not answer`)
  return ns
}

/** One run, in this process: per contender the median ns over ROUNDS rounds. */
function run () {
  const list = loops(require(ADDON))
  for (let i = 0; i < 3; i++) for (const loop of list) time(loop) // warm-up: optimised loops
  const seen = list.map(() => [])
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < list.length; k++) {
      const i = (k + r) % list.length
      seen[i].push(time(list[i]))
    }
  }
  const medians = {}
  list.forEach(({ name }, i) => { medians[name] = median(seen[i]) })
  // Paired within the round: against the hand-written callback of the same shape.
  const raw = seen[0]
  list.forEach(({ name }, i) => { medians[`${name} - raw`] = median(seen[i].map((x, r) => x - raw[r])) })
  for (const [row] of SHAPES) {
    const [a, b] = [list.findIndex((l) => l.name === `${row}: raw`), list.findIndex((l) => l.name === `${row}: #[napi]`)]
    medians[`${row}: diff`] = median(seen[b].map((x, r) => x - seen[a][r]))
  }
  return medians
}

/** RUNS runs of `node`, each its own process; the tables of their medians. */
function measure (node) {
  const runs = []
  let version
  for (let i = 0; i < RUNS; i++) {
    const child = spawnSync(node, [__filename, '--run'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    if (child.error) throw new Error(`bench/call-cost.js: cannot run ${node}: ${child.error.message}`)
    if (child.status !== 0) throw new Error(`bench/call-cost.js: ${node} exited with ${child.status}`)
    const out = JSON.parse(child.stdout)
    version = out.version
    runs.push(out.medians)
  }
  const f = (n) => n.toFixed(1)
  const signed = (n) => `${n >= 0 ? '+' : ''}${f(n)}`
  const over = (key) => {
    const xs = runs.map((r) => r[key])
    return { median: median(xs), range: `${f(Math.min(...xs))}-${f(Math.max(...xs))}` }
  }
  const kinds = CONTENDERS.map(([name], i) => {
    const ns = over(name)
    if (i === 0) return [name, f(ns.median), ns.range, '-', '-']
    const diff = over(`${name} - raw`)
    return [name, f(ns.median), ns.range, signed(diff.median), diff.range]
  })
  const shapes = SHAPES.map(([row]) => {
    const [raw, napi, diff] = [over(`${row}: raw`), over(`${row}: #[napi]`), over(`${row}: diff`)]
    return [row, f(raw.median), raw.range, f(napi.median), napi.range, signed(diff.median), diff.range]
  })
  return `Node ${version}, ${RUNS} runs (each its own process) of ${ROUNDS} rounds of ${CALLS} calls per contender (the shapes that make a Buffer, a string or a handle: 1/20, 1/4, 1/20 of that); ns per call, the median of the runs' medians and the runs' range\n` +
    table(['call', 'ns/call', 'runs', 'vs hand-written (paired)', 'runs'], kinds) + '\n\n' +
    table(['once-per-body shape', 'hand-written', 'runs', '#[napi]', 'runs', '#[napi] - hand-written (paired)', 'runs'], shapes)
}

if (require.main === module) {
  if (process.argv[2] === '--run') {
    console.log(JSON.stringify({ version: process.version, medians: run() }))
  } else {
    build()
    const nodes = process.argv.slice(2)
    for (const node of nodes.length === 0 ? [process.execPath] : nodes) console.log(measure(node) + '\n')
  }
}
