'use strict'
// What push() reads as a chunk, and the one TypeError for what it refuses, for both tiers:
// the JS tier calls bytesOf(); the native tier refuses the same chunks itself, and empty
// views (push returns null, src/node/raw.rs get_chunk), and JS then calls bytesOf() to
// throw the TypeError or find the view empty. Realm-independent: an ArrayBuffer from a
// `vm` context is as good as ours.
const { isArrayBuffer, isSharedArrayBuffer, isTypedArray } = require('node:util').types

// %TypedArray%.prototype.keys validates its receiver: it throws for a typed array that is
// detached or out of its buffer's bounds, and for nothing else.
const validateTypedArray = Object.getPrototypeOf(Uint8Array.prototype).keys
const { describe } = require('../plan/check')

/** The chunk's bytes as a Uint8Array over its memory (no copy); throws refusal(). `who` names the API in messages. */
function bytesOf (chunk, who = 'BodyAccumulator.push') {
  if (chunk instanceof ArrayBuffer || isArrayBuffer(chunk)) {
    // Only an empty buffer can be a detached one: the check costs nothing otherwise.
    if (chunk.byteLength === 0 && isDetached(chunk)) throw refusal(chunk, who)
    return new Uint8Array(chunk)
  }
  if (!ArrayBuffer.isView(chunk)) throw refusal(chunk, who)
  let buffer, offset, length
  try {
    // A DataView's getters throw when its buffer is detached or shrank below it.
    buffer = chunk.buffer
    offset = chunk.byteOffset
    length = chunk.byteLength
  } catch {
    throw refusal(chunk, who)
  }
  // Shared memory: another thread may write it while it is copied (the native tier
  // could not read it without a data race), so neither tier takes it.
  if (!(buffer instanceof ArrayBuffer) && !isArrayBuffer(buffer)) throw refusal(chunk, who)
  // Only an empty view can be a detached or out-of-bounds one (a typed array reports 0
  // then; a DataView's getters threw above).
  if (length === 0 && !inBounds(chunk)) throw refusal(chunk, who)
  return chunk instanceof Uint8Array ? chunk : new Uint8Array(buffer, offset, length)
}

/** The TypeError for a chunk push() does not read, saying why. */
function refusal (chunk, who = 'BodyAccumulator.push') {
  const view = ArrayBuffer.isView(chunk)
  const buffer = view ? chunk.buffer : chunk
  if (isSharedArrayBuffer(buffer)) {
    return typeError('ERR_BODY_CHUNK_SHARED', `${who}: the chunk is shared memory (a SharedArrayBuffer), which another thread may write while it is copied: copy it into a Buffer first`)
  }
  if (isArrayBuffer(buffer) && isDetached(buffer)) {
    return typeError('ERR_BODY_CHUNK_DETACHED', `${who}: the chunk's ArrayBuffer is detached (uWS neuters it when onData returns: use it inside the callback)`)
  }
  if (view) {
    return typeError('ERR_BODY_CHUNK_DETACHED', `${who}: the chunk is a view outside its ArrayBuffer (resized below it), or of an element type this build cannot read`)
  }
  return typeError('ERR_INVALID_ARG_TYPE', `${who}: chunk must be an ArrayBuffer or ArrayBufferView, got ${describe(chunk)}`)
}

function isDetached (buffer) {
  if (typeof buffer.detached === 'boolean') return buffer.detached // Node 22+
  try {
    // eslint-disable-next-line no-new
    new Uint8Array(buffer, 0, 0)
    return false
  } catch {
    return true
  }
}

function inBounds (view) {
  if (!isTypedArray(view)) return true
  try {
    validateTypedArray.call(view)
    return true
  } catch {
    return false
  }
}

function typeError (code, message) {
  const error = new TypeError(message)
  error.code = code
  return error
}

module.exports = { bytesOf, refusal }
