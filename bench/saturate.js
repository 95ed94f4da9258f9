'use strict'
// The in-server bench that saturates the server: wrk (not a Node client) drives one server
// process per contender, each pinned to the last core, wrk and this process on the others,
// at 16 connections or more, so the server never waits for its load. bench/load.js's 4
// connections from Node leave the server idle part of the time and hide a per-request gap.
//   npm run bench:saturate -- [--node 20|24|20,24] [--trixie] [--framework uex|bare|both]
//     [--rows 'json 100 B,raw 64 KiB'] [--rounds N] [--seconds D] [--connections C]
//     [--form auto|call|compiled|both] [--seed-parser] [--quick]
// Contenders, under ultimate-express (bench/saturate/server-uex.js) and on bare uWS
// (server-bare.js): the built-ins, uws-body, count-only (no reader) and the seed (ultimate-
// express PR #369's reader, as a middleware or on onData); --seed-parser adds, under
// ultimate-express, the built-ins with only their reading replaced by the PR's (what the
// rest of their parser costs). --form picks uws-body's form on bare uWS (SATURATE_FORM too):
// a fresh options literal per call, or bodyReader() compiled per route (auto: compiled
// where uws-body has it; both: each, as two contenders).
// Method: every contender's server starts at once; each row gets a 2 s warm-up per contender,
// not counted, then N rounds (at least 5) of D s per contender, the order rotated by one
// every round. The figure is the server's CPU per request: its utime+stime (/proc/PID/stat)
// over the requests wrk completed; a run counts only if bench/saturate/post.lua checked
// every answer. Ratios are paired by round. GCs come from each server's --trace-gc output,
// over the measured runs only. Tables are printed as markdown; nothing is asserted.
// Where uWS does not load (Node 24 on an old glibc), or with --trixie, it runs inside the
// Debian 13 root (scripts/trixie.sh, uWS 20.57), wrk installed there when missing.
const { spawn, spawnSync, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { median, table } = require('./stats')
const { loadableUws } = require('../scripts/test-env/loadable-uws')

const ROOT = path.join(__dirname, '..')
const DIR = path.join(__dirname, 'saturate')
const KIB = 1024
const ROWS = [
  ['json 100 B', 'json', 100], ['json 1 KiB', 'json', KIB], ['json 16 KiB', 'json', 16 * KIB],
  ['urlencoded 2 KiB', 'urlencoded', 2 * KIB],
  ['raw 4 KiB', 'raw', 4 * KIB], ['raw 64 KiB', 'raw', 64 * KIB], ['raw 512 KiB', 'raw', 512 * KIB], ['raw 4 MiB', 'raw', 4096 * KIB]
]
const QUICK_ROWS = ['json 100 B', 'raw 64 KiB']
const FRAMEWORKS = { uex: 'server-uex.js', bare: 'server-bare.js' }
const NAMES = { builtin: 'built-ins', uws: 'uws-body', 'uws-call': 'uws-body per call', count: 'count-only', seed: 'seed', 'seed-parser': 'seed in uEx parser' }

const argv = process.argv.slice(2)
const option = (name) => { const at = argv.indexOf(name); return at < 0 ? undefined : argv[at + 1] }
const without = (name, withValue) => {
  const at = argv.indexOf(name)
  return at < 0 ? argv : [...argv.slice(0, at), ...argv.slice(at + (withValue ? 2 : 1))]
}

function options () {
  const quick = argv.includes('--quick')
  const int = (name, fallback) => {
    const v = option(name) === undefined ? fallback : Number(option(name))
    if (!Number.isInteger(v) || v < 1) throw new Error(`bench:saturate: ${name} takes a whole number above 0 (wrk's -d counts whole seconds)`)
    return v
  }
  const o = {
    quick,
    rounds: int('--rounds', quick ? 2 : 5),
    seconds: int('--seconds', quick ? 1 : 2),
    warmup: quick ? 1 : 2,
    connections: int('--connections', 16),
    frameworks: (option('--framework') || 'both') === 'both' ? ['uex', 'bare'] : [option('--framework')],
    rows: option('--rows') ? option('--rows').split(',').map((s) => s.trim()) : quick ? QUICK_ROWS : ROWS.map(([n]) => n),
    form: option('--form') || process.env.SATURATE_FORM || 'auto',
    seedParser: argv.includes('--seed-parser')
  }
  if (o.rounds < 5 && !quick) throw new Error('bench:saturate: at least 5 rounds (fewer only with --quick, as a check)')
  if (o.connections < 16) throw new Error('bench:saturate: 16 connections or more (fewer do not saturate the server)')
  for (const f of o.frameworks) if (!FRAMEWORKS[f]) throw new Error(`bench:saturate: no framework ${f} (uex, bare, both)`)
  for (const r of o.rows) if (!ROWS.some(([n]) => n === r)) throw new Error(`bench:saturate: no row "${r}" (${ROWS.map(([n]) => n).join(', ')})`)
  if (!['auto', 'call', 'compiled', 'both'].includes(o.form)) throw new Error(`bench:saturate: no form ${o.form} (auto, call, compiled, both)`)
  return o
}

/** --node 20,24: this script again on each Node (scripts/node-dist.sh), one after the other. */
function onNodes (majors) {
  let status = 0
  for (const major of majors) {
    const found = spawnSync('bash', [path.join(ROOT, 'scripts', 'node-dist.sh'), major], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    if (found.status !== 0) throw new Error(`bench:saturate: no Node ${major} (scripts/node-dist.sh ${major} failed)`)
    const run = spawnSync(found.stdout.trim(), [__filename, ...without('--node', true)], { stdio: 'inherit' })
    if (run.status !== 0) status = run.status === null ? 1 : run.status
  }
  process.exit(status)
}

/** This script inside the Debian 13 root, on this Node (a binary under the repository, which the root sees). */
function inTrixie () {
  const node = process.execPath.startsWith(ROOT + path.sep)
    ? process.execPath
    : spawnSync('bash', [path.join(ROOT, 'scripts', 'node-dist.sh'), process.versions.node.split('.')[0]], { encoding: 'utf8' }).stdout.trim()
  // trixie.sh passes no environment: the form goes as an argument.
  const args = [...without('--form', true), '--form', options().form, '--in-trixie']
  const run = spawnSync('bash', [path.join(ROOT, 'scripts', 'trixie.sh'), 'node', 'bench/saturate.js', ...args], {
    stdio: 'inherit', env: { ...process.env, TRIXIE_PATH: `${path.dirname(node)}:/usr/local/bin:/usr/bin:/bin` }
  })
  process.exit(run.status === null ? 1 : run.status)
}

/** wrk's path; Debian's package is installed when it is missing and this is root. */
function wrk () {
  const which = () => spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).stdout.trim()
  if (which()) return which()
  if (process.getuid && process.getuid() === 0) {
    const env = { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin`, DEBIAN_FRONTEND: 'noninteractive' }
    console.error('bench:saturate: installing wrk (apt-get install -y wrk)...')
    let run = spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
    if (run.status !== 0) {
      spawnSync('apt-get', ['update', '-qq'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
      run = spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
    }
    if (which()) return which()
  }
  throw new Error('bench:saturate: needs wrk (Debian: apt-get install -y wrk)')
}

const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100
/** A process's utime+stime in microseconds, all its threads. */
function cpuMicros (pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 1e6 / TICK
}

/** The GCs in a server's --trace-gc log between two offsets: young, full, main-thread pause (ms). */
function gcBetween (log, from, to) {
  const buf = Buffer.alloc(to - from)
  const fd = fs.openSync(log, 'r')
  try { fs.readSync(fd, buf, 0, buf.length, from) } finally { fs.closeSync(fd) }
  const gc = { young: 0, full: 0, pauseMs: 0 }
  for (const line of buf.toString('latin1').split('\n')) {
    const young = /: (Scavenge|Minor Mark-Sweep)\b/.test(line)
    const full = !young && /: Mark-Compact\b/.test(line)
    if (!young && !full) continue
    gc[young ? 'young' : 'full']++
    const pause = /MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \//.exec(line)
    if (pause) gc.pauseMs += Number(pause[1])
  }
  return gc
}

async function startServer (framework, key, form, core, logDir) {
  const log = path.join(logDir, `${framework}-${key}.log`)
  const out = fs.openSync(log, 'w')
  const kind = key === 'uws-call' ? 'uws' : key
  const args = ['-c', core, process.execPath, '--trace-gc', path.join(DIR, FRAMEWORKS[framework]), kind, key === 'uws-call' ? 'call' : form]
  const child = spawn('taskset', args, { stdio: ['ignore', out, 'inherit', 'ipc'] })
  fs.closeSync(out)
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench:saturate: ${framework} ${key} did not listen in 60 s`)), 60000)
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`bench:saturate: ${framework} ${key} ended before listening: ${signal || `exit ${code}`}`)) })
    child.once('message', (m) => { clearTimeout(timer); resolve(m) })
  })
  child.removeAllListeners('exit')
  return { key, child, pid: child.pid, log, ...ready }
}

/** One wrk run against a server: { requests, seconds, cpu (us), gc, counted, why }. */
function run (server, row, seconds, o, cores) {
  const [, kind, size] = ROWS.find(([n]) => n === row)
  const at = fs.statSync(server.log).size
  const before = cpuMicros(server.pid)
  const r = spawnSync('taskset', ['-c', cores, o.wrk, '-t1', `-c${o.connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', path.join(DIR, 'post.lua'), `http://127.0.0.1:${server.port}/${kind}`], {
    encoding: 'utf8', env: { ...process.env, BODY_KIND: kind, BODY_SIZE: String(size) }, timeout: (seconds + 60) * 1000
  })
  const cpu = cpuMicros(server.pid) - before
  const gc = gcBetween(server.log, at, fs.statSync(server.log).size)
  const out = `${r.stdout || ''}${r.stderr || ''}`
  const done = /(\d+) requests in ([\d.]+)(us|ms|s|m)\b/.exec(out)
  const check = /CHECK ok=(\d+) bad=(\d+) expect=(\S*) firstbad=(.*)/.exec(out)
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  const requests = done ? Number(done[1]) : 0
  const took = done ? Number(done[2]) * { us: 1e-6, ms: 1e-3, s: 1, m: 60 }[done[3]] : seconds
  let why = null
  if (r.status !== 0 || !done || !check) why = `wrk failed (status ${r.status}): ${out.trim().split('\n').slice(-3).join(' / ')}`
  else if (Number(check[2]) > 0) why = `${check[2]} wrong answers (expected ${check[3]}, first: ${check[4]})`
  else if (Number(check[1]) !== requests || requests === 0) why = `${check[1]} answers checked of ${requests}`
  else if (errors && errors.slice(1).some((n) => n !== '0')) why = `socket errors: ${errors[0]}`
  return { requests, seconds: took, cpu, gc, counted: why === null, why, wrong: check ? Number(check[2]) : 0 }
}

const rotate = (xs, by) => xs.map((_, i) => xs[(i + by) % xs.length])

async function measureFramework (framework, o, cores, logDir) {
  const keys = ['builtin', 'uws', 'count', 'seed']
  let form = o.form
  if (framework === 'bare' && form === 'both') {
    keys.splice(2, 0, 'uws-call')
    form = 'compiled'
  }
  if (framework === 'uex') {
    form = 'auto'
    if (o.seedParser) keys.push('seed-parser')
  }
  const servers = {}
  try {
    // All at once, each pinned to the server core; if one fails, the others end too.
    const started = await Promise.allSettled(keys.map((k) => startServer(framework, k, form, cores.server, logDir)))
    for (const s of started) if (s.status === 'fulfilled') servers[s.value.key] = s.value
    const failed = started.find((s) => s.status === 'rejected')
    if (failed) throw failed.reason
    const head = servers.uws
    console.error(`${head.framework}: ${keys.map((k) => `${k} pid ${servers[k].pid}`).join(', ')}`)
    const results = []
    for (const row of o.rows) {
      const route = ROWS.find(([n]) => n === row)[1]
      for (const k of keys) {
        const w = run(servers[k], row, o.warmup, o, cores.load)
        if (w.wrong > 0) throw new Error(`bench:saturate: ${framework} ${NAMES[k]}, ${row}: ${w.why}`)
        if (!w.counted) console.error(`  warm-up ${framework} ${k} ${row}: ${w.why}`)
      }
      const runs = Object.fromEntries(keys.map((k) => [k, []]))
      for (let round = 0; round < o.rounds; round++) {
        for (const k of rotate(keys, round)) {
          const r = run(servers[k], row, o.seconds, o, cores.load)
          if (!r.counted) console.error(`  ${framework} ${k} ${row} round ${round + 1} not counted: ${r.why}`)
          runs[k][round] = r
        }
      }
      const result = { row, forms: {}, runs }
      for (const k of keys) result.forms[k] = servers[k].forms[route]
      results.push(result)
      console.error(`  ${framework} ${row}: ${keys.map((k) => `${k} ${fmt(median(runs[k].filter((r) => r.counted).map(perRequest)))} us`).join(', ')}`)
    }
    return { framework: head.framework, keys, results }
  } finally {
    for (const s of Object.values(servers)) s.child.kill()
  }
}

const perRequest = (r) => r.cpu / r.requests
const fmt = (x, digits = 1) => Number.isFinite(x) ? x.toFixed(digits) : 'n/a'

/** other / uws-body paired by round (rounds where both counted): median [range], rounds uws-body was cheaper. */
function pairedRatio (runs, other, base) {
  const ratios = []
  runs[other].forEach((r, i) => { if (r.counted && runs[base][i].counted) ratios.push(perRequest(r) / perRequest(runs[base][i])) })
  if (!ratios.length) return ['n/a', '0/0']
  return [`${fmt(median(ratios), 2)} [${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)}]`, `${ratios.filter((x) => x > 1).length}/${ratios.length}`]
}

function render ({ framework, keys, results }, o, title) {
  const counted = (r, k) => r.runs[k].filter((x) => x.counted)
  const cost = table(['row', ...keys.map((k) => `${NAMES[k]}: us/req, req/s, busy`)], results.map((r) => [r.row, ...keys.map((k) => {
    const runs = counted(r, k)
    return runs.length ? `${fmt(median(runs.map(perRequest)))}, ${fmt(median(runs.map((x) => x.requests / x.seconds)), 0)}, ${fmt(median(runs.map((x) => x.cpu / x.seconds / 1e4)), 0)}%` : 'n/a'
  })]))
  const others = keys.filter((k) => k !== 'uws' && k !== 'count')
  const ratios = table(['row', 'uws-body form', ...others.flatMap((k) => [`${NAMES[k]} / uws-body`, 'uws-body won']), 'rounds counted'],
    results.map((r) => [r.row, r.forms['uws-call'] ? `${r.forms.uws}; per call: ${r.forms['uws-call']}` : r.forms.uws, ...others.flatMap((k) => pairedRatio(r.runs, k, 'uws')), keys.map((k) => `${counted(r, k).length}`).join(' / ')]))
  const gc = table(['row', ...keys.map((k) => `${NAMES[k]}: scavenges, mark-compacts, GC pause us/req`)], results.map((r) => [r.row, ...keys.map((k) => {
    const runs = counted(r, k)
    const n = runs.reduce((s, x) => s + x.requests, 0)
    if (!n) return 'n/a'
    const sum = (f) => runs.reduce((s, x) => s + x.gc[f], 0)
    return `${fmt(1000 * sum('young') / n, 2)}, ${fmt(1000 * sum('full') / n, 2)}, ${fmt(1000 * sum('pauseMs') / n, 1)}`
  })]))
  return `## ${title}: ${framework}

Server CPU per request (utime+stime over the requests wrk completed), req/s and the server's CPU share of the run (busy: near 100% when wrk saturates it), medians of ${o.rounds} rounds of ${o.seconds} s:

${cost}

Paired by round: ratio above 1.00 means uws-body used less CPU per request; median [range]; rounds counted per contender (${keys.map((k) => NAMES[k]).join(' / ')}):

${ratios}

GCs per 1000 requests over the counted rounds (--trace-gc), and main-thread GC pause per request:

${gc}
`
}

/** The commit measured, from git, or from .git itself where git is missing (the Debian 13 root). */
function commit () {
  const head = spawnSync('git', ['rev-parse', '--short=10', 'HEAD'], { cwd: ROOT, encoding: 'utf8' })
  if (head.status !== 0) {
    try {
      const git = path.join(ROOT, '.git')
      const ref = fs.readFileSync(path.join(git, 'HEAD'), 'utf8').trim().replace(/^ref: /, '')
      if (/^[0-9a-f]{40}$/.test(ref)) return ref.slice(0, 10)
      const loose = path.join(git, ref)
      const hash = fs.existsSync(loose)
        ? fs.readFileSync(loose, 'utf8').trim()
        : fs.readFileSync(path.join(git, 'packed-refs'), 'utf8').split('\n').find((l) => l.endsWith(` ${ref}`)).split(' ')[0]
      return `${hash.slice(0, 10)} (uncommitted changes not checked: no git here)`
    } catch {
      return 'unknown commit'
    }
  }
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'lib', 'src', 'index.js'], { cwd: ROOT, encoding: 'utf8' })
  return `${head.stdout.trim()}${dirty.stdout.trim() ? ' with uncommitted changes to lib/src' : ''}`
}

async function main () {
  const majors = option('--node') ? option('--node').split(',').map((s) => s.trim()) : []
  const here = process.versions.node.split('.')[0]
  if (majors.length > 1 || (majors.length === 1 && majors[0] !== here)) return onNodes(majors)
  const o = options()
  const root = process.platform === 'linux' && process.getuid && process.getuid() === 0 && !argv.includes('--in-trixie')
  if (argv.includes('--trixie') && root) return inTrixie()
  const found = loadableUws()
  if (!found.env) {
    if (root) return inTrixie()
    throw new Error(`bench:saturate: ${found.why}; the Debian 13 root (scripts/trixie.sh) needs root`)
  }
  Object.assign(process.env, found.env)
  const cores = os.cpus().length
  if (cores < 2) throw new Error('bench:saturate: needs 2 cores or more (the server on one, wrk on the others)')
  const cpus = { server: String(cores - 1), load: cores === 2 ? '0' : `0-${cores - 2}` }
  execFileSync('taskset', ['-apc', cpus.load, String(process.pid)], { stdio: 'ignore' })
  o.wrk = wrk()
  const wrkVersion = spawnSync(o.wrk, ['-v'], { encoding: 'utf8' }).stdout.split('\n')[0].split(' Copyright')[0]
  const perRow = (f) => ((o.form === 'both' && f === 'bare') || (o.seedParser && f === 'uex') ? 5 : 4) * (o.warmup + o.rounds * o.seconds)
  const estimate = o.frameworks.reduce((s, f) => s + perRow(f) * o.rows.length, 0)
  const title = `Node ${process.version}, ${found.build}`
  console.error(`bench:saturate${o.quick ? ' (quick)' : ''}: ${title}, ${wrkVersion}; about ${estimate < 120 ? `${estimate} s` : `${Math.round(estimate / 60)} min`} of load`)
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-saturate-'))
  const started = Date.now()
  console.log(`# bench:saturate, ${title}

uws-body ${commit()}, ${new Date().toISOString().slice(0, 10)}. ${cores} x ${os.cpus()[0].model}. Servers pinned to core ${cpus.server}, \`taskset -c ${cpus.load} wrk -t1 -c${o.connections} -d${o.seconds}s\` (${wrkVersion}) on the others; ${o.warmup} s warm-up per row and contender, then ${o.rounds} rounds, the order rotated by one each round${o.quick ? '. **--quick: a check, not a figure**' : ''}.
`)
  try {
    for (const f of o.frameworks) {
      const measured = await measureFramework(f, o, cpus, logDir)
      console.log(render(measured, o, title))
    }
  } finally {
    fs.rmSync(logDir, { recursive: true, force: true })
  }
  console.error(`bench:saturate: done in ${((Date.now() - started) / 1000).toFixed(0)} s`)
}

main().catch((err) => {
  console.error(err.message || err)
  process.exit(1)
})
