'use strict'
const { setImmediate: tick } = require('node:timers/promises')
// Medians and paired ratios: these machines are shared and noisy, so A and B are only
// compared within the same round.

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** Median of per-round ratios a/b and how many rounds a beat b. */
function paired (a, b) {
  const ratios = a.map((x, i) => x / b[i])
  return { ratio: median(ratios), won: ratios.filter((r) => r < 1).length, rounds: ratios.length }
}

function formatTime (seconds) {
  if (seconds < 1e-3) return `${(seconds * 1e6).toFixed(seconds < 1e-5 ? 2 : 1)} us`
  return `${(seconds * 1e3).toFixed(2)} ms`
}

function formatSize (n) {
  if (n >= 1 << 20) return `${n / (1 << 20)} MiB`
  if (n >= 1024) return `${n / 1024} KiB`
  return `${n} B`
}

function table (header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)))
  const line = (cells) => '| ' + cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ') + ' |'
  return [line(header), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...rows.map(line)].join('\n')
}

/**
 * { seconds, calls }: seconds per call of `fn` (which returns something with a length,
 * kept so the work is not optimised away), over at least `budget` seconds and 3 calls. The
 * event loop gets a turn after every call, as in a server, so GC and finalizers are paid
 * inside the time.
 */
async function timePerCall (fn, budget) {
  let n = 0
  let sink = 0
  const start = process.hrtime.bigint()
  let elapsed = 0
  while (elapsed < budget || n < 3) {
    sink += fn().length
    n++
    await tick()
    elapsed = Number(process.hrtime.bigint() - start) / 1e9
  }
  if (sink < 0) console.log(sink)
  return { seconds: elapsed / n, calls: n }
}

module.exports = { median, paired, formatTime, formatSize, table, timePerCall }
