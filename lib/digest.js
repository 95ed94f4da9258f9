'use strict'
// A body's digests (issue 42): the `digest` option of every reader, and the digest headers
// of a request. The hashing is the native core's (src/core/digest): in the pass that
// copies the body, or for a small body of known length in one call at its end
// (lib/body-store.js storeFor, DigestStore). A body with none pays nothing here but the
// option's one comparison and the headers' look-up.
const { Buffer } = require('node:buffer')
const { describe } = require('./options')
const { DIGEST } = require('./protocol')
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

/**
 * What a body's store is told (create()'s or digestOf()'s last arguments): null for a body
 * with nothing to check or make. A header's value is '' / undefined / null for none.
 */
function digestsFor (mask, contentDigest, reprDigest, contentMd5) {
  if (mask === OFF) return null
  const declared = isSet(contentDigest) || isSet(reprDigest) || isSet(contentMd5)
  if (!declared && mask === CHECK) return null
  return { requested: mask, contentDigest: orNull(contentDigest), reprDigest: orNull(reprDigest), contentMd5: orNull(contentMd5) }
}

const isSet = (value) => typeof value === 'string' && value !== ''
const orNull = (value) => isSet(value) ? value : null

/** A uWS HttpRequest's digest headers, or a headers object's (lower-case names). */
function requestDigests (mask, req) {
  if (mask === OFF) return null
  if (typeof req.getHeader === 'function') {
    return digestsFor(mask, req.getHeader('content-digest'), req.getHeader('repr-digest'), req.getHeader('content-md5'))
  }
  return digestsFor(mask, req['content-digest'], req['repr-digest'], req['content-md5'])
}

// The addon writes a body's digests back to back into this scratch (src/node/body.rs
// write_digests), in the order of DIGEST's bits; each is copied out into a Buffer of its own.
const ORDER = [['sha256', SHA256, 32], ['sha512', SHA512, 64], ['md5', MD5, 16], ['crc32c', CRC32C, 4]]
const SCRATCH = new Uint8Array(116)

/**
 * The digests a `mask` asked for, from what `write(SCRATCH)` (an addon call) wrote:
 * { sha256: Buffer, ... }, or null when it wrote none.
 */
function readDigests (mask, written) {
  if (written === 0) return null
  const digests = {}
  let at = 0
  for (const [name, bit, size] of ORDER) {
    if ((mask & bit) === 0) continue
    digests[name] = Buffer.from(SCRATCH.subarray(at, at + size))
    at += size
  }
  return digests
}

module.exports = { parseDigest, parseOnDigest, digestsFor, requestDigests, readDigests, SCRATCH, OFF, CHECK, NAMES }
