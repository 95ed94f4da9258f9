'use strict'
// npm run bench [-- --quick]: micro, text and end-to-end benchmarks; prints the tables
// and writes bench/RESULTS.md and bench/results.svg.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const micro = require('./micro')
const tiny = require('./tiny')
const strings = require('./strings')
const decode = require('./decode')
const frameworks = require('./express')
const e2e = require('./e2e')
const memory = require('./memory')
const s3 = require('./s3')
const { chart } = require('./svg')

async function main () {
  const quick = process.argv.includes('--quick')
  const started = Date.now()
  console.error(`uws-body bench${quick ? ' (quick)' : ''}: micro...`)
  const m = await micro.run({ quick })
  console.log('\n## Micro: time per body\n\n' + micro.render(m))
  console.error('tiny bodies...')
  const t = tiny.run({ quick })
  console.log('\n## Tiny bodies: per-body cost\n\n' + tiny.render(t))
  console.error('text bodies...')
  const s = await strings.run({ quick })
  console.log('\n## Text bodies\n\n' + strings.render(s))
  console.error('encoded bodies...')
  const dec = await decode.run({ quick })
  console.log('\n## Encoded bodies\n\n' + decode.render(dec))
  console.error('end to end...')
  const e = await e2e.run({ quick })
  console.log('\n## End to end\n\n' + e2e.render(e))
  console.error('ultimate-express / Express...')
  const fw = await frameworks.run({ quick })
  console.log('\n## ultimate-express parsers\n\n' + frameworks.render(fw))
  console.error('memory...')
  const mem = await memory.run()
  console.log('\n## Memory: 64 concurrent 8 MiB uploads\n\n' + memory.render(mem))
  console.error('S3 uploads (garage)...')
  const up = await s3.run({ quick })
  console.log('\n## Uploads to S3\n\n' + s3.render(up))

  // The chart: known length, chunked as loopback delivers it (one chunk up to 64 KiB).
  const curve = m.filter((r) => r.known && (r.size <= 64 * 1024 ? r.chunks === 1 : r.chunks === Math.ceil(r.size / 65483)))
  fs.writeFileSync(path.join(__dirname, 'results.svg'), chart(curve, 'Time per body, known length, 65483 B chunks (median of paired rounds)'))
  const cpu = os.cpus()
  const md = `# Benchmark results

Produced by \`npm run bench${quick ? ' -- --quick' : ''}\` on ${new Date().toISOString().slice(0, 10)}, in ${((Date.now() - started) / 1000).toFixed(0)} s.
Machine: ${cpu.length} x ${cpu[0] && cpu[0].model}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}. Shared and noisy.

Method: contenders run in alternating order within each round; tables give medians over rounds
and, for ratios, the median of per-round ratios with the rounds won. Micro rows yield to the
event loop after every body, as a server does, so GC and external-buffer finalizers are
inside the timings. End to end: a uWS server on 127.0.0.1 in a child process, driven by
bench/load.js; CPU/req is the server's process.cpuUsage per request (the steadier figure).

Contenders: (a) copy every chunk + Buffer.concat; (b) the seed's JS preallocation
(allocUnsafe + set up to 1 MiB, (a) with its single-chunk shortcut above); (c) uws-body
(BodyAccumulator; its memory returns to the pool when V8 collects the Buffer); (d) the floor: one warm memcpy into an existing buffer
(end to end: counting bytes only); micro only, (f) the floor for a body its program keeps
until V8 collects it: one memcpy into memory already faulted in but out of cache (buffers
rotating through 64 MiB, about two of V8's scavenge cycles here); end to end only, (e) hyper-express 6.17's \`await req.buffer()\`, in a
server process of its own: a framework against bare handlers, so on small bodies the gap is
mostly its per-request work.

![time per body](results.svg)

## Micro: time per body

${micro.render(m)}

## Tiny bodies: per-body cost, bodies back to back

The micro rows' turn of the event loop after every body costs more than the difference
between readers on a tiny body, so here bodies are read back to back, one chunk each
(bench/tiny.js): (b) against (c), alternating, c/b the median of per-round ratios, with the
middle half of the rounds.

${tiny.render(t)}

## Text bodies: finishString vs memcpy + toString from a warm Buffer

${strings.render(s)}

## Encoded bodies: decoding inside push() vs Node's zlib

JSON-like text (~8x smaller encoded) delivered in 65483 B ArrayBuffers. Node one-shot is
zlib's sync decode of the body already in one Buffer (its concatenation not counted); (a)
is today's code: copy each chunk, Buffer.concat, then the one-shot decode. The decoded
sizes are exact powers of two, the worst case for uws-body's doubling growth (the buffer
is full when the decoder reports the stream's end, so it grows once more).

${decode.render(dec)}

## End to end: server CPU per request / req/s

${e2e.render(e)}

## ultimate-express: built-in parsers vs uws-body's, Express + body-parser, hyper-express

Four servers (bench/express-server.js, bench/hyper-express-server.js), one per contender,
each in its own process and driven in turn by bench/load.js; rounds alternate the order.
Speed-up is the median of per-round ratios of server CPU per request, built-in / uws-body
(above 1: uws-body is faster); the last column is uws-body / hyper-express 6.17's own
readers (below 1: uws-body used less), framework against framework, so on small bodies it
is mostly ultimate-express's per-request cost against hyper-express's. hyper-express does
not decode content-encoding, so it sits out the gzip row. Each route answers with the
body's length or key count.

${frameworks.render(fw)}

## Memory: 64 concurrent 8 MiB uploads, peak RSS growth over bytes held

Each contender in a fresh process; chunks of 65483 B interleaved across the uploads. uws-body
runs with the default pool bound (256 MiB), of which blocks left behind by growth may take a
quarter: that is most of its excess over the bytes held.

${memory.render(mem)}

## Uploads to S3: server CPU per GiB and peak RSS

bench/s3.js (\`npm run bench:s3\`): multer-s3 3 over @aws-sdk/lib-storage into garage on
127.0.0.1, each server in its own process, contenders alternating within each round; CPU is
the server's process.cpuUsage over the upload, peak RSS its VmHWM over its RSS just before.
Most of the CPU is the SDK's (it signs and checksums every part), the same for every
contender.

${s3.render(up)}
`
  // The streaming section (`npm run bench:stream`, pasted last) is kept as it is.
  const file = path.join(__dirname, 'RESULTS.md')
  const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  const streaming = previous.indexOf('\n## Streaming')
  fs.writeFileSync(file, streaming >= 0 ? md + previous.slice(streaming) : md)
  console.error(`wrote bench/RESULTS.md and bench/results.svg in ${((Date.now() - started) / 1000).toFixed(0)} s`)
}

main().catch((err) => { console.error(err); process.exit(1) })
