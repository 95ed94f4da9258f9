'use strict'
// A bare uWS server in its own process, for the pool's idle decay (__test__/pool-decay.test.js,
// bench/idle.js). argv[2] is the reader:
//   uws   uws-body's readBody
//   seed  the seed's: res.onData copies of each chunk, then one Buffer.concat
// POST /raw answers the body's length; GET /stats answers { rss, faults (minor page
// faults so far: fresh pages touched), ...stats() } (uws-body's stats() in both: the
// seed's server loads the package too, and reads nothing with it).
// It tells its parent its port once it listens, and ends with its parent.
const uWS = require('uWebSockets.js')
const uwsBody = require('../..')

const kind = process.argv[2]
if (kind !== 'uws' && kind !== 'seed') throw new Error(`idle-server: no reader ${JSON.stringify(kind)} (uws, seed)`)
process.on('disconnect', () => process.exit(0))
const LIMIT = 64 * 1024 * 1024

const answer = (res, s) => { if (!res.aborted) res.cork(() => res.end(s)) }

function seedRead (res) {
  return new Promise((resolve) => {
    const chunks = []
    res.onData((ab, last) => {
      chunks.push(Buffer.from(Buffer.from(ab)))
      if (last) resolve(Buffer.concat(chunks))
    })
  })
}

const app = uWS.App()
app.post('/raw', (res, req) => {
  res.onAborted(() => { res.aborted = true })
  const body = kind === 'uws' ? uwsBody.readBody(res, req, { limit: LIMIT }) : seedRead(res)
  body.then((buf) => answer(res, String(buf.length)), (err) => uwsBody.answerError(res, err))
})
app.get('/stats', (res) => {
  answer(res, JSON.stringify({ rss: process.memoryUsage().rss, faults: process.resourceUsage().minorPageFault, ...uwsBody.stats() }))
})
app.listen('127.0.0.1', 0, (token) => {
  if (!token) throw new Error('idle-server: cannot listen')
  process.send({ port: uWS.us_socket_local_port(token) })
})
