'use strict'
const native = require('./lib/native')
const budget = require('./lib/budget')
const { BodyAccumulator, JS_TIER_MAX, FIRST_CHUNK_MAX } = require('./lib/accumulator')
const { BodyError } = require('./lib/errors')
const { readBody, readText } = require('./lib/read-body')
const { bodyStream } = require('./lib/stream')
const { readMultipart } = require('./lib/multipart/read')
const { bodyTimeout } = require('./lib/timeout')
const { tuneGc } = require('./lib/gc')
const parsers = require('./lib/parsers')
const { answerError } = require('./lib/answer-error')
const { multipart, MulterError } = require('./lib/multipart/multer')

/**
 * Native memory held by bodies and by the pool, process-wide (all threads), and the
 * memory budget: its bound, the bytes reserved under it (this thread's idle JS-tier
 * credit left out: lib/budget.js) and the refusals.
 */
function stats () {
  const s = native.stats()
  s.budgetReserved -= budget.idle()
  return s
}

/**
 * Bounds the memory held by bodies being read, process-wide (every worker thread):
 * a body that does not fit is refused with 503 ERR_BODY_BUDGET. Infinity: no bound.
 */
function setMemoryBudget (bytes) {
  if (typeof bytes !== 'number' || !(bytes >= 0)) throw new TypeError('uws-body: setMemoryBudget(bytes) needs a non-negative number or Infinity')
  native.setMemoryBudget(bytes)
}

/** Bounds the bytes the pool keeps idle for later bodies (default 256 MiB); 0 disables it. */
function setPoolLimit (bytes) {
  if (typeof bytes !== 'number' || !(bytes >= 0)) throw new TypeError('uws-body: setPoolLimit(bytes) needs a non-negative number')
  native.setPoolLimit(bytes)
}

module.exports = {
  BodyAccumulator,
  BodyError,
  bodyStream,
  bodyTimeout,
  readBody,
  readMultipart,
  readText,
  setMemoryBudget,
  setPoolLimit,
  stats,
  tuneGc,
  JS_TIER_MAX,
  FIRST_CHUNK_MAX,
  // Express middleware (body-parser's API) for ultimate-express and Express.
  json: parsers.json,
  raw: parsers.raw,
  text: parsers.text,
  urlencoded: parsers.urlencoded,
  // multer's API (single, array, fields, none, any; storages; MulterError).
  multipart,
  MulterError,
  // Answers a BodyError (or any error) on a bare uWS response so that it reaches a client
  // still sending the body (lib/answer-error.js, lib/linger.js).
  answerError
}
