'use strict'
// npm run bench:multipart [-- --quick]: multipart/form-data on bare uWS, server in its own
// process. Prints tables; asserts nothing about time.
//  (1) server CPU per request, contenders alternating in each round, medians and the
//      paired ratio readMultipart / contender per round (below 1: readMultipart used less)
//      with the rounds it won:
//        readMultipart   memory storage (files in one arena Buffer)
//        busboy          fed from onData, each chunk copied with Buffer.from, each
//                        file's chunks Buffer.concat-ed, as a typical user writes it
//        getParts        readBody, then uWS.getParts(body, contentType)
//      on (a) a 32 MiB file and 10 fields, (b) 100 files of 10 KiB.
//  (2) a 1 GiB file to disk through readMultipart { dest }: the server's peak RSS over
//      its idle RSS, and the wall time.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const net = require('node:net')
const { fork } = require('node:child_process')
const { median, paired, table } = require('./stats')
const { get, portOf } = require('./load')
const { useLoadableUws } = require('../scripts/test-env/loadable-uws')

const QUICK = process.argv.includes('--quick')
const ROUNDS = Number(process.env.ROUNDS) || (QUICK ? 3 : 7)
const MIB = 1024 ** 2
const GIB = 1024 ** 3
const CONTENDERS = ['readMultipart', 'busboy', 'getParts']
const BOUNDARY = '----uwsBodyBench7MA4YWxkTrZu0gW'

function pattern (size, seed) {
  const out = Buffer.allocUnsafe(size)
  let x = seed >>> 0 || 1
  for (let i = 0; i + 4 <= size; i += 4) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    out.writeUInt32LE(x >>> 0, i)
  }
  return out
}

function form (parts) {
  const out = []
  for (const p of parts) {
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"`
    if (p.filename) head += `; filename="${p.filename}"\r\nContent-Type: application/octet-stream`
    out.push(Buffer.from(head + '\r\n\r\n'), p.data, Buffer.from('\r\n'))
  }
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  return Buffer.concat(out)
}

const CASES = [
  {
    name: '(a) 32 MiB file + 10 fields',
    requests: QUICK ? 3 : 5,
    body: form([...Array.from({ length: 10 }, (_, i) => ({ name: `field${i}`, data: Buffer.from(`value number ${i}`) })), { name: 'file', filename: 'big.bin', data: pattern(32 * MIB, 1) }]),
    expect: `1 ${32 * MIB} 10`
  },
  {
    name: '(b) 100 files of 10 KiB',
    requests: QUICK ? 20 : 40,
    body: form(Array.from({ length: 100 }, (_, i) => ({ name: `f${i}`, filename: `f${i}.bin`, data: pattern(10 * 1024, i + 2) }))),
    expect: `100 ${100 * 10 * 1024} 0`
  }
]

/** One POST of `body` (content-length, or chunked when `chunks` is a generator); resolves with the answer's body. */
function post (port, p, body, chunks) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let data = ''
    socket.on('data', (d) => {
      data += d
      const end = data.indexOf('\r\n\r\n')
      const m = /content-length: (\d+)/i.exec(data)
      if (end >= 0 && m && data.length >= end + 4 + Number(m[1])) {
        socket.destroy()
        const status = Number(data.split(' ')[1])
        const text = data.slice(end + 4, end + 4 + Number(m[1]))
        if (status !== 200) reject(new Error(`${p}: ${status} ${text}`))
        else resolve(text)
      }
    })
    socket.on('error', reject)
    socket.on('connect', async () => {
      const type = `Content-Type: multipart/form-data; boundary=${BOUNDARY}`
      if (!chunks) {
        socket.write(`POST ${p} HTTP/1.1\r\nHost: x\r\n${type}\r\nContent-Length: ${body.length}\r\n\r\n`)
        socket.write(body)
        return
      }
      // Chunked: this uWS build refuses a content-length of 2^30 or more.
      socket.write(`POST ${p} HTTP/1.1\r\nHost: x\r\n${type}\r\nTransfer-Encoding: chunked\r\n\r\n`)
      for (const piece of chunks) {
        const ok = socket.write(`${piece.length.toString(16)}\r\n`) & socket.write(piece) & socket.write('\r\n')
        if (!ok) await new Promise((resolve) => socket.once('drain', resolve))
      }
      socket.write('0\r\n\r\n')
    })
  })
}

async function main () {
  console.log(`Node ${process.version}, ${useLoadableUws()}`)
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-mp-bench-'))
  const child = fork(path.join(__dirname, 'multipart-server.js'), [dest], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await portOf(child).catch((err) => { child.kill(); throw err })
  try {
    console.log(`bench:multipart${QUICK ? ' --quick' : ''}: ${ROUNDS} rounds, Node ${process.version}, ${os.cpus().length} CPUs`)
    const rows = []
    for (const c of CASES) {
      const cpu = Object.fromEntries(CONTENDERS.map((k) => [k, []]))
      for (const k of CONTENDERS) await post(port, `/${k}`, c.body) // warm up
      for (let round = 0; round < ROUNDS; round++) {
        const order = CONTENDERS.map((_, i) => CONTENDERS[(i + round) % CONTENDERS.length])
        for (const k of order) {
          await get(port, '/reset')
          for (let i = 0; i < c.requests; i++) {
            const answer = await post(port, `/${k}`, c.body)
            if (answer !== c.expect) throw new Error(`${k}: answered ${answer}, expected ${c.expect}`)
          }
          const s = JSON.parse(await get(port, '/stats'))
          cpu[k].push(s.cpuMicros / s.requests)
        }
      }
      for (const k of CONTENDERS) {
        const p = paired(cpu.readMultipart, cpu[k])
        rows.push([c.name, k, `${median(cpu[k]).toFixed(0)} us`, `${Math.min(...cpu[k]).toFixed(0)}-${Math.max(...cpu[k]).toFixed(0)}`,
          k === 'readMultipart' ? '' : `${p.ratio.toFixed(2)} (${p.won}/${p.rounds})`])
      }
    }
    console.log(`\n(1) server CPU per request (bare uWS, 127.0.0.1, content-length), medians of ${ROUNDS} rounds`)
    console.log(table(['form', 'contender', 'CPU / request', 'range', 'readMultipart / this (won)'], rows))

    // (2) 1 GiB to disk.
    const size = Number(process.env.DISK_BYTES) || GIB
    const block = pattern(MIB, 9)
    function * pieces () {
      yield Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="big"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
      for (let sent = 0; sent < size; sent += MIB) yield block.subarray(0, Math.min(MIB, size - sent))
      yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`)
    }
    await get(port, '/reset')
    const started = process.hrtime.bigint()
    const answer = await post(port, '/disk', null, pieces())
    const wall = Number(process.hrtime.bigint() - started) / 1e9
    if (answer !== `1 ${size} 0`) throw new Error(`disk: answered ${answer}`)
    const s = JSON.parse(await get(port, '/stats'))
    console.log(`\n(2) a ${size / MIB} MiB file to disk through readMultipart { dest } (chunked upload)`)
    console.log(table(['server idle RSS', 'peak RSS', 'peak - idle', 'server CPU', 'wall', 'throughput'], [[
      `${(s.idle / MIB).toFixed(1)} MiB`, `${(s.peak / MIB).toFixed(1)} MiB`, `${((s.peak - s.idle) / MIB).toFixed(1)} MiB`,
      `${(s.cpuMicros / 1e6).toFixed(2)} s`, `${wall.toFixed(2)} s`, `${(size / MIB / wall).toFixed(0)} MiB/s`
    ]]))
  } finally {
    child.kill()
    fs.rmSync(dest, { recursive: true, force: true })
  }
}

main().catch((err) => { console.error(err); process.exit(1) })
