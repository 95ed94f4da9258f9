'use strict'
// Uploads to S3-compatible object storage (garage on 127.0.0.1, a fresh single node per
// round): a 1 GiB file, and 100 files of 10 MiB in one form, through
//   uEx + uws-body multipart() + multer-s3   (ours-uex)
//   Express 5 + multer + multer-s3           (multer-express)
//   bare uWS + readMultipart + lib-storage   (read-uws, examples/s3.js)
// each server in its own process (__test__/helpers/s3-server.js), contenders alternating
// within each round: server CPU per GiB (process.cpuUsage) and peak RSS over the RSS
// before the upload (the kernel's VmHWM); medians, the spread over rounds, and paired
// ratios (multer's CPU / uws-body's in the same round, and the rounds uws-body used less).
// The client sends chunked: the uWS 20.30 fork resets a content-length of 10^9 or more.
// `node bench/s3.js [--quick]` (npm run bench:s3): tables only, nothing asserted.
const { findGarage, startGarage, emptyBucket } = require('../__test__/helpers/garage')
const { sendForm, startUploadServer, MIB } = require('../__test__/helpers/s3-load')
const { median, paired, table } = require('./stats')
const { useLoadableUws } = require('../scripts/test-env/loadable-uws')

const GIB = 1024 * MIB
const KINDS = ['ours-uex', 'multer-express', 'read-uws']
const NAMES = { 'ours-uex': 'uEx + multipart() + multer-s3', 'multer-express': 'Express + multer + multer-s3', 'read-uws': 'uWS + readMultipart + lib-storage' }
const CASES = [
  ['1 GiB file', [{ name: 'f', filename: 'big.bin', size: GIB, seed: 1 }]],
  ['100 x 10 MiB files', Array.from({ length: 100 }, (_, i) => ({ name: 'files', filename: `f${i}.bin`, size: 10 * MIB, seed: 100 + i }))]
]

const spread = (xs, digits) => `${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`

/** One upload through a fresh server for `kind`: { cpuPerGiB (s), rssGrowth (MiB), seconds }. */
async function once (garage, kind, files, id) {
  const server = await startUploadServer(kind, { endpoint: garage.endpoint, bucket: garage.bucket, credentials: garage.credentials })
  try {
    const warm = await sendForm(server.port, '/up/warm', [{ name: 'f', filename: 'w.bin', size: 6 * MIB, seed: 9 }])
    if (warm.status !== 200) throw new Error(`${kind}: ${warm.body}`)
    const before = await server.reset()
    const started = Date.now()
    const r = await sendForm(server.port, `/up/${id}`, files, { chunked: true })
    const seconds = (Date.now() - started) / 1000
    const stats = await server.stats()
    if (r.status !== 200) throw new Error(`${kind}: ${r.status} ${r.body}`)
    const bytes = files.reduce((n, f) => n + f.size, 0)
    return { cpuPerGiB: stats.cpuMicros / 1e6 / (bytes / GIB), rssGrowth: (stats.peakRss - before.rss) / MIB, seconds }
  } finally {
    await server.stop()
  }
}

async function run ({ quick = false } = {}) {
  const found = findGarage()
  if (!found.bin) return { skipped: found.why }
  const rounds = quick ? 2 : 5
  const results = []
  for (const [name, files] of CASES) {
    const row = { name, rounds, cpu: {}, rss: {}, seconds: {} }
    for (const k of KINDS) { row.cpu[k] = []; row.rss[k] = []; row.seconds[k] = [] }
    for (let r = 0; r < rounds; r++) {
      // A fresh store each round: garage frees deleted blocks only minutes later.
      const garage = await startGarage()
      const client = garage.client()
      try {
        const order = r % 2 ? [...KINDS].reverse() : KINDS
        for (const kind of order) {
          const m = await once(garage, kind, files, `${r}`)
          row.cpu[kind].push(m.cpuPerGiB)
          row.rss[kind].push(m.rssGrowth)
          row.seconds[kind].push(m.seconds)
          await emptyBucket(client, garage.bucket)
        }
      } finally {
        client.destroy()
        await garage.stop()
      }
      if (require.main === module) console.error(`${name}: round ${r + 1}/${rounds}`)
    }
    row.vsMulter = paired(row.cpu['multer-express'], row.cpu['ours-uex'])
    row.readVsMulter = paired(row.cpu['multer-express'], row.cpu['read-uws'])
    results.push(row)
  }
  return { garage: found.version, results }
}

function render (out) {
  if (out.skipped) return `Not run: ${out.skipped}.`
  const rows = []
  for (const r of out.results) {
    for (const k of KINDS) {
      const gib = r.name.startsWith('1 GiB') ? 1 : 100 * 10 / 1024
      const mibps = r.seconds[k].map((s) => gib * 1024 / s)
      const ratio = k === 'ours-uex' ? r.vsMulter : k === 'read-uws' ? r.readVsMulter : null
      rows.push([
        r.name,
        NAMES[k],
        `${median(r.cpu[k]).toFixed(2)} s (${spread(r.cpu[k], 2)})`,
        `${median(r.rss[k]).toFixed(1)} MiB (${spread(r.rss[k], 1)})`,
        `${median(mibps).toFixed(0)} MiB/s`,
        // paired() counts the rounds its first argument (multer) used less.
        ratio === null ? '' : `${ratio.ratio.toFixed(2)}x (${ratio.rounds - ratio.won}/${ratio.rounds})`
      ])
    }
  }
  return `garage ${out.garage}, one node on 127.0.0.1 (LMDB metadata, no compression), a fresh one per round; ${out.results[0].rounds} rounds.\n\n` + table(
    ['upload', 'server', 'CPU / GiB, median (min-max)', 'peak RSS − before, median (min-max)', 'throughput', 'multer CPU / this (rounds this used less)'],
    rows
  )
}

module.exports = { run, render }

if (require.main === module) {
  console.log(`Node ${process.version}, ${useLoadableUws()}`)
  run({ quick: process.argv.includes('--quick') }).then((r) => console.log(render(r)))
}
