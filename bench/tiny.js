'use strict'
// Per-body cost on tiny bodies, with nothing else around it: bodies read back to back in a
// tight loop. The micro rows yield to the event loop after every body (about 1.2 us here),
// which hides a difference of 10-20 ns between readers under the noise; this loop shows it.
// Contenders alternate within each round; the ratio is the median of per-round ratios.
const { jsPrealloc, uwsBody } = require('./contenders')
const { median, paired, formatSize, table } = require('./stats')

const LIMIT = 128 * 1024 * 1024

// TINY_SIZES=100 runs that row only. Rows run in order, and the sizes seen before shape
// what V8 compiles: 100 B after 0 B is not 100 B alone (run to run, c/b moves by ~3%).
function rows () {
  const out = []
  const only = process.env.TINY_SIZES ? process.env.TINY_SIZES.split(',').map(Number) : [0, 100, 1024]
  for (const size of only) for (const known of [true, false]) out.push({ size, known })
  return out
}

/** Seconds per body over `count` bodies of `chunk`, read one after another. */
function timeLoop (make, chunk, contentLength, count) {
  let sink = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) {
    const reader = make(contentLength, LIMIT)
    reader.push(chunk)
    sink += reader.finish().length
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9 / count
  if (sink < 0) console.log(sink)
  return seconds
}

function run ({ quick = false } = {}) {
  const rounds = quick ? 7 : 21
  const count = quick ? 50000 : 200000
  const results = []
  for (const { size, known } of rows()) {
    const chunk = new ArrayBuffer(size)
    const contentLength = known ? size : -1
    // Warm-up: both contenders optimised before the first timed round.
    for (let i = 0; i < 3; i++) {
      timeLoop(jsPrealloc, chunk, contentLength, count / 4)
      timeLoop(uwsBody, chunk, contentLength, count / 4)
    }
    const times = { b: [], c: [] }
    for (let r = 0; r < rounds; r++) {
      for (const name of r % 2 ? ['c', 'b'] : ['b', 'c']) {
        times[name].push(timeLoop(name === 'b' ? jsPrealloc : uwsBody, chunk, contentLength, count))
      }
    }
    const ratios = times.c.map((c, i) => c / times.b[i]).sort((x, y) => x - y)
    const cb = paired(times.c, times.b)
    results.push({
      size,
      known,
      rounds,
      b: median(times.b),
      c: median(times.c),
      cb: cb.ratio,
      won: cb.won,
      low: ratios[Math.floor(rounds / 4)],
      high: ratios[Math.ceil(3 * rounds / 4) - 1]
    })
  }
  return results
}

const ns = (seconds) => `${(seconds * 1e9).toFixed(1)} ns`

function render (results) {
  return table(['body', 'length known', '(b) JS prealloc', '(c) uws-body', 'c/b', 'c/b middle half', 'c won'],
    results.map((r) => [formatSize(r.size), r.known ? 'yes' : 'no', ns(r.b), ns(r.c), r.cb.toFixed(3),
      `${r.low.toFixed(3)}-${r.high.toFixed(3)}`, `${r.won}/${r.rounds}`]))
}

module.exports = { run, render }

if (require.main === module) {
  console.log(render(run({ quick: process.argv.includes('--quick') })))
}
