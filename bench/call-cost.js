'use strict'
// What one call into the addon costs, by the kind of export: a hand-written N-API callback
// (src/node/raw.rs's `callback`, as push, streamWrite, streamRead and multipartFeed are), a
// `#[napi]` function, one under `#[napi(catch_unwind)]`, one whose body runs under the same
// guard as raw.rs's (catch_unwind and the memory report: what a `#[napi]` export must do to
// keep the same promises), a class method; and finding the value behind an external, by
// our type tag or by napi-rs's `External<T>`. Each probe takes two arguments and answers
// `true` (src/node/probe.rs, built with `--features call-cost` into target/call-cost).
// Contenders alternate within each round (the order rotates each round), each in its own
// loop; the table gives per contender the median ns per call over the rounds and its
// quartiles, and against the hand-written callback of the same round the median
// difference, the median ratio and the rounds the hand-written callback was faster.
// "JS function" is an empty JS function in the same loop: the loop's own cost.
//   node bench/call-cost.js                 this Node
//   node bench/call-cost.js NODE...         each of these Node binaries in turn, one table
//                                           each (e.g. target/tools/node/linux-x64-24/bin/node,
//                                           from scripts/node-dist.sh 24)
// Prints tables; asserts nothing about time.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { median, table } = require('./stats')

const ROOT = path.join(__dirname, '..')
const TARGET = path.join(ROOT, 'target', 'call-cost')
const ADDON = path.join(TARGET, 'uws-body-call-cost.node')
const ROUNDS = Number(process.env.CALL_COST_ROUNDS) || 21
const CALLS = 200000

/** Builds the probe addon (release, as shipped); without cargo, an earlier build of it. */
function build () {
  const cargo = spawnSync('cargo', ['build', '--release', '--lib', '--features', 'call-cost', '--target-dir', TARGET], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  if (cargo.error && fs.existsSync(ADDON)) return ADDON
  if (cargo.status !== 0) throw new Error('bench/call-cost.js: cargo build --features call-cost failed')
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

/**
 * A timing loop per contender, each its own function (new Function), so that every call
 * site sees one callee, as a server's call to push does.
 */
function loops (p) {
  const args = { p, c: new p.ProbeClass(), t: p.probeTagged(), x: p.probeExternal(), b: Buffer.alloc(16), j: (a, b) => a !== b }
  return CONTENDERS.map(([name, call]) => {
    // eslint-disable-next-line no-new-func
    const loop = new Function('p', 'c', 't', 'x', 'b', 'j', 'n', `let ok = 0; for (let i = 0; i < n; i++) if (${call} === true) ok++; return ok`)
    return { name, run: (n) => loop(args.p, args.c, args.t, args.x, args.b, args.j, n) }
  })
}

/** ns per call of `loop`, over CALLS calls. */
function time (loop) {
  const start = process.hrtime.bigint()
  const ok = loop.run(CALLS)
  const ns = Number(process.hrtime.bigint() - start) / CALLS
  if (ok !== CALLS) throw new Error(`${loop.name}: a probe did not answer true`)
  return ns
}

function measure () {
  const list = loops(require(build()))
  for (let i = 0; i < 3; i++) for (const loop of list) time(loop) // warm-up: optimised loops
  const seen = list.map(() => [])
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < list.length; k++) {
      const i = (k + r) % list.length
      seen[i].push(time(list[i]))
    }
  }
  const quartile = (xs, at) => [...xs].sort((a, b) => a - b)[Math.round(at * (xs.length - 1))]
  const raw = seen[0]
  const rows = list.map(({ name }, i) => {
    const ns = seen[i]
    const spread = `${quartile(ns, 0.25).toFixed(1)}-${quartile(ns, 0.75).toFixed(1)}`
    if (i === 0) return [name, median(ns).toFixed(1), spread, '-', '-', '-']
    const diff = median(ns.map((x, r) => x - raw[r]))
    const ratio = median(ns.map((x, r) => x / raw[r]))
    const rawFaster = ns.filter((x, r) => raw[r] < x).length
    return [name, median(ns).toFixed(1), spread, `${diff >= 0 ? '+' : ''}${diff.toFixed(1)}`, ratio.toFixed(2), `${rawFaster}/${ROUNDS}`]
  })
  return `Node ${process.version}, ${ROUNDS} rounds of ${CALLS} calls per contender\n` +
    table(['call', 'ns/call (median)', 'quartiles', 'vs hand-written (ns, paired)', 'ratio', 'hand-written faster'], rows)
}

if (require.main === module) {
  const nodes = process.argv.slice(2)
  if (nodes.length === 0) {
    console.log(measure())
  } else {
    build()
    for (const node of nodes) {
      const child = spawnSync(node, [__filename], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      if (child.error) throw new Error(`bench/call-cost.js: cannot run ${node}: ${child.error.message}`)
      if (child.status !== 0) throw new Error(`bench/call-cost.js: ${node} exited with ${child.status}`)
      console.log(child.stdout)
    }
  }
}
