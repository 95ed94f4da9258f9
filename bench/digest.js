'use strict'
// Digest in the copy pass (issue 42) against reading the body and then hashing it: time
// per body, in process, chunks as uWS hands them (512 KiB ArrayBuffers), for
//   copy pass      BodyAccumulator({ digest: ['sha256'] }): push, finish, acc.digests
//   hash after     BodyAccumulator(): push, finish, then node:crypto's
//                  createHash('sha256').update(body).digest()
//   no digest      BodyAccumulator(): push, finish (what a body without a digest costs)
// Rounds alternate the contenders' order; ratios are per round (bench/stats.js). A table,
// never an assertion.
//   node bench/digest.js [--quick]   DIGEST_SIZES=1024,67108864 runs those sizes only.
const crypto = require('node:crypto')
const { BodyAccumulator } = require('..')
const { median, paired, formatTime, formatSize, table, timePerCall } = require('./stats')

const KIB = 1024
const MIB = 1024 * KIB
const CHUNK = 512 * KIB

const quick = process.argv.includes('--quick')
const SIZES = process.env.DIGEST_SIZES
  ? process.env.DIGEST_SIZES.split(',').map(Number)
  : [KIB, 16 * KIB, 64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 64 * MIB]
const ROUNDS = quick ? 3 : 7
const BUDGET = quick ? 0.15 : 0.4

function chunksOf (size) {
  const out = []
  for (let at = 0; at < size; at += CHUNK) {
    const ab = new ArrayBuffer(Math.min(CHUNK, size - at))
    crypto.randomFillSync(new Uint8Array(ab))
    out.push(ab)
  }
  return out
}

function read (chunks, size, options) {
  const acc = new BodyAccumulator({ limit: 128 * MIB, contentLength: String(size), ...options })
  for (const chunk of chunks) acc.push(chunk)
  return acc
}

const CONTENDERS = {
  'copy pass': (chunks, size) => {
    const acc = read(chunks, size, { digest: ['sha256'] })
    const body = acc.finish()
    return acc.digests.sha256.length === 32 ? body : null
  },
  'hash after': (chunks, size) => {
    const body = read(chunks, size).finish()
    return crypto.createHash('sha256').update(body).digest().length === 32 ? body : null
  },
  'no digest': (chunks, size) => read(chunks, size).finish()
}

async function main () {
  const names = Object.keys(CONTENDERS)
  const rows = []
  for (const size of SIZES) {
    const chunks = chunksOf(size)
    const times = Object.fromEntries(names.map((n) => [n, []]))
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...names].reverse() : names
      for (const name of order) {
        const { seconds } = await timePerCall(() => CONTENDERS[name](chunks, size), BUDGET)
        times[name].push(seconds)
      }
    }
    const vsAfter = paired(times['copy pass'], times['hash after'])
    const spread = (xs) => `${formatTime(Math.min(...xs))}-${formatTime(Math.max(...xs))}`
    const gbps = (s) => (size / s / 1e9).toFixed(2)
    rows.push([
      formatSize(size),
      formatTime(median(times['copy pass'])),
      formatTime(median(times['hash after'])),
      formatTime(median(times['no digest'])),
      `${vsAfter.ratio.toFixed(2)} (${vsAfter.won}/${vsAfter.rounds})`,
      gbps(median(times['copy pass'])),
      spread(times['copy pass'])
    ])
  }
  console.log(`Node ${process.versions.node}, ${ROUNDS} rounds, ${formatSize(CHUNK)} chunks, sha256`)
  console.log(table(['size', 'copy pass', 'hash after', 'no digest', 'copy pass / hash after (rounds won)', 'copy pass GB/s', 'copy pass spread'], rows))
}

main()
