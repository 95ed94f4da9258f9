'use strict'
const native = require('./lib/native/native')
const budget = require('./lib/body/budget')
require('./lib/body/pool-decay')
const { BodyAccumulator, JS_TIER_MAX, FIRST_CHUNK_MAX } = require('./lib/body/accumulator')
const { BodyError } = require('./lib/native/errors')
const { readBody, readText, bodyReader, textReader } = require('./lib/api/read-body')
const { bodyStream, streamReader } = require('./lib/api/stream')
const { readMultipart, multipartReader } = require('./lib/api/multipart')
const { bodyTimeout } = require('./lib/body/deadlines')
const { tuneGc } = require('./lib/api/gc')
const { json, raw, text, urlencoded } = require('./lib/frameworks/body-parser')
const { answerError } = require('./lib/api/answer-error')
const { multipart, MulterError } = require('./lib/frameworks/multer')

/**
 * Native memory held by bodies and by the pool, process-wide (all threads), and the
 * memory budget: its bound, the bytes reserved under it (this thread's idle JS-tier
 * credit left out: lib/body/budget.js) and the refusals.
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

/** Bounds the bytes the pool keeps idle for later bodies (default 256 MiB); 0 disables it. A block idle for 4 s is freed. */
function setPoolLimit (bytes) {
  if (typeof bytes !== 'number' || !(bytes >= 0)) throw new TypeError('uws-body: setPoolLimit(bytes) needs a non-negative number')
  native.setPoolLimit(bytes)
}

// Bare names only, in this one object literal: index.mjs re-exports the names Node's
// cjs-module-lexer reads here, and it stops at a value such as `parsers.json`
// (__test__/exports.test.js).
module.exports = {
  BodyAccumulator,
  BodyError,
  bodyStream,
  bodyTimeout,
  readBody,
  readMultipart,
  readText,
  // The same readers compiled once per route: the form for a hot route.
  bodyReader,
  textReader,
  streamReader,
  multipartReader,
  setMemoryBudget,
  setPoolLimit,
  stats,
  tuneGc,
  JS_TIER_MAX,
  FIRST_CHUNK_MAX,
  // Express middleware (body-parser's API) for ultimate-express and Express.
  json,
  raw,
  text,
  urlencoded,
  // multer's API (single, array, fields, none, any; storages; MulterError).
  multipart,
  MulterError,
  // Answers a BodyError (or any error) on a bare uWS response so that it reaches a client
  // still sending the body (lib/api/answer-error.js, lib/refusal/refusal.js).
  answerError
}
