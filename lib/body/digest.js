'use strict'
// A body's digests: the digest headers of a request, and the digests the addon made. The
// hashing is the native core's (src/core/digest): in the pass that copies the body, or for
// a small body of known length in one call at its end (lib/body/body-store.js storeFor,
// DigestStore). A body with none pays nothing here but the option's one comparison and
// the headers' look-up; the option itself is lib/plan/digest.js's.
const { Buffer } = require('node:buffer')
const { DIGEST } = require('../native/protocol')
const { OFF, CHECK } = require('../plan/digest')
const { SHA256, SHA512, MD5, CRC32C } = DIGEST
const { CONTENT_DIGEST, REPR_DIGEST, CONTENT_MD5 } = require('./header-keys')

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
    return digestsFor(mask, req.getHeader(CONTENT_DIGEST), req.getHeader(REPR_DIGEST), req.getHeader(CONTENT_MD5))
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

module.exports = { digestsFor, requestDigests, readDigests, SCRATCH }
