'use strict'
// What the uWS build under test does after res.pause(), for the backpressure bounds.
//
// The 20.30 fork stops reading as soon as a handler pauses. 20.57 (its uSockets reads
// again at once whenever a read filled its 512 KiB buffer, whatever the handler did)
// drains the socket's kernel receive queue first: pause() takes effect only when a read
// comes back short. So a consumer paused on 20.57 is handed, on top of its
// highWaterMark, a whole receive buffer (Linux autotunes it up to the third value of
// net.ipv4.tcp_rmem: 6 MiB by default, more where it is raised), and more for as long as
// a fast client keeps the queue from running dry. readAfterPause is the one-queue figure;
// a bound that must hold under a client sending flat out allows more.
const fs = require('node:fs')
const path = require('node:path')

const KIB = 1024
const MIB = 1024 * KIB
// uWS's own receive buffer: what one read hands to onData.
const UWS_READ = 512 * KIB

function uwsVersion () {
  let at = path.dirname(require.resolve('uWebSockets.js'))
  while (!fs.existsSync(path.join(at, 'package.json'))) at = path.dirname(at)
  return JSON.parse(fs.readFileSync(path.join(at, 'package.json'), 'utf8')).version
}

/** The third value of /proc/sys/net/ipv4/<name> (the most Linux grows a socket's queue to), or `otherwise`. */
function queueMax (name, otherwise) {
  try {
    const max = Number(fs.readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2])
    if (max > 0) return max
  } catch {}
  return otherwise
}

/** The most a socket's receive queue can hold here (tcp_rmem's max; Linux's default 6 MiB). */
const receiveBufferMax = queueMax('tcp_rmem', 6 * MIB)
/** The most a socket's send queue can hold here (tcp_wmem's max; Linux's default 4 MiB). */
const sendBufferMax = queueMax('tcp_wmem', 4 * MIB)

const version = uwsVersion()
/** True where uWS keeps delivering after pause() until the kernel queue is drained. */
const drainsAfterPause = !version.startsWith('20.30.')

/** Bytes a paused consumer may be handed beyond its own mark, on this build. */
const readAfterPause = drainsAfterPause ? receiveBufferMax + UWS_READ : UWS_READ

module.exports = { version, drainsAfterPause, readAfterPause, receiveBufferMax, sendBufferMax, UWS_READ }
