'use strict'
// The `digest` and `onDigest` options of every reader: which digests a body makes, and
// whether declared ones are checked (lib/body/digest.js reads the request's headers and
// the digests made).
const { describe } = require('./check')
const { DIGEST } = require('../native/protocol')
const { SHA256, SHA512, MD5, CRC32C } = DIGEST

// The algorithms by their names in the API (`digest: ['sha256']`, `digests.sha256`).
const ALGORITHMS = { __proto__: null, sha256: SHA256, sha512: SHA512, md5: MD5, crc32c: CRC32C }
const NAMES = Object.keys(ALGORITHMS)

// The parsed option: OFF (`digest: false`: nothing checked, nothing made), else the mask
// of the digests asked for, 0 for none (declared digests are still checked).
const OFF = -1
const CHECK = 0

/** The `digest` option: true or undefined (check what is declared), false, or names. */
function parseDigest (value) {
  if (value === undefined || value === null || value === true) return CHECK
  if (value === false) return OFF
  if (Array.isArray(value)) {
    let mask = CHECK
    for (const name of value) {
      const bit = typeof name === 'string' ? ALGORITHMS[name] : undefined
      if (bit === undefined) throw new TypeError(`uws-body: unknown digest ${JSON.stringify(name)}; known: ${NAMES.join(', ')}`)
      mask |= bit
    }
    return mask
  }
  throw new TypeError(`uws-body: digest must be true, false or an array of ${NAMES.join(', ')}, got ${describe(value)}`)
}

/** The onDigest option: a function, or undefined. */
function parseOnDigest (value) {
  if (value !== undefined && typeof value !== 'function') throw new TypeError('uws-body: options.onDigest must be a function')
  return value
}

module.exports = { parseDigest, parseOnDigest, OFF, CHECK }
