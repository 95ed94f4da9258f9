'use strict'
// npm run bench:stream: 1 GiB uploads streamed to a file by a server in its own process.
//  (1) bounded memory: bodyStream through pipeline into a consumer slower than the client
//      (256 MiB/s): the server's peak RSS over its idle RSS, and the bytes in flight (sent
//      by the client, not yet consumed by the server), which stay small only if
//      res.pause() really throttles the client.
//  (2) speed: server CPU per GiB and wall time, bodyStream vs the per-chunk Buffer.from +
//      write loop with manual pause/resume vs ultimate-express and hyper-express 6.17
//      piping req to a file, alternating, medians of paired rounds; and two floors in the
//      same run: a bare uWS server that only counts onData's bytes (what uWS delivers
//      over loopback from this client, with no copy and no file), and cat file >
//      /dev/null (and > a file). Prints tables; asserts nothing about time.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const net = require('node:net')
const { Transform } = require('node:stream')
const { fork, spawnSync } = require('node:child_process')
const { median, paired, table } = require('./stats')
const { portOf } = require('./load')
const { useLoadableUws } = require('../scripts/test-env/loadable-uws')

const GIB = Number(process.env.BYTES) || 1024 ** 3
const MIB = 1024 ** 2
const ROUNDS = Number(process.env.ROUNDS) || 3
const CONTENDERS = ['bodyStream', 'Buffer.from loop', 'ultimate-express', 'hyper-express', 'uWS floor']
// ultimate-express 2.1.0's request stream concatenates its buffer on every chunk (its
// issue #260): quadratic, 5.3 s of CPU for 64 MiB here, so 1 GiB would take hours. It is
// measured on 64 MiB uploads and its CPU scaled to a GiB, which flatters it.
const BYTES = { 'ultimate-express': 64 * MIB }

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-stream-bench-'))
const source = path.join(dir, 'source')

function makeSource () {
  const block = Buffer.alloc(MIB)
  for (let i = 0; i < MIB; i += 4) block.writeUInt32LE((Math.imul(i, 2654435761) >>> 0), i)
  const fd = fs.openSync(source, 'w')
  for (let i = 0; i < GIB / MIB; i++) { block[0] = i & 0xff; fs.writeSync(fd, block) }
  fs.closeSync(fd)
}

function startServer (contender) {
  const child = fork(path.join(__dirname, 'stream-server.js'), [contender], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return portOf(child).then((port) => ({ child, port }), (err) => { child.kill(); throw err })
}

/** Uploads the source file; resolves with the server's figures and the most bytes in flight. */
function upload (server, rate = 0, bytes = GIB) {
  const target = path.join(dir, 'upload')
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1')
    // Chunked: this uWS build refuses a content-length of 2^30 or more.
    const head = `POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nx-file: ${target}\r\nx-rate: ${rate}\r\n\r\n`
    let framing = head.length
    let inflight = 0
    let result = null
    let answered = false
    const onMessage = (m) => {
      if (m.done) result = m
      else if (typeof m.consumed === 'number') {
        const sent = socket.bytesWritten - socket.writableLength - framing
        inflight = Math.max(inflight, sent - m.consumed)
      }
      finish()
    }
    const finish = () => {
      if (result && answered) {
        server.child.off('message', onMessage)
        socket.destroy()
        fs.rmSync(target, { force: true })
        resolve({ ...result, inflight })
      }
    }
    server.child.on('message', onMessage)
    socket.on('data', (d) => { if (/^HTTP\/1.1 200/.test(d.toString('latin1'))) { answered = true; finish() } else reject(new Error(d.toString())) })
    socket.on('error', reject)
    socket.on('connect', () => {
      socket.write(head)
      const frame = new Transform({
        transform (chunk, _, done) {
          const size = `${chunk.length.toString(16)}\r\n`
          framing += size.length + 2
          this.push(size)
          this.push(chunk)
          done(null, '\r\n')
        },
        flush (done) { framing += 5; done(null, '0\r\n\r\n') }
      })
      fs.createReadStream(source, { highWaterMark: MIB, end: bytes - 1 }).pipe(frame).pipe(socket, { end: false })
    })
  })
}

function floor (to) {
  const started = process.hrtime.bigint()
  const out = fs.openSync(to, 'w')
  const r = spawnSync('cat', [source], { stdio: ['ignore', out, 'inherit'] })
  fs.closeSync(out)
  if (r.status !== 0) throw new Error('cat failed')
  const wall = Number(process.hrtime.bigint() - started) / 1e9
  if (to !== '/dev/null') fs.rmSync(to)
  return wall
}

async function main () {
  console.log(`Node ${process.version}, ${useLoadableUws()}`)
  makeSource()
  floor('/dev/null') // warm the page cache
  const servers = {}
  for (const c of CONTENDERS) servers[c] = await startServer(c)
  try {
    // (1) bounded memory.
    const slow = await upload(servers.bodyStream, 256 * MIB)
    console.log('\n(1) bodyStream, 1 GiB through pipeline into a consumer at 256 MiB/s (the client sends as fast as it may)')
    console.log(table(['server idle RSS', 'peak RSS', 'peak - idle', 'most bytes in flight', 'wall'], [[
      `${(slow.idle / MIB).toFixed(1)} MiB`, `${(slow.peak / MIB).toFixed(1)} MiB`, `${((slow.peak - slow.idle) / MIB).toFixed(1)} MiB`,
      `${(slow.inflight / MIB).toFixed(1)} MiB`, `${slow.wall.toFixed(2)} s`
    ]]))

    // (2) speed.
    const cpu = Object.fromEntries(CONTENDERS.map((c) => [c, []]))
    const wall = Object.fromEntries(CONTENDERS.map((c) => [c, []]))
    const growth = Object.fromEntries(CONTENDERS.map((c) => [c, []]))
    const floors = { null: [], file: [] }
    for (let round = 0; round < ROUNDS; round++) {
      const order = CONTENDERS.map((_, i) => CONTENDERS[(i + round) % CONTENDERS.length])
      for (const c of order) {
        const bytes = BYTES[c] || GIB
        const r = await upload(servers[c], 0, bytes)
        cpu[c].push(r.cpu * GIB / bytes)
        wall[c].push(r.wall * GIB / bytes)
        growth[c].push(r.peak - r.idle)
      }
      floors.null.push(floor('/dev/null'))
      floors.file.push(floor(path.join(dir, 'copy')))
    }
    console.log(`\n(2) 1 GiB streamed to a file (ultimate-express: 64 MiB, scaled; uWS floor: counts bytes only), ${ROUNDS} rounds (contenders alternating): medians per GiB, and bodyStream / contender paired per round`)
    const rows = CONTENDERS.map((c) => {
      const p = paired(cpu.bodyStream, cpu[c])
      return [c, `${median(cpu[c]).toFixed(2)} s`, `${Math.min(...cpu[c]).toFixed(2)}-${Math.max(...cpu[c]).toFixed(2)}`, `${median(wall[c]).toFixed(2)} s`,
        `${(GIB / MIB / median(wall[c])).toFixed(0)} MiB/s`, `${(median(growth[c]) / MIB).toFixed(0)} MiB`,
        c === 'bodyStream' ? '' : `${p.ratio.toFixed(2)} (${p.won}/${p.rounds})`]
    })
    rows.push(['floor: cat file > /dev/null', '', '', `${median(floors.null).toFixed(2)} s`, `${(GIB / MIB / median(floors.null)).toFixed(0)} MiB/s`, '', ''])
    rows.push(['floor: cat file > file', '', '', `${median(floors.file).toFixed(2)} s`, `${(GIB / MIB / median(floors.file)).toFixed(0)} MiB/s`, '', ''])
    console.log(table(['contender', 'server CPU / GiB', 'range', 'wall / GiB', 'throughput', 'peak RSS - idle', 'CPU bodyStream/this (won)'], rows))
    console.log(`\nbodyStream wall / floor: ${(median(wall.bodyStream) / median(floors.null)).toFixed(2)}x cat > /dev/null, ${(median(wall.bodyStream) / median(floors.file)).toFixed(2)}x cat > file, ` +
      `${(median(wall.bodyStream) / median(wall['uWS floor'])).toFixed(2)}x the uWS floor (CPU: ${(median(cpu.bodyStream) / median(cpu['uWS floor'])).toFixed(2)}x)`)
  } finally {
    for (const s of Object.values(servers)) s.child.kill()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => { console.error(err); fs.rmSync(dir, { recursive: true, force: true }); process.exit(1) })
