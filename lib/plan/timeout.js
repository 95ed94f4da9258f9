'use strict'
// The `timeout` option: a deadline for a whole body to arrive. uWS closes a socket after
// about 10 s with no data at all, but a client that sends a byte every few seconds keeps
// a body (and whatever it pins) open for as long as it likes; the deadline ends that
// (lib/body/deadlines.js keeps it).
const { describe } = require('./check')

// Node's http.Server requestTimeout default (300 s since Node 18): a buffered body that
// has not arrived in five minutes is a client holding memory, not an upload. Streams get
// none by default (see lib/api/stream.js).
const DEFAULT_TIMEOUT = 300000
// setTimeout fires at once for more than 2^31 - 1 ms (with a warning): refused instead.
const MAX_TIMEOUT = 0x7fffffff

/** The option in ms: 0 means none (so do undefined/null for `fallback` 0, and Infinity). */
function parseTimeout (value, fallback) {
  if (value === undefined || value === null) return fallback
  if (value === Infinity || value === 0) return 0
  if (typeof value === 'number' && value > 0 && value <= MAX_TIMEOUT) return value
  throw new TypeError(`uws-body: timeout must be a number of milliseconds from 1 to ${MAX_TIMEOUT}, or 0 / Infinity for none, got ${typeof value === 'number' ? value : describe(value)}`)
}

module.exports = { DEFAULT_TIMEOUT, MAX_TIMEOUT, parseTimeout }
