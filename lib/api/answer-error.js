'use strict'
// answerError(res, err): the one formatter of an error's answer on a bare uWS response.
// When it is written does not matter: on a body that is still arriving, the refusal
// holds it until the rest is dropped (lib/refusal/refusal.js).
const http = require('node:http')
const { Buffer } = require('node:buffer')
const { checkNames, checkResponse, objectOption, describe, ANSWER_METHODS } = require('../plan/check')
const { parseLinger } = require('../plan/linger')
const { refuseRest, refusalOf } = require('../refusal/refusal')

// A header field name (RFC 9110 token) and value. A value is visible ASCII, space and tab
// only: the bytes that go out are then the same whichever path writes the head (uWS's
// writeHeader, or a closing answer), and no character can stand for a CR or LF
// (latin1 keeps only a character's low byte: U+010A would be a LF).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const SAFE_VALUE = /^[\t\x20-\x7e]*$/
// What may appear as an error's `code` in an answer.
const CODE = /^[A-Za-z0-9_.-]{1,64}$/

/**
 * Answers `error` on the uWS response `res`: status from error.status (400-599, else
 * 500), a short JSON body { status, code, message } (code and message only for errors
 * meant for the client: `expose`, or any status under 500), or options.body /
 * options.contentType. The error's `headers` (an object, as http-errors' and a budget
 * refusal's) are sent, then options.headers. options.bodyEnded, options.linger:
 * for a body that uws-body does not read (BodyAccumulator): whether its last chunk was
 * seen (default true), and, when not, the bounds for the rest, which answerError then
 * reads itself (its onData replaces the caller's). Does nothing once `res.aborted` is set
 * or `res` was answered. A header it cannot send is left out, with a warning.
 */
const ANSWER_OPTIONS = ['body', 'contentType', 'headers', 'bodyEnded', 'linger']

function answerError (res, error, options) {
  checkResponse(res, 'answerError(res, error)', ANSWER_METHODS)
  const o = objectOption(options, 'answerError options')
  checkNames(o, ANSWER_OPTIONS, 'answerError option')
  const reply = replyOf(error, o)
  if (res.aborted === true || answered(res)) return
  if (o.bodyEnded === false && refusalOf(res) === undefined) {
    // The caller's body, refused before its end: its rest is read here.
    const refusal = refuseRest(res, null, -1, parseLinger(o.linger), null, noop)
    res.onData((chunk, isLast) => refusal.chunk(chunk, isLast))
  }
  res.cork(() => writeAnswer(res, reply))
}

function noop () {}

/**
 * True when `res` was already answered (by the application, or by an earlier answerError):
 * uWS.js throws on every use of such a response, so answerError does nothing, as it does
 * once `res.aborted` is set. A response whose answer a Refusal holds is never answered.
 */
function answered (res) {
  if (typeof res.getWriteOffset !== 'function') return false
  try {
    res.getWriteOffset()
    return false
  } catch {
    return true
  }
}

/** { status, statusText, contentType, body (Buffer), headers: [[name, value]] } for error and options. */
function replyOf (error, o) {
  const e = error !== null && typeof error === 'object' ? error : {}
  let status = e.status !== undefined ? e.status : e.statusCode
  if (!Number.isInteger(status) || status < 400 || status > 599) status = 500
  const exposed = typeof e.expose === 'boolean' ? e.expose : status < 500
  const statusText = http.STATUS_CODES[status] || 'Error'
  let body = o.body
  let contentType = o.contentType
  if (body === undefined || body === null) {
    const code = exposed && typeof e.code === 'string' && CODE.test(e.code) ? e.code : status >= 500 ? 'ERR_INTERNAL' : undefined
    const message = exposed && typeof e.message === 'string' && e.message !== '' ? e.message : statusText
    body = Buffer.from(JSON.stringify({ status, code, message }))
    if (contentType === undefined) contentType = 'application/json; charset=utf-8'
  } else if (typeof body === 'string') {
    body = Buffer.from(body)
    if (contentType === undefined) contentType = 'text/plain; charset=utf-8'
  } else if (!Buffer.isBuffer(body)) {
    throw new TypeError(`uws-body: answerError options.body must be a string or a Buffer, got ${describe(body)}`)
  }
  const headers = []
  if (contentType !== undefined) headers.push(['content-type', contentType])
  // The error's own headers (a budget refusal's Retry-After), as Express's finalhandler
  // sends them; the options' come after.
  if (e.headers !== null && typeof e.headers === 'object') {
    for (const name of Object.keys(e.headers)) headers.push([name, String(e.headers[name])])
  }
  const more = objectOption(o.headers, 'answerError options.headers')
  for (const name of Object.keys(more)) headers.push([name, String(more[name])])
  return { status, statusText, body, headers: headers.filter(sendable) }
}

/**
 * A header answerError can send. One it cannot is left out, with a warning (once per
 * name): its value often comes from the request, and a throw in the rejection handler
 * that called answerError would be an unhandled rejection, which ends the process.
 */
function sendable ([name, value]) {
  const lower = name.toLowerCase()
  if (TOKEN.test(name) && SAFE_VALUE.test(value) && !OWN_HEADERS.has(lower)) return true
  if (warned.size < WARNED_MAX && !warned.has(lower)) {
    warned.add(lower)
    process.emitWarning(`answerError left out the header ${JSON.stringify(name)}: ${JSON.stringify(value.slice(0, 80))} (a name is an RFC 9110 token, a value visible ASCII, space and tab; content-length, connection and transfer-encoding are answerError's own). Warned once per header name.`, { code: 'UWS_BODY_HEADER_LEFT_OUT' })
  }
  return false
}

const OWN_HEADERS = new Set(['content-length', 'connection', 'transfer-encoding'])
// Header names warned about; a bound, since names can come from the request too.
const warned = new Set()
const WARNED_MAX = 64

function writeAnswer (res, reply) {
  res.writeStatus(`${reply.status} ${reply.statusText}`)
  for (const [name, value] of reply.headers) res.writeHeader(name, value)
  res.end(reply.body)
}

module.exports = { answerError }
