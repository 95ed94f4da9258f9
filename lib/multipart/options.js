'use strict'
// The options readMultipart and multipart() share, read once, with one meaning: a wrong
// type or value is a TypeError when the options are read (the program's mistake).
const { MemoryStorage } = require('./storage')
const { paramDecoder } = require('./names')
const { MIB, parseLimit, parseMaxPreallocated, parseHighWaterMark, describe } = require('../options')
const { parseTimeout, DEFAULT_TIMEOUT } = require('../timeout')
const { parseLinger } = require('../linger')

// Memory storage holds every file until the promise settles: without a bound any client
// could make the process hold what it likes. 64 MiB is an upload of a few photos or
// documents; a larger one belongs on disk or in a stream, or is asked for with `limit`.
// Streamed storage holds at most highWaterMark of file data, so it has no limit by
// default (as bodyStream); its fields, which are held, get this same bound.
const DEFAULT_MEMORY_LIMIT = 64 * MIB

/**
 * The engine's options from the application's: `limit` (bytes of the body as sent, and
 * decoded), `timeout`, `highWaterMark`, `preservePath`, `defParamCharset`,
 * `maxPreallocated`, and `linger` (the bounds on a refused body's rest, lib/linger.js).
 * Their defaults depend on whether the storage holds files in memory.
 */
function commonOptions (o, storage) {
  const memory = storage instanceof MemoryStorage
  const limit = o.limit === undefined || o.limit === null ? (memory ? DEFAULT_MEMORY_LIMIT : Infinity) : parseLimit(o.limit)
  // A buffered form (memory) gets readBody's deadline; a streamed one bodyStream's (none).
  const timeout = parseTimeout(o.timeout, memory ? DEFAULT_TIMEOUT : 0)
  const highWaterMark = parseHighWaterMark(o.highWaterMark)
  const preservePath = o.preservePath === undefined || o.preservePath === null ? false : o.preservePath
  if (typeof preservePath !== 'boolean') throw new TypeError(`uws-body: preservePath must be a boolean, got ${describe(preservePath)}`)
  return {
    limit,
    // Fields are held whatever the storage: together at most the body's limit, or for an
    // unlimited (streamed) body the memory storage's default.
    fieldsMax: limit !== Infinity ? limit : DEFAULT_MEMORY_LIMIT,
    timeout,
    highWaterMark,
    preservePath,
    decodeParam: paramDecoder(o.defParamCharset),
    maxPreallocated: parseMaxPreallocated(o.maxPreallocated),
    linger: parseLinger(o.linger)
  }
}

module.exports = { commonOptions, DEFAULT_MEMORY_LIMIT }
