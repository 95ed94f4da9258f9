'use strict'
// What the calls made once per process, stream or form cost (stats, setPoolLimit,
// streamCreate, multipartCreate, with the arguments lib/ passes them), in this checkout's
// addon against another build of uws-body (another branch's, say): both are loaded into
// one process, and each round times every call in both, the order alternating each round.
// The table gives per call the median ns over the rounds and its quartiles, for each
// build, then the median of the paired ratios (this / other) and the rounds this build
// was the faster. Handles are dropped; between loops, outside the time, a gc() collects
// them and the event loop gets a turn, in which Node runs their finalizers.
//   node --expose-gc bench/create-cost.js OTHER.node
// OTHER.node: e.g. `cargo build --release --lib` of another checkout, its
// target/release/libuws_body.so copied to a name ending in .node. This checkout's addon
// is the one `npm run build` made. CREATE_COST_ROUNDS (default 21) sets the rounds.
// Prints a table; asserts nothing about time.
const path = require('node:path')
const { setImmediate: tick } = require('node:timers/promises')
const { median, table } = require('./stats')

const ROUNDS = Number(process.env.CREATE_COST_ROUNDS) || 21
const MIB = 1024 * 1024
const MAX = Number.MAX_SAFE_INTEGER
// The numbers lib/multipart/upload.js's create passes for the default limits (protocol's
// FORM slots: fieldSize, fields, fileSize, files, headerPairs, headerSize, preallocate,
// expected, decodedLimit, requested).
const FORM = Float64Array.of(MIB, Infinity, Infinity, Infinity, 2000, 16 * 1024, 0, 65536, MAX, 0)
const TYPE = 'multipart/form-data; boundary=----formdata-undici-0123456789'

// [name, calls per loop, the call, over `n` (an addon)].
const CALLS = [
  ['stats()', 100000, (n) => n.stats()],
  ['setPoolLimit(256 MiB)', 100000, (n) => n.setPoolLimit(256 * MIB)],
  ['streamCreate identity', 10000, (n) => n.streamCreate(-1, MAX, null, true)],
  ['streamCreate gzip', 500, (n) => n.streamCreate(-1, MAX, 'gzip', true)],
  ['multipartCreate', 10000, (n) => n.multipartCreate(TYPE, FORM, null)]
]

/** ns per call of `call` on `addon`, over `count` calls; the handles are collected after. */
async function time (addon, count, call) {
  let kept = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) if (call(addon) !== undefined) kept++
  const ns = Number(process.hrtime.bigint() - start) / count
  if (kept !== count) throw new Error('bench/create-cost.js: a call answered undefined')
  globalThis.gc()
  await tick()
  return ns
}

async function measure (other) {
  if (typeof globalThis.gc !== 'function') throw new Error('bench/create-cost.js: run with node --expose-gc')
  const builds = [require(path.join(__dirname, '..', 'lib', 'native')), require(path.resolve(other))]
  for (const addon of builds) addon.setPoolLimit(256 * MIB)
  for (let i = 0; i < 3; i++) for (const [, count, call] of CALLS) for (const addon of builds) await time(addon, count, call)
  const seen = CALLS.map(() => [[], []])
  for (let r = 0; r < ROUNDS; r++) {
    for (let c = 0; c < CALLS.length; c++) {
      const [, count, call] = CALLS[c]
      for (let k = 0; k < 2; k++) {
        const b = (k + r) % 2
        seen[c][b].push(await time(builds[b], count, call))
      }
    }
  }
  const quartile = (xs, at) => [...xs].sort((a, b) => a - b)[Math.round(at * (xs.length - 1))]
  const spread = (xs) => `${quartile(xs, 0.25).toFixed(0)}-${quartile(xs, 0.75).toFixed(0)}`
  const rows = CALLS.map(([name], c) => {
    const [mine, theirs] = seen[c]
    const ratios = mine.map((x, r) => x / theirs[r])
    return [name, median(mine).toFixed(0), spread(mine), median(theirs).toFixed(0), spread(theirs),
      median(ratios).toFixed(2), `${quartile(ratios, 0.25).toFixed(2)}-${quartile(ratios, 0.75).toFixed(2)}`,
      `${ratios.filter((x) => x < 1).length}/${ROUNDS}`]
  })
  return `Node ${process.version}, ${ROUNDS} rounds, this build against ${other}\n` +
    table(['call', 'this ns', 'quartiles', 'other ns', 'quartiles', 'ratio (paired)', 'quartiles', 'this faster'], rows)
}

if (require.main === module) {
  const other = process.argv[2]
  if (other === undefined) throw new Error('usage: node --expose-gc bench/create-cost.js OTHER.node')
  measure(other).then(console.log)
}
