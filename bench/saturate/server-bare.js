'use strict'
// bench/saturate.js's bare uWS server, one process per contender (argv[2]):
//   builtin  the usual reader: a Buffer.from copy of every chunk, then Buffer.concat
//   uws      uws-body: readBody (/raw), readText + JSON.parse or querystring.parse
//   count    counts the body's bytes only
//   seed     ultimate-express PR #369's reader on onData (bench/seed.js seedReader)
// uws-body's form is argv[3]:
//   call      a fresh options literal on every call: readBody(res, req, { limit: '64mb' })
//   compiled  options compiled once per route: const read = bodyReader({ limit: '64mb' }),
//             then read(res, req) (textReader for the text routes when uws-body has one;
//             else those routes stay per call, and say so)
//   auto      compiled where uws-body has bodyReader, else call
// POST /json, /urlencoded and /raw answer the length of field s, or of the body, as
// ./post.lua checks it. It tells its parent { port, forms } once it listens.
const querystring = require('node:querystring')
const uWS = require('uWebSockets.js')
const uwsBody = require('../..')
const { seedReader } = require('../seed')

const kind = process.argv[2]
// Bounded by the bench: gone with it, even if it is killed before it can end this.
process.on('disconnect', () => process.exit(0))
const form = process.argv[3] || 'auto'
const LIMIT = 64 * 1024 * 1024
const KINDS = ['builtin', 'uws', 'count', 'seed']
if (!KINDS.includes(kind)) throw new Error(`bench/saturate/server-bare.js: no contender ${JSON.stringify(kind)} (${KINDS.join(', ')})`)
if (!['call', 'compiled', 'auto'].includes(form)) throw new Error(`bench/saturate/server-bare.js: no form ${JSON.stringify(form)} (call, compiled, auto)`)
const hasCompiled = typeof uwsBody.bodyReader === 'function'
if (kind === 'uws' && form === 'compiled' && !hasCompiled) throw new Error('bench/saturate/server-bare.js: this uws-body has no bodyReader (form compiled)')
const compiled = kind === 'uws' && form !== 'call' && hasCompiled

const answer = (res, s) => { if (!res.aborted) res.cork(() => res.end(s)) }
const refuse = (res, err) => {
  if (!res.aborted) res.cork(() => res.writeStatus(String(err.status || 400)).end('ERR ' + err.message, true))
}

// What each route makes of the body: [from a Buffer, from a string, the count's offset].
const ROUTES = {
  json: [(buf) => JSON.parse(buf.toString()).s.length, (text) => JSON.parse(text).s.length, 8],
  urlencoded: [(buf) => querystring.parse(buf.toString()).s.length, (text) => querystring.parse(text).s.length, 2],
  raw: [(buf) => buf.length, null, 0]
}

/** The JS readers on onData: each is { push(ab), finish() -> Buffer | { length } }. */
const READERS = {
  builtin: () => {
    const chunks = []
    return {
      push (ab) { chunks.push(Buffer.from(Buffer.from(ab))) },
      finish () { return Buffer.concat(chunks) }
    }
  },
  count: () => {
    let n = 0
    return {
      push (ab) { n += ab.byteLength },
      finish () { return { length: n } }
    }
  },
  seed: (req) => {
    const length = req.getHeader('content-length')
    return seedReader(length === '' ? -1 : +length, req.getHeader('content-encoding'), LIMIT)
  }
}

function jsRoute (type) {
  const [fromBuffer, , offset] = ROUTES[type]
  const make = READERS[kind]
  const finish = kind === 'count' ? (body) => body.length - offset : fromBuffer
  return (res, req) => {
    res.onAborted(() => { res.aborted = true })
    let reader
    try {
      reader = make(req)
    } catch (err) {
      return refuse(res, err)
    }
    let failed = false
    res.onData((ab, isLast) => {
      if (failed) return
      let n
      try {
        reader.push(ab)
        if (!isLast) return
        n = finish(reader.finish())
      } catch (err) {
        failed = true
        return refuse(res, err)
      }
      answer(res, String(n))
    })
  }
}

// uws-body's routes, each with the form it used (the parent prints it).
const forms = {}
function uwsRoute (type) {
  const [fromBuffer, fromText] = ROUTES[type]
  const fail = (res) => (err) => uwsBody.answerError(res, err)
  if (fromText === null) {
    if (compiled) {
      forms[type] = 'bodyReader, compiled'
      const read = uwsBody.bodyReader({ limit: '64mb' })
      return (res, req) => { read(res, req).then((buf) => answer(res, String(fromBuffer(buf))), fail(res)) }
    }
    forms[type] = 'readBody, per call'
    return (res, req) => { uwsBody.readBody(res, req, { limit: '64mb' }).then((buf) => answer(res, String(fromBuffer(buf))), fail(res)) }
  }
  if (compiled && typeof uwsBody.textReader === 'function') {
    forms[type] = 'textReader, compiled'
    const read = uwsBody.textReader({ limit: '64mb' })
    return (res, req) => { read(res, req).then((text) => answer(res, String(fromText(text))), fail(res)) }
  }
  forms[type] = compiled ? 'readText, per call (no textReader)' : 'readText, per call'
  return (res, req) => { uwsBody.readText(res, req, { limit: '64mb' }).then((text) => answer(res, String(fromText(text))), fail(res)) }
}

const app = uWS.App()
for (const type of Object.keys(ROUTES)) {
  if (kind !== 'uws') forms[type] = `${kind}: onData reader`
  app.post(`/${type}`, kind === 'uws' ? uwsRoute(type) : jsRoute(type))
}
app.listen('127.0.0.1', 0, (token) => {
  if (!token) process.exit(1)
  process.send({ port: uWS.us_socket_local_port(token), framework: 'bare uWS', forms })
})
