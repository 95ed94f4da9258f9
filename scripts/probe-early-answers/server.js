'use strict'
// The probe's server (scripts/probe-early-answers/run.js): plain uWS, no uws-body, so
// what it measures is uWS's own behaviour. POST /<action>?<options>:
//   action   end        res.end(answer)
//            endclose   res.end(answer, true)
//            close      res.close()
//            ewb        res.endWithoutBody() (no content-length, no body)
//            write      res.write(answer) at once, res.end() when the body has ended
//            defer      res.end(answer) when the body has ended
//            hdrclose   res.end(answer) with a Connection: close header written by hand
//                       (uWS's own close flag is not set by it)
//            pauseend   res.pause(), then as hdrclose
//            raw        the whole answer written through writeStatus (so uWS still
//                       sees the response as pending), res.close() when the body has ended
//   when     now        in the route handler, before any body byte
//            first      once more than 1 MiB of body has arrived (a limit hit mid-body)
//   ondata   keep       an onData handler stays attached and counts the bytes
//            none       (with when=now) no onData handler is ever attached
// GET /report: what the server saw, as JSON (bytes delivered after the answer, whether
// res threw when used after end(), aborts) and it resets the counters.
const uWS = require('uWebSockets.js')

const LIMIT = 1024 * 1024
const report = { thrown: 0, requests: 0, aborted: 0, afterAnswer: 0, invalidAfterEnd: null, lateChunks: 0, lastAfterAnswer: 0 }

function answer (res, action, body) {
  res.cork(() => {
    if (action === 'raw') {
      // uWS appends \r\n to the status line: it is the body's last two bytes here.
      const text = body + '\r\n'
      res.writeStatus(`413 Payload Too Large\r\nx-code: ERR_BODY_TOO_LARGE\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${body}`)
      return
    }
    res.writeStatus('413 Payload Too Large').writeHeader('x-code', 'ERR_BODY_TOO_LARGE')
    if (action === 'pauseend') res.pause()
    if (action === 'hdrclose' || action === 'pauseend') res.writeHeader('Connection', 'close')
    if (action === 'end' || action === 'hdrclose' || action === 'pauseend') res.end(body)
    else if (action === 'endclose') res.end(body, true)
    else if (action === 'close') res.close()
    else if (action === 'ewb') res.endWithoutBody()
    else if (action === 'write') res.write(body)
  })
  if (action === 'end' || action === 'endclose' || action === 'ewb' || action === 'hdrclose' || action === 'pauseend') {
    try {
      res.getWriteOffset()
      report.invalidAfterEnd = false
    } catch {
      report.invalidAfterEnd = true
    }
  }
}

// The actions after which the response is done (nothing is left to do at the body's end).
const ENDS = new Set(['end', 'endclose', 'close', 'ewb', 'hdrclose', 'pauseend'])

// A probe that throws must not stop the run: counted, and the request is left to time out.
process.on('uncaughtException', (err) => { report.thrown++; report.lastThrown = err.message.slice(0, 80) })

const app = uWS.App()
app.post('/:action', (res, req) => {
  report.requests++
  const action = req.getParameter(0)
  const q = new URLSearchParams(req.getQuery() || '')
  const when = q.get('when') || 'first'
  const ondata = q.get('ondata') || 'keep'
  const body = '{"status":413,"code":"ERR_BODY_TOO_LARGE"}'
  let answered = false
  let ended = false
  let received = 0
  res.onAborted(() => { report.aborted++; ended = true })
  // Answers in the route handler (after onData is attached, when it is: uWS.js refuses
  // onData on an ended response).
  const answerNow = () => {
    if (when !== 'now') return
    answered = true
    if (action !== 'defer') answer(res, action, body)
    if (ENDS.has(action)) ended = true
  }
  const finishDeferred = () => {
    if (ended) return
    ended = true
    if (action === 'write') res.cork(() => res.end())
    if (action === 'defer') answer(res, 'end', body)
    if (action === 'raw') res.close()
  }
  if (ondata === 'none') return answerNow()
  res.onData((chunk, isLast) => {
    received += chunk.byteLength
    if (answered) {
      report.afterAnswer += chunk.byteLength
      report.lateChunks++
      if (isLast) { report.lastAfterAnswer++; finishDeferred() }
      return
    }
    if (received > LIMIT) {
      answered = true
      if (action !== 'defer') answer(res, action, body)
      if (ENDS.has(action)) ended = true
      if (isLast) finishDeferred()
    } else if (isLast) {
      answered = true
      ended = true
      res.cork(() => res.end('under the limit'))
    }
  })
  answerNow()
})
app.get('/next', (res) => { res.end('next') })
app.get('/report', (res) => {
  res.end(JSON.stringify(report))
  for (const k of Object.keys(report)) report[k] = k === 'invalidAfterEnd' || k === 'lastThrown' ? null : 0
})
app.listen('127.0.0.1', Number(process.argv[2] || 0), (token) => {
  if (!token) { console.error('cannot listen'); process.exit(1) }
  console.log(`port ${uWS.us_socket_local_port(token)}`)
})
