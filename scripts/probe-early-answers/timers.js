'use strict'
// How long uWS keeps a connection after answering early, by what the client does next
// (the probe's server.js must be running; pass its port):
//   node scripts/probe-early-answers/timers.js <port>
// Cases: the client keeps sending the declared body at 200 KiB/s (above uWS's 16 KiB/s
// minimum) for up to 25 s, with or without an onData handler left attached; or it sends
// the whole body at once and then stays idle on the keep-alive connection; or it sends as
// fast as the socket takes it to a server that paused the connection and answered.
const net = require('node:net')

const port = Number(process.argv[2])

function run (name, urlPath, { declared, rate, seconds, idleAfter, fast }) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const started = Date.now()
    let sent = 0
    let answered = null
    let timer = null
    const done = (why) => {
      clearInterval(timer)
      const s = ((Date.now() - started) / 1000).toFixed(1)
      resolve(`${name}: answer after ${answered}; connection ${why} at ${s} s, ${(sent / 1048576).toFixed(1)} MiB sent`)
      socket.destroy()
    }
    socket.on('data', (d) => { if (answered === null) answered = `${((Date.now() - started) / 1000).toFixed(1)} s` })
    socket.on('close', () => done('closed by the server'))
    socket.on('error', () => {})
    socket.on('connect', () => {
      socket.write(`POST ${urlPath} HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`)
      if (fast) {
        const piece = Buffer.alloc(1024 * 1024)
        const write = () => {
          while (sent < declared && Date.now() - started < seconds * 1000) {
            sent += piece.length
            if (!socket.write(piece)) return socket.once('drain', write)
          }
        }
        setTimeout(() => done('still open'), seconds * 1000)
        return write()
      }
      if (idleAfter) {
        socket.write(Buffer.alloc(declared))
        sent = declared
        setTimeout(() => done('still open'), idleAfter * 1000)
        return
      }
      const piece = Buffer.alloc(Math.floor(rate / 10))
      timer = setInterval(() => {
        if (sent + piece.length > declared || Date.now() - started > seconds * 1000) return done('still open')
        socket.write(piece)
        sent += piece.length
      }, 100)
    })
  })
}

async function main () {
  const slow = { declared: 100 * 1048576, rate: 200 * 1024, seconds: 25 }
  console.log(await run('end() in the handler, no onData, 200 KiB/s', '/end?when=now&ondata=none', slow))
  console.log(await run('end() in the handler, onData attached, 200 KiB/s', '/end?when=now&ondata=keep', slow))
  console.log(await run('end() after 1 MiB, onData attached, 200 KiB/s', '/end?when=first', slow))
  const idle = { declared: 2 * 1048576, idleAfter: 25 }
  console.log(await run('end() after 1 MiB, onData attached, whole body then idle', '/end?when=first', idle))
  console.log(await run('end() in the handler, no onData, whole body then idle', '/end?when=now&ondata=none', idle))
  console.log(await run('no answer until the body ends (defer), whole body then idle', '/defer?when=first', idle))
  console.log(await run('pause() + end() after 1 MiB, the client sending as fast as it can', '/pauseend?when=first', { declared: 999999999, fast: true, seconds: 45 }))
}

main()
