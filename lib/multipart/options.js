'use strict'
// Each multipart API's options, read once at its entry into one frozen value that the
// engine and the adapter read: a wrong name, type or value is a TypeError then (the
// program's mistake). readOptions for readMultipart, multerOptions for multipart().
const { getDefaultHighWaterMark } = require('node:stream')
const { MemoryStorage, DiskStorage, WritableStorage, diskStorage, memoryStorage, isArenaStorage } = require('./storage')
const { parseLimits } = require('./limits')
const { paramDecoder, fieldDecoder } = require('./names')
const { MIB, parseLimit, parseMaxPreallocated, parseHighWaterMark } = require('../plan/limits')
const { checkNames, describe, readNames, parseOnAborted } = require('../plan/check')
const { parseTimeout, DEFAULT_TIMEOUT } = require('../plan/timeout')
const { parseLinger } = require('../plan/linger')
const { parseDigest } = require('../plan/digest')

// Memory storage holds every file until the promise settles: without a bound any client
// could make the process hold what it likes. 64 MiB is an upload of a few photos or
// documents; a larger one belongs on disk or in a stream, or is asked for with `limit`.
// Streamed storage holds at most highWaterMark of file data, so it has no limit by
// default (as bodyStream); its fields, which are held, get this same bound.
const DEFAULT_MEMORY_LIMIT = 64 * MIB

const READ_OPTIONS = ['storage', 'limits', 'limit', 'timeout', 'highWaterMark', 'defParamCharset', 'defCharset', 'preservePath', 'maxPreallocated', 'linger', 'onAborted', 'digest']
// multer's options, and uws-body's own (the same as readMultipart's). fileHwm is multer's
// name for the file streams' mark, readMultipart's highWaterMark.
const MULTER_OPTIONS = ['storage', 'dest', 'limits', 'fileFilter', 'preservePath', 'defParamCharset', 'defCharset', 'fileHwm',
  'streamHandler', 'limit', 'timeout', 'highWaterMark', 'maxPreallocated', 'linger', 'digest']

/**
 * readMultipart's options: { storage, arena, limits (checked, or a function of the
 * request's headers, checked per request), onAborted } and the engine's (commonOptions).
 */
function readOptions (options) {
  const o = readNames(options, READ_OPTIONS, 'readMultipart option', 'readMultipart options')
  const storage = readStorage(o.storage)
  const limits = limitsOption(o.limits)
  const common = commonOptions(o, storage)
  const onAborted = parseOnAborted(o.onAborted)
  return Object.freeze({ ...common, storage, arena: isArenaStorage(storage), limits, onAborted, busboyMessages: false })
}

/** readMultipart's `storage`: 'memory', { dest }, (file) => Writable, or an engine. */
function readStorage (storage) {
  if (storage === undefined || storage === null || storage === 'memory') return new MemoryStorage()
  if (typeof storage === 'function') return new WritableStorage(storage)
  if (typeof storage === 'object' && typeof storage._handleFile === 'function' && typeof storage._removeFile === 'function') return storage
  const dest = typeof storage === 'object' ? storage.dest : undefined
  if (typeof dest === 'string' && dest !== '') {
    checkNames(storage, ['dest'], 'storage option')
    return new DiskStorage({ destination: dest })
  }
  throw new TypeError(`uws-body: storage must be 'memory', { dest: directory }, a function (file) => Writable or a storage engine, got ${describe(storage)}`)
}

/** `limits`: an object, checked now, or a function (its answer is checked per request: limitsOf). */
function limitsOption (limits) {
  return typeof limits === 'function' ? limits : parseLimits(limits)
}

/**
 * The limits of one request: `limits` (limitsOption's) itself, or what its function
 * answers for `req`, checked (undefined: the defaults). Throws what the function throws,
 * and the check's TypeError.
 */
function limitsOf (limits, req) {
  return typeof limits === 'function' ? parseLimits(limits(req)) : limits
}

/**
 * multipart()'s options: { storage, arena, limits (as readMultipart's, of the request),
 * fileFilter and streamHandler (or null) } and the engine's (commonOptions).
 */
function multerOptions (given) {
  if (given === null || (given !== undefined && typeof given !== 'object')) throw new TypeError('Expected object for argument options')
  const options = readNames(given, MULTER_OPTIONS, 'multipart option')
  const storage = options.storage ? options.storage : options.dest ? diskStorage({ destination: options.dest }) : memoryStorage()
  if (typeof storage !== 'object' || typeof storage._handleFile !== 'function' || typeof storage._removeFile !== 'function') {
    throw new TypeError(`uws-body: storage must be a storage engine (_handleFile and _removeFile), got ${describe(storage)}`)
  }
  const limits = limitsOption(options.limits)
  if (options.fileFilter !== undefined && typeof options.fileFilter !== 'function') throw new TypeError('uws-body: fileFilter must be a function')
  // multer's check and message.
  if (options.streamHandler !== undefined && typeof options.streamHandler !== 'function') throw new TypeError('Expected streamHandler to be a function')
  // multer's file streams are busboy's, whose mark is Node's Readable default.
  const highWaterMark = options.highWaterMark !== undefined ? options.highWaterMark : options.fileHwm !== undefined ? options.fileHwm : getDefaultHighWaterMark(false)
  const preservePath = options.preservePath === undefined ? undefined : Boolean(options.preservePath)
  const common = commonOptions({ ...options, highWaterMark, preservePath }, storage)
  return Object.freeze({ ...common, storage, arena: isArenaStorage(storage), limits, fileFilter: options.fileFilter || null, streamHandler: options.streamHandler || null, busboyMessages: true })
}

/**
 * The engine's options from the application's: `limit` (bytes of the body as sent, and
 * decoded), `timeout`, `highWaterMark`, `preservePath`, `defParamCharset`, `defCharset`,
 * `maxPreallocated`, and `linger` (the bounds on a refused body's rest, lib/plan/linger.js).
 * Their defaults depend on whether the storage holds files in memory.
 */
function commonOptions (o, storage) {
  const memory = storage instanceof MemoryStorage
  const limit = o.limit === undefined || o.limit === null ? (memory ? DEFAULT_MEMORY_LIMIT : Infinity) : parseLimit(o.limit)
  const highWaterMark = parseHighWaterMark(o.highWaterMark)
  const maxPreallocated = parseMaxPreallocated(o.maxPreallocated)
  // A buffered form (memory) gets readBody's deadline; a streamed one bodyStream's (none).
  const timeout = parseTimeout(o.timeout, memory ? DEFAULT_TIMEOUT : 0)
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
    decodeDefault: fieldDecoder(o.defCharset),
    maxPreallocated,
    linger: parseLinger(o.linger),
    digest: parseDigest(o.digest)
  }
}

module.exports = { readOptions, multerOptions, limitsOf }
