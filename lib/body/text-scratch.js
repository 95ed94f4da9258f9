'use strict'
// Reused Buffers for bodies of the JS tier that are only ever decoded to a string
// (AS_TEXT: readText, the json/text/urlencoded parsers; Node 24 reads such text up to
// TEXT_JS_TIER_MAX in JS, lib/body/body-store.js).
//
// Such a body needs its bytes for one toString(). A fresh Buffer per body is a fresh
// ArrayBuffer (or a slice of Node's shared slab, itself garbage every few bodies) that V8
// counts and must collect (docs/performance.md, row 'text scratch').
//
// A Buffer here never reaches the program, so no body can see another's bytes:
// finishString decodes only the bytes its body wrote, then gives the Buffer back, and
// finish() hands out a Buffer of the body's exact length, never one of these.
const { Buffer } = require('node:buffer')

// The smallest class. Below it a body takes a slice of Node's slab (Buffer.allocUnsafe)
// instead: a class would hold more memory for a body that waits for its bytes than the
// body (up to 2x the body from here on).
const MIN = 1024
// The largest Buffer kept: the class of the largest text body the JS tier reads.
const MAX = 256 * 1024
// Idle bytes kept, over all classes: a few bodies of each size in flight at once.
const IDLE_MAX = 2 * 1024 * 1024

const MIN_SHIFT = Math.log2(MIN)
// Per power of two from MIN to MAX, the idle Buffers of that length, last given first.
const idle = Array.from({ length: Math.log2(MAX) - MIN_SHIFT + 1 }, () => [])
let idleBytes = 0

// For n from MIN to MAX.
const classOf = (n) => Math.ceil(Math.log2(n)) - MIN_SHIFT

/** A Buffer of at least `n` bytes that the caller gives back, or null outside MIN..MAX. */
function take (n) {
  if (n < MIN || n > MAX) return null
  const index = classOf(n)
  const buf = idle[index].pop()
  if (buf === undefined) return Buffer.allocUnsafeSlow(MIN << index)
  idleBytes -= buf.length
  return buf
}

/** Takes back a Buffer from take(), once, from its only holder; dropped if over IDLE_MAX. */
function give (buf) {
  if (idleBytes + buf.length > IDLE_MAX) return
  idle[classOf(buf.length)].push(buf)
  idleBytes += buf.length
}

/** Idle bytes now (tests). */
const idleSize = () => idleBytes

module.exports = { take, give, idleSize, MIN, MAX, IDLE_MAX }
