'use strict'
// The `linger` option, compiled once: the bounds on what is read of a refused body's rest
// (lib/refusal/refusal.js says what is done within them).
const { MIB, parseLimit } = require('./limits')
const { checkNames, describe } = require('./check')

// What the server reads of a refused body before giving up on it: dropping costs uWS less
// than reading a body of that size (docs/performance.md, row 'dropping a rest'), for a
// client that pays for every byte it sends. It covers an upload a few times over any
// usual limit, which then gets its answer cleanly.
const LINGER_BYTES = 64 * MIB
// How long after the refusal the rest may take: upstream uWS's own idle timeout (10 s;
// the 20.57 build tested here has 30 s), so a refused request holds its connection no
// longer than an idle one is kept. A client sending 6.4 MB/s finishes 64 MiB within it.
const LINGER_TIMEOUT = 10000
// How long the rest may pause: a client silent this long after the refusal, or after its
// last byte, is past the bound, and gets its answer as a closing answer at once instead
// of at `timeout`. A sender that has stalled protects nothing by being waited for
// (nginx answers at once); one still sending sends faster than this on any live link
// (docs/performance.md, row 'linger idle').
const LINGER_IDLE = 1000
// setTimeout's largest delay.
const MAX_TIMEOUT = 0x7fffffff

/**
 * The `linger` option: undefined/null for the defaults, false for none (nothing more is
 * read: the answer goes out at once with `Connection: close`), or { bytes, timeout,
 * errorAtOnce } (bytes: a number or a string like '64mb'; timeout: ms, 0 to wait for none
 * of it; errorAtOnce: deliver the error before the rest is dropped, default false).
 */
function parseLinger (value) {
  if (value === undefined || value === null) return DEFAULTS
  if (value === false) return NONE
  if (typeof value !== 'object') {
    throw new TypeError(`uws-body: linger must be false or { bytes, timeout, idle, errorAtOnce }, got ${describe(value)}`)
  }
  checkNames(value, ['bytes', 'timeout', 'idle', 'errorAtOnce'], 'linger option')
  // Each read once: a getter could answer differently the second time.
  const { bytes, timeout, idle, errorAtOnce } = value
  return Object.freeze({
    bytes: bytes === undefined || bytes === null ? LINGER_BYTES : parseLimit(bytes),
    timeout: milliseconds(timeout, LINGER_TIMEOUT, 'timeout', ' (a refused body\'s rest cannot be waited for forever)'),
    idle: milliseconds(idle, LINGER_IDLE, 'idle', ''),
    errorAtOnce: parseErrorAtOnce(errorAtOnce)
  })
}

function milliseconds (value, fallback, name, why) {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIMEOUT)) {
    throw new TypeError(`uws-body: linger.${name} must be a number of milliseconds from 0 to ${MAX_TIMEOUT}${why}, got ${typeof value === 'number' ? value : describe(value)}`)
  }
  return value
}

function parseErrorAtOnce (value) {
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean') throw new TypeError(`uws-body: linger.errorAtOnce must be a boolean, got ${describe(value)}`)
  return value
}

const DEFAULTS = Object.freeze({ bytes: LINGER_BYTES, timeout: LINGER_TIMEOUT, idle: LINGER_IDLE, errorAtOnce: false })
const NONE = Object.freeze({ bytes: 0, timeout: 0, idle: 0, errorAtOnce: false })

module.exports = { LINGER_BYTES, LINGER_TIMEOUT, LINGER_IDLE, parseLinger }
