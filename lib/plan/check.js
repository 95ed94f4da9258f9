'use strict'
// The checks every API's options share, made once when a reader or middleware is made: an
// options object, its names (a misspelt one names the closest), the response given. A
// wrong option *type* is the programmer's mistake: TypeError.

/**
 * Throws a TypeError for the first key of `options` that is not in `known`, naming the
 * closest known one: a misspelt option (`limt`) would otherwise be silently ignored.
 */
function checkNames (options, known, what) {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue
    const near = closest(key, known)
    throw new TypeError(`uws-body: unknown ${what} ${JSON.stringify(key)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}; known: ${known.join(', ')}`)
  }
}

/**
 * checkNames for the per-body paths: a Set of the known names, no array made unless a name
 * is unknown (a for-in over an options literal costs a few ns a key).
 */
function checkKnown (options, known, what) {
  for (const key in options) {
    if (!known.has(key)) checkNames(options, [...known], what)
  }
}

/** The known name nearest `name` by edit distance, if it is near enough to be a typo. */
function closest (name, known) {
  let best = null
  let bestDistance = Infinity
  const lower = name.toLowerCase()
  for (const k of known) {
    const d = distance(lower, k.toLowerCase())
    if (d < bestDistance) { best = k; bestDistance = d }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : null
}

function distance (a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    row = next
  }
  return row[b.length]
}

function describe (value) {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
}

// What an absent options object reads as.
const NO_OPTIONS = Object.freeze({})

/**
 * An options object as given, or NO_OPTIONS for undefined or null; anything else is a
 * TypeError naming it as `name` ('options', 'parser options', 'limits'...).
 */
function objectOption (value, name) {
  if (value === undefined || value === null) return NO_OPTIONS
  if (typeof value !== 'object') throw new TypeError(`uws-body: ${name} must be an object, got ${describe(value)}`)
  return value
}

/**
 * An API's options, checked against `names` (an unknown one is a TypeError naming the
 * closest) and each known one read once, into a plain object the API then reads: a
 * getter or a proxy is asked once, so no check can pass on one value and the code run on
 * another.
 */
function readNames (options, names, what, name = 'options') {
  const o = objectOption(options, name)
  checkNames(o, names, what)
  const given = {}
  for (const n of names) given[n] = o[n]
  return given
}

/** The onAborted option: a function, or undefined. */
function parseOnAborted (value) {
  if (value !== undefined && typeof value !== 'function') throw new TypeError('uws-body: options.onAborted must be a function')
  return value
}

// What an API needs of a uWS HttpResponse: its methods' names, and a test that reads each
// by name. A loop over the names would read res[name], a look-up by key that V8 answers
// from its megamorphic cache on every request (docs/performance.md, row 'what a request
// reads').
const READER_METHODS = { names: ['onData', 'onAborted'], has: (res) => typeof res.onData === 'function' && typeof res.onAborted === 'function' }
const PAUSABLE_METHODS = {
  names: ['onData', 'onAborted', 'pause', 'resume'],
  has: (res) => READER_METHODS.has(res) && typeof res.pause === 'function' && typeof res.resume === 'function'
}
const ANSWER_METHODS = { names: ['writeStatus', 'onData'], has: (res) => typeof res.writeStatus === 'function' && typeof res.onData === 'function' }

/**
 * Throws the TypeError for a `res` that is not a uWS HttpResponse with `methods` (one of
 * the sets above), named as `call` (readBody(res, req)...).
 */
function checkResponse (res, call, methods) {
  if (res !== null && typeof res === 'object' && methods.has(res)) return
  const extra = methods.names.includes('pause') ? ' (with pause and resume)' : ''
  throw new TypeError(`uws-body: ${call} needs a uWS HttpResponse${extra}, got ${describe(res)}`)
}

module.exports = {
  checkResponse,
  READER_METHODS,
  PAUSABLE_METHODS,
  ANSWER_METHODS,
  objectOption,
  readNames,
  parseOnAborted,
  checkNames,
  checkKnown,
  describe
}
