'use strict'
// npm run bench [-- --quick] [--node 24] [--tune-gc] [--sections micro,tiny,...]
// Micro, text and end-to-end benchmarks on one Node version: prints the tables and writes
// that version's section of bench/RESULTS.md (and bench/results-node<major>.svg); the
// other versions' sections and the streaming section are kept.
//   --node N    runs on Node N (scripts/node-dist.sh fetches it once) instead of this one.
//   --trixie    runs the uWS sections in the Debian 13 root even where uWS loads here (so
//               that every Node version is measured on uWS 20.57).
//   --tune-gc   calls tuneGc() in every benchmark process first (Node 24's opt-in). On
//               Node 24 the micro table is followed by its GC-held rows in the other mode.
// The end-to-end sections need uWS: the installed 20.57 where it loads, the 20.30 fork on
// Node 20 where 20.57 does not (glibc < 2.38), else they run inside the Debian 13 root of
// scripts/trixie.sh (as root), and are skipped with the reason when none of these can.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { chart } = require('./svg')
const { loadableUws } = require('../scripts/test-env/loadable-uws')

const ROOT = path.join(__dirname, '..')
const SECTIONS = ['micro', 'tiny', 'strings', 'decode', 'e2e', 'express', 'memory', 's3']
const UWS_SECTIONS = ['e2e', 'express', 's3']
const NODE_MAJOR = Number(process.versions.node.split('.')[0])

function option (name) {
  const at = process.argv.indexOf(name)
  return at >= 0 ? process.argv[at + 1] : undefined
}

/** Runs this script again on Node `major`, and exits with its status. */
function onNode (major) {
  const found = spawnSync('bash', [path.join(ROOT, 'scripts', 'node-dist.sh'), major], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  if (found.status !== 0) throw new Error(`bench: no Node ${major} (scripts/node-dist.sh ${major} failed)`)
  const args = process.argv.slice(2)
  args.splice(args.indexOf('--node'), 2)
  const run = spawnSync(found.stdout.trim(), [...process.execArgv, __filename, ...args], { stdio: 'inherit' })
  process.exit(run.status === null ? 1 : run.status)
}

/** How the end-to-end sections get uWS: { where: 'here' } (process.env set up for it), 'trixie' or 'none' (why). */
function uwsPlan () {
  const trixie = process.platform === 'linux' && process.getuid && process.getuid() === 0 && !process.argv.includes('--in-trixie')
  if (process.argv.includes('--trixie') && trixie) return { where: 'trixie' }
  const found = loadableUws()
  if (found.env) {
    Object.assign(process.env, found.env)
    return { where: 'here', build: found.build }
  }
  if (trixie) return { where: 'trixie' }
  return { where: 'none', why: `uWS does not load on Node ${process.version} here, and the Debian 13 root needs root` }
}

/** Runs the uWS sections inside scripts/trixie.sh and returns their results. */
function inTrixie (sections, flags) {
  // The Node binary must be one the root can see: the repository is mounted there.
  const node = process.execPath.startsWith(ROOT + path.sep)
    ? process.execPath
    : spawnSync('bash', [path.join(ROOT, 'scripts', 'node-dist.sh'), String(NODE_MAJOR)], { encoding: 'utf8' }).stdout.trim()
  const out = path.join(ROOT, 'target', `bench-uws-${process.pid}.json`)
  fs.mkdirSync(path.dirname(out), { recursive: true })
  const run = spawnSync('bash', [path.join(ROOT, 'scripts', 'trixie.sh'), 'node', '--expose-gc', 'bench/index.js', '--in-trixie', '--sections', sections.join(','), '--json', out, ...flags], {
    stdio: 'inherit', env: { ...process.env, TRIXIE_PATH: `${path.dirname(node)}:/usr/local/bin:/usr/bin:/bin` }
  })
  if (run.status !== 0) throw new Error(`bench: the uWS sections failed in the Debian 13 root (status ${run.status})`)
  const results = JSON.parse(fs.readFileSync(out, 'utf8'))
  fs.rmSync(out)
  return results
}

const MODULES = {
  micro: () => require('./micro'),
  tiny: () => require('./tiny'),
  strings: () => require('./strings'),
  decode: () => require('./decode'),
  e2e: () => require('./e2e'),
  express: () => require('./express'),
  memory: () => require('./memory'),
  s3: () => require('./s3')
}

async function main () {
  const major = option('--node')
  if (major !== undefined && Number(major) !== NODE_MAJOR) return onNode(major)
  const quick = process.argv.includes('--quick')
  const tune = process.argv.includes('--tune-gc')
  const wanted = option('--sections') ? option('--sections').split(',') : SECTIONS
  const json = option('--json')
  if (tune) {
    process.env.UWS_BODY_BENCH_TUNE_GC = '1'
    require('..').tuneGc()
  }
  const started = Date.now()
  const results = {}
  const plan = wanted.some((s) => UWS_SECTIONS.includes(s)) ? uwsPlan() : { where: 'here' }
  for (const section of wanted) {
    if (UWS_SECTIONS.includes(section) && plan.where !== 'here') continue
    console.error(`uws-body bench${quick ? ' (quick)' : ''}, Node ${process.version}${tune ? ', tuneGc()' : ''}: ${section}...`)
    const mod = MODULES[section]()
    results[section] = await mod.run({ quick })
    console.log(`\n## ${section}\n\n${mod.render(results[section])}`)
    if (section === 'micro' && NODE_MAJOR >= 24) {
      // Node 24's GC-held rows in the other mode: with tuneGc() when the run is without it,
      // and without it (Node 24's default) when the run is with it.
      console.error(`micro, GC-held rows ${tune ? 'without' : 'with'} tuneGc()...`)
      const only = process.env.MICRO_SIZES
      process.env.MICRO_SIZES = (only || String([512 * 1024, 4 * 1024 * 1024, 32 * 1024 * 1024, 64 * 1024 * 1024])).split(',').filter((n) => Number(n) >= 512 * 1024).join(',')
      if (tune) delete process.env.UWS_BODY_BENCH_TUNE_GC
      else process.env.UWS_BODY_BENCH_TUNE_GC = '1'
      results.microOther = await mod.run({ quick })
      if (tune) process.env.UWS_BODY_BENCH_TUNE_GC = '1'
      else delete process.env.UWS_BODY_BENCH_TUNE_GC
      if (only === undefined) delete process.env.MICRO_SIZES
      else process.env.MICRO_SIZES = only
      console.log(`\n## micro, GC-held rows ${tune ? 'without' : 'with'} tuneGc()\n\n${mod.render(results.microOther)}`)
    }
  }
  const uwsWanted = wanted.filter((s) => UWS_SECTIONS.includes(s))
  if (uwsWanted.length && plan.where === 'trixie') {
    Object.assign(results, inTrixie(uwsWanted, [...(quick ? ['--quick'] : []), ...(tune ? ['--tune-gc'] : [])]))
  } else if (uwsWanted.length && plan.where === 'none') {
    console.error(`bench: ${uwsWanted.join(', ')} skipped: ${plan.why}`)
  }
  if (json) {
    fs.writeFileSync(json, JSON.stringify(results))
    return
  }
  writeResults(results, { quick, tune, seconds: (Date.now() - started) / 1000, uws: plan, skipped: plan.where === 'none' ? plan.why : null })
}

/** The commit the run measured (git's short hash, marked when the tree had changes). */
function commit () {
  const head = spawnSync('git', ['rev-parse', '--short=10', 'HEAD'], { cwd: ROOT, encoding: 'utf8' })
  if (head.status !== 0) return 'an unknown commit'
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' })
  return `commit ${head.stdout.trim()}${dirty.stdout.trim() !== '' ? ' with uncommitted changes' : ''}`
}

/** This Node version's section of RESULTS.md, between its markers. */
function section (results, { quick, tune, seconds, uws, skipped }) {
  const cpu = os.cpus()
  const render = (name) => MODULES[name]().render(results[name])
  const has = (name) => results[name] !== undefined
  const parts = [`## Node ${process.version}${tune ? ', with tuneGc()' : ''}

Produced by \`npm run bench --${quick ? ' --quick' : ''} --node ${NODE_MAJOR}${tune ? ' --tune-gc' : ''}${process.argv.includes('--trixie') ? ' --trixie' : ''}\` at ${commit()} on ${new Date().toISOString().slice(0, 10)}, in ${seconds.toFixed(0)} s.
Machine: ${cpu.length} x ${cpu[0] && cpu[0].model}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}. Shared and noisy.${uws.build ? ` End to end on ${uws.build}.` : uws.where === 'trixie' ? ' End to end on uWS 20.57 in the Debian 13 root (scripts/trixie.sh).' : ''}${skipped ? ` End to end not run: ${skipped}.` : ''}`]
  if (has('micro')) {
    parts.push(`![time per body](results-node${NODE_MAJOR}.svg)\n\n### Micro: time per body\n\n${render('micro')}`)
  }
  if (results.microOther) {
    parts.push(tune
      ? `### Micro, the GC-held rows without tuneGc() (Node 24's default)\n\n${MODULES.micro().render(results.microOther)}`
      : `### Micro, the GC-held rows with tuneGc()\n\nThe same rows, every process having called tuneGc() first (README, "Garbage collection").\n\n${MODULES.micro().render(results.microOther)}`)
  }
  if (has('tiny')) {
    parts.push(`### Tiny bodies: per-body cost, bodies back to back

The micro rows' turn of the event loop after every body costs more than the difference
between readers on a tiny body, so here bodies are read back to back, one chunk each
(bench/tiny.js): (b) against (c), alternating, c/b the median of per-round ratios, with the
middle half of the rounds.

${render('tiny')}`)
  }
  if (has('strings')) parts.push(`### Text bodies: finishString vs memcpy + toString from a warm Buffer\n\n${render('strings')}`)
  if (has('decode')) {
    parts.push(`### Encoded bodies: decoding inside push() vs Node's zlib

JSON-like text (~8x smaller encoded) delivered in 65483 B ArrayBuffers. Node one-shot is
zlib's sync decode of the body already in one Buffer (its concatenation not counted); (a)
is today's code: copy each chunk, Buffer.concat, then the one-shot decode. The decoded
sizes are exact powers of two, the worst case for uws-body's doubling growth (the buffer
is full when the decoder reports the stream's end, so it grows once more).

${render('decode')}`)
  }
  if (has('e2e')) {
    parts.push(`### End to end: server CPU per request / req/s

One bare uWS server per contender (bench/server.js, bench/hyper-express-server.js), driven
in turn by bench/load.js; rounds alternate the order. The seed's reader is ultimate-express
PR #369's (bench/seed.js); uws-body / seed is the median of per-round ratios of server CPU
per request with their range (below 1: uws-body used less), and the rounds uws-body won.
Peak RSS is each server's VmHWM over the row. (a)-(e) read raw bodies only.

${render('e2e')}`)
  }
  if (has('express')) {
    parts.push(`### ultimate-express: built-in parsers vs uws-body's, Express + body-parser, hyper-express

Seven servers (bench/express-server.js, bench/hyper-express-server.js), one per contender,
each in its own process and driven in turn by bench/load.js; rounds alternate the order.
The seed's reader is ultimate-express PR #369's (bench/seed.js), one middleware per route:
uws-body / seed is the median of per-round ratios of server CPU per request with their
range (below 1: uws-body used less) and the rounds uws-body won; peak RSS is each server's
VmHWM over the row.
Speed-up is the median of per-round ratios of server CPU per request, built-in / uws-body
(above 1: uws-body is faster). The ceiling is built-in / an ultimate-express server whose
middleware only counts the body's bytes: the speed-up a body reader and parser that cost
nothing would reach, since the framework's own cost per request is in both (JSON.parse
and the form's parse are not in it). The row's floor is what no reader avoids: for raw
rows a server that counts the bytes and copies them once into memory faulted in but out
of cache (a 128 MiB ring, nothing for V8 to collect), for parsed rows the count-only
server's CPU plus the parse (JSON.parse, querystring.parse, the text's toString, gunzip)
timed alone on the same body; uws-body / floor is the median of per-round ratios, with
their range. uws-body's collections are per 1000 requests. The last column is uws-body / hyper-express 6.17's own
readers (below 1: uws-body used less), framework against framework, so on small bodies it
is mostly ultimate-express's per-request cost against hyper-express's. hyper-express does
not decode content-encoding, so it sits out the gzip row. Each route answers with the
body's length or key count.

${render('express')}`)
  }
  if (has('memory')) {
    parts.push(`### Memory: 64 concurrent 8 MiB uploads, peak RSS growth over bytes held

Each contender in a fresh process; chunks of 65483 B interleaved across the uploads. uws-body
runs with the default pool bound (256 MiB), of which blocks left behind by growth may take a
quarter: that is most of its excess over the bytes held.

${render('memory')}`)
  }
  if (has('s3')) {
    parts.push(`### Uploads to S3: server CPU per GiB and peak RSS

bench/s3.js (\`npm run bench:s3\`): multer-s3 3 over @aws-sdk/lib-storage into garage on
127.0.0.1, each server in its own process, contenders alternating within each round; CPU is
the server's process.cpuUsage over the upload, peak RSS its VmHWM over its RSS just before.
Most of the CPU is the SDK's (it signs and checksums every part), the same for every
contender.

${render('s3')}`)
  }
  return parts.join('\n\n')
}

const HEADER = `# Benchmark results

One section per Node version, each written by \`npm run bench -- --node <version>\`; on Node 24
the GC-held micro rows are given with and without \`tuneGc()\` (README, "Garbage collection").

Method: contenders run in alternating order within each round; tables give medians over rounds
and, for ratios, the median of per-round ratios with the rounds won or their quartiles.
Micro rows yield to the event loop after every body, as a server does, so GC and external-
buffer finalizers are inside the timings; each contender runs in a process of its own (one
body reader per process, as in a server), and uws-body's garbage collections are counted per
1000 bodies. End to end: a uWS server on 127.0.0.1 in a child process, driven by
bench/load.js; CPU/req is the server's process.cpuUsage per request (the steadier figure).

Contenders: (a) copy every chunk + Buffer.concat; (b) JS preallocation
(allocUnsafe + set up to 1 MiB, (a) with its single-chunk shortcut above); (c) uws-body
(BodyAccumulator; its memory returns to the pool when V8 collects the Buffer); (d) the floor:
one warm memcpy into an existing buffer (end to end: counting bytes only); micro only, (f) the
floor for a body its program keeps until V8 collects it: one memcpy into memory already
faulted in but out of cache (buffers rotating through 128 MiB); end to end only, (e)
hyper-express 6.17's \`await req.buffer()\`, in a server process of its own: a framework
against bare handlers, so on small bodies the gap is mostly its per-request work.`

function writeResults (results, info) {
  if (results.micro) {
    // The chart: known length, chunked as loopback delivers it (one chunk up to 64 KiB).
    const curve = results.micro.filter((r) => r.known && (r.size <= 64 * 1024 ? r.chunks === 1 : r.chunks === Math.ceil(r.size / 65483)))
    fs.writeFileSync(path.join(__dirname, `results-node${NODE_MAJOR}.svg`), chart(curve, `Time per body, known length, 65483 B chunks, Node ${process.version} (median of paired rounds)`))
  }
  const file = path.join(__dirname, 'RESULTS.md')
  const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  const marker = (major, end) => `<!-- bench: node ${major}${end ? ' end' : ''} -->`
  const kept = {}
  for (const [, major, body] of previous.matchAll(/<!-- bench: node (\d+) -->\n([\s\S]*?)\n<!-- bench: node \1 end -->/g)) kept[major] = body
  kept[NODE_MAJOR] = section(results, info)
  // The streaming section (`npm run bench:stream`, pasted last) is kept as it is.
  const streaming = previous.indexOf('\n## Streaming')
  const body = Object.keys(kept).sort((a, b) => a - b).map((major) => `${marker(major)}\n${kept[major]}\n${marker(major, true)}`).join('\n\n')
  fs.writeFileSync(file, `${HEADER}\n\n${body}\n${streaming >= 0 ? previous.slice(streaming) : ''}`)
  console.error(`wrote bench/RESULTS.md (Node ${NODE_MAJOR}) and bench/results-node${NODE_MAJOR}.svg in ${info.seconds.toFixed(0)} s`)
}

main().catch((err) => { console.error(err); process.exit(1) })
