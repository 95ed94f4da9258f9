'use strict'

/** A seeded PRNG (xorshift32) returning floats in [0, 1): runs can be replayed exactly. */
function random (seed) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    return (x >>> 0) / 4294967296
  }
}

module.exports = { random }
