'use strict'
// Where a small JSON body's time goes on bare uWS beyond the seed's reader (issue 40), in
// process: bench/server.js's /json routes called on a stand-in for uWS's res and req (no
// socket, no kernel), each with a body that arrives whole in one chunk, as small ones do.
//   seed          the seed's reader (bench/seed.js), answering inside onData
//   seed+promise  the same reader behind a Promise, chained as readText's users chain it
//                 (.then(JSON.parse).then(answer)): what the promise shape alone costs
//   uws           readText(res, req, { limit }).then(JSON.parse).then(answer)
//   uws, no opts  readText(res, req).then(...): the same without reading an options object
// ns per request, median over alternating rounds, and the ratio to the seed (median of
// per-round ratios). A table, never an assertion.
//   node bench/small-route.js [--quick]   SMALL_ROUTE_SIZES=100,1024 (default)
const { readText } = require('..')
const { seedReader, PARSE } = require('./seed')
const { median, paired, table, formatSize } = require('./stats')

const quick = process.argv.includes('--quick')
const SIZES = (process.env.SMALL_ROUTE_SIZES || '100,1024').split(',').map(Number)
const ROUNDS = quick ? 5 : 11
const PER_ROUND = quick ? 10000 : 50000
const OPTIONS = { limit: 1024 * 1024 }

/** uWS's HttpResponse, as far as the routes use it. */
class Res {
  onData (fn) { this.data = fn }
  onAborted (fn) { this.aborted_ = fn }
  cork (fn) { fn() }
  end (body) { this.sent = body }
  writeStatus () { return this }
}

const answer = (res) => (body) => { if (!res.aborted) res.cork(() => res.end(String(body.s.length))) }

const ROUTES = {
  seed: (res, req) => {
    const cl = req.getHeader('content-length')
    res.onAborted(() => { res.aborted = true })
    const reader = seedReader(cl === '' ? -1 : Number(cl), req.getHeader('content-encoding'), OPTIONS.limit)
    res.onData((chunk, isLast) => {
      reader.push(chunk)
      if (isLast) answer(res)(PARSE.json(reader.finish()))
    })
  },
  'seed+promise': (res, req) => {
    new Promise((resolve) => {
      const cl = req.getHeader('content-length')
      res.onAborted(() => { res.aborted = true })
      const reader = seedReader(cl === '' ? -1 : Number(cl), req.getHeader('content-encoding'), OPTIONS.limit)
      res.onData((chunk, isLast) => {
        reader.push(chunk)
        if (isLast) resolve(reader.finish().toString())
      })
    }).then(JSON.parse).then(answer(res), () => {})
  },
  uws: (res, req) => { readText(res, req, OPTIONS).then(JSON.parse).then(answer(res), () => {}) },
  'uws, no opts': (res, req) => { readText(res, req).then(JSON.parse).then(answer(res), () => {}) }
}
const NAMES = Object.keys(ROUTES)

/** `n` requests through `route`; the microtasks run every 64, and the event loop at the end. */
async function batch (route, n, req, chunk) {
  for (let i = 0; i < n; i++) {
    const res = new Res()
    route(res, req)
    // uWS hands each request's bytes in an ArrayBuffer of its own.
    res.data(chunk.slice(0), true)
    if ((i & 63) === 63) await null
  }
  await new Promise((resolve) => setImmediate(resolve))
}

async function main () {
  const rows = []
  for (const size of SIZES) {
    const json = Buffer.from(JSON.stringify({ s: 'x'.repeat(Math.max(0, size - 8)) }))
    const chunk = new Uint8Array(json).buffer
    const headers = { 'content-length': String(json.length), 'content-type': 'application/json' }
    // uWS's getHeader gives '' for a header the request does not have.
    // uws-body passes its keys as bytes (lib/body/header-keys.js), as uWS's getHeader takes them.
    const req = { getHeader: (name) => headers[typeof name === 'string' ? name : Buffer.from(name).toString('latin1')] ?? '' }
    const times = Object.fromEntries(NAMES.map((n) => [n, []]))
    for (const name of NAMES) await batch(ROUTES[name], PER_ROUND / 2, req, chunk)
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of r % 2 ? [...NAMES].reverse() : NAMES) {
        const start = process.hrtime.bigint()
        await batch(ROUTES[name], PER_ROUND, req, chunk)
        times[name].push(Number(process.hrtime.bigint() - start) / PER_ROUND)
      }
    }
    for (const name of NAMES) {
      const vs = paired(times[name], times.seed)
      rows.push([`json ${formatSize(json.length)}`, name, median(times[name]).toFixed(0), vs.ratio.toFixed(2)])
    }
  }
  console.log(`Node ${process.versions.node}, ${ROUNDS} rounds of ${PER_ROUND} requests`)
  console.log(table(['row', 'route', 'ns / request', '/ seed'], rows))
}

main()
