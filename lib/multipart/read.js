'use strict'
// readMultipart(res, req, options): a multipart/form-data body of a bare uWS request,
// as { fields, files }. The native parser (./upload.js) puts each byte once where its
// part goes: a field's value into a string, a file kept in memory into one arena shared
// by the body's files (one allocation, one copy), a file for disk or for the caller's
// Writable into Buffers handed on as chunks arrive.
//
// Where files go (`storage`):
//   'memory' (default)  file.buffer: a range of the arena Buffer, given when the body ends
//   { dest }            file.path: a new file in `dest` named by 32 random hex digits,
//                       never by the client; written by one fs queue per request (one fd
//                       open at a time, whatever the number of files), the client paused
//                       while more than highWaterMark bytes wait for the disk
//   (file) => Writable  the caller's stream for each file; the client is paused while a
//                       write() returned false (until 'drain'), as pipe() does, and while
//                       ended streams still hold more than highWaterMark bytes; every
//                       stream's 'finish' is awaited before resolving
// On any failure (what the client sent, a limit, an abort, the timeout, a storage error)
// the promise rejects once, after the native upload is freed, the caller's streams are
// destroyed and every file written so far is closed and unlinked.
const { Buffer } = require('node:buffer')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { AsyncResource } = require('node:async_hooks')
const { MultipartUpload, FIELD, ARENA, STREAM } = require('./upload')
const errors = require('../errors')
const { basename, unescapeName, decodeField } = require('./names')
const { parseLimit, parseContentLength, isIdentity, describe, DEFAULT_MAX_PREALLOCATED, INVALID } = require('../options')
const { parseTimeout, startTimer, DEFAULT_TIMEOUT } = require('../timeout')
const { bindOnce } = require('../async-context')

const KIB = 1024
const MIB = 1024 * KIB

// Memory storage holds every file until the promise settles: without a bound any client
// could make the process hold what it likes. 64 MiB is an upload of a few photos or
// documents; a larger one belongs on disk or in a stream, or is asked for with `limit`.
// Disk and handler storage hold at most highWaterMark of file data, so they have no
// limit by default (as bodyStream); their fields, which are held, get this same bound.
const DEFAULT_MEMORY_LIMIT = 64 * MIB
const DEFAULT_HIGH_WATER_MARK = 512 * KIB

// The order multipartCreate takes them in, with busboy's defaults (and Node's for the
// header block's size). Each is the most allowed (inclusive), as multer 2.5 means them.
const LIMITS = [
  ['fieldNameSize', Infinity],
  ['fieldSize', 1 * MIB],
  ['fields', Infinity],
  ['fileSize', Infinity],
  ['files', Infinity],
  ['parts', Infinity],
  ['headerPairs', 2000],
  ['headerSize', 16 * KIB]
]
const LIMIT_NAMES = new Set(LIMITS.map(([name]) => name))

function parseLimits (limits) {
  if (limits === undefined || limits === null) return LIMITS.map(([, value]) => value)
  if (typeof limits !== 'object') throw new TypeError(`uws-body: limits must be an object, got ${describe(limits)}`)
  for (const key of Object.keys(limits)) {
    if (!LIMIT_NAMES.has(key)) throw new TypeError(`uws-body: unknown limit ${JSON.stringify(key)} (known: ${[...LIMIT_NAMES].join(', ')})`)
  }
  return LIMITS.map(([name, fallback]) => {
    const value = limits[name]
    if (value === undefined || value === null) return fallback
    if (typeof value !== 'number' || !(value >= 0)) throw new TypeError(`uws-body: limits.${name} must be a non-negative number, got ${describe(value)}`)
    return Math.floor(value)
  })
}

function parseStorage (storage) {
  if (storage === undefined || storage === null || storage === 'memory') return { kind: 'memory' }
  if (typeof storage === 'function') return { kind: 'handler', handler: storage }
  if (typeof storage === 'object' && typeof storage.dest === 'string' && storage.dest !== '') {
    return { kind: 'disk', dest: storage.dest }
  }
  throw new TypeError(`uws-body: storage must be 'memory', { dest: directory } or a function (file) => Writable, got ${describe(storage)}`)
}

function parseCharset (value) {
  if (value === undefined || value === null) return 'latin1'
  if (value === 'latin1' || value === 'utf8' || value === 'utf-8') return value === 'latin1' ? 'latin1' : 'utf8'
  throw new TypeError(`uws-body: defParamCharset must be 'latin1' or 'utf8', got ${typeof value === 'string' ? JSON.stringify(value) : describe(value)}`)
}

function headerOf (req, name) {
  if (req !== null && typeof req === 'object' && typeof req.getHeader === 'function') return req.getHeader(name)
  if (req !== null && typeof req === 'object') return req[name]
  throw new TypeError(`uws-body: readMultipart(res, req) needs a uWS HttpRequest or a headers object, got ${describe(req)}`)
}

/**
 * Reads a multipart/form-data body of a uWS request. Call it synchronously in the route
 * handler: it reads the headers from `req` and owns res.onData and res.onAborted.
 * Resolves with `{ fields, files }`; rejects once with a BodyError for what the client
 * sent or did, or with the storage's own error (disk, the caller's Writable).
 */
function readMultipart (res, req, options) {
  if (res === null || typeof res !== 'object' || typeof res.onData !== 'function' || typeof res.onAborted !== 'function' ||
      typeof res.pause !== 'function' || typeof res.resume !== 'function') {
    throw new TypeError(`uws-body: readMultipart(res, req) needs a uWS HttpResponse (with pause and resume), got ${describe(res)}`)
  }
  if (options !== undefined && options !== null && typeof options !== 'object') {
    throw new TypeError(`uws-body: options must be an object, got ${describe(options)}`)
  }
  const o = options || {}
  const contentType = headerOf(req, 'content-type')
  const contentLength = headerOf(req, 'content-length')
  const contentEncoding = headerOf(req, 'content-encoding')
  const storage = parseStorage(o.storage)
  const limits = parseLimits(o.limits)
  const memory = storage.kind === 'memory'
  const limit = o.limit === undefined || o.limit === null ? (memory ? DEFAULT_MEMORY_LIMIT : Infinity) : parseLimit(o.limit)
  // A buffered body (memory) gets readBody's deadline; a streamed one bodyStream's (none).
  const timeout = parseTimeout(o.timeout, memory ? DEFAULT_TIMEOUT : 0)
  const highWaterMark = o.highWaterMark === undefined || o.highWaterMark === null ? DEFAULT_HIGH_WATER_MARK : o.highWaterMark
  if (typeof highWaterMark !== 'number' || !(highWaterMark >= 0)) {
    throw new TypeError(`uws-body: highWaterMark must be a non-negative number, got ${describe(highWaterMark)}`)
  }
  const paramCharset = parseCharset(o.defParamCharset)
  const preservePath = o.preservePath === undefined || o.preservePath === null ? false : o.preservePath
  if (typeof preservePath !== 'boolean') throw new TypeError(`uws-body: preservePath must be a boolean, got ${describe(preservePath)}`)
  let onAborted = o.onAborted
  if (onAborted !== undefined && typeof onAborted !== 'function') throw new TypeError('uws-body: options.onAborted must be a function')
  if (onAborted !== undefined) onAborted = bindOnce(onAborted)

  return new Promise((resolve, reject) => {
    const read = new Read(res, { resolve, reject, storage, limits, limit, timeout, highWaterMark, paramCharset, preservePath, onAborted })
    read.start(contentType, contentLength, contentEncoding)
  })
}

class Read {
  constructor (res, settings) {
    Object.assign(this, settings)
    this.res = res
    this.upload = null
    this.store = null
    this.settled = false
    this.parsed = false
    this.paused = false
    this.expected = -1
    this.received = 0
    // Field values held: bounded by `limit`, or for streamed storage with no limit by
    // DEFAULT_MEMORY_LIMIT (the file data is streamed; the fields are not).
    this.fieldChars = 0
    this.fieldsMax = this.limit !== Infinity ? this.limit : DEFAULT_MEMORY_LIMIT
    this.fields = Object.create(null)
    this.files = []
    // Memory storage: each file's [start, end) in the arena, two numbers a file.
    this.ranges = []
    this.head = null
    this.file = null
    this.clearTimer = null
    this.async = new AsyncResource('UWS_BODY_MULTIPART', { requireManualDestroy: true })
  }

  start (contentType, contentLength, contentEncoding) {
    const res = this.res
    res.onAborted(() => {
      res.aborted = true
      if (!this.settled) this.async.runInAsyncScope(this.fail, this, errors.aborted(this.expected, this.received))
      if (this.onAborted !== undefined) this.onAborted()
    })
    // Attached whatever happens next: bytes of a refused body are dropped without work,
    // which keeps the connection in step, and the handler may answer at once.
    res.onData((chunk, isLast) => {
      if (this.settled || this.parsed) return
      this.async.runInAsyncScope(this.write, this, chunk, isLast)
    })
    const early = this.refusal(contentType, contentLength, contentEncoding)
    if (early !== null) return this.fail(early)
    this.clearTimer = startTimer(this.timeout, () => {
      this.async.runInAsyncScope(this.fail, this, errors.timedOut(this.timeout, this.received))
    })
  }

  /** A BodyError for a body refused before any byte is read, or null. */
  refusal (contentType, contentLength, contentEncoding) {
    // uWS gives '' for a header the request does not have: not multipart (the native
    // side would say "no boundary").
    if (contentType === undefined || contentType === null || contentType === '') return errors.bodyError('ERR_MULTIPART_CONTENT_TYPE', {})
    const expected = parseContentLength(contentLength === '' ? undefined : contentLength)
    if (expected === INVALID) return errors.bodyError('ERR_BODY_INVALID_LENGTH', {})
    this.expected = expected
    // busboy and multer read the bytes as sent: an encoded body is not multipart.
    const encoding = contentEncoding === undefined || contentEncoding === null ? null : String(contentEncoding).trim().toLowerCase()
    if (!isIdentity(encoding)) return errors.bodyError('ERR_BODY_ENCODING_UNSUPPORTED', { encoding })
    if (expected > this.limit) return errors.tooLarge(this.limit, expected, 0)
    const memory = this.storage.kind === 'memory'
    const preallocate = memory && expected >= 0 ? Math.min(expected, DEFAULT_MAX_PREALLOCATED) : 0
    const upload = MultipartUpload.create(String(contentType), this.limits, preallocate, expected, this)
    if (!(upload instanceof MultipartUpload)) return errors.multipartError(upload)
    this.upload = upload
    if (this.storage.kind === 'disk') {
      this.store = new DiskStore(this.storage.dest, this.highWaterMark, () => this.space(), (e) => this.fail(e))
    } else if (this.storage.kind === 'handler') {
      this.store = new HandlerStore(this.storage.handler, this.highWaterMark, () => this.space(), (e) => this.fail(e))
    }
    return null
  }

  write (chunk, isLast) {
    this.received += chunk.byteLength
    if (this.received > this.limit) return this.fail(errors.tooLarge(this.limit, this.expected, this.received))
    try {
      this.upload.write(chunk)
      if (isLast && !this.settled && !this.parsed) this.upload.end()
    } catch (error) {
      // The caller's handler threw, or its stream refused a write.
      return this.fail(error)
    }
    if (!this.settled && !this.parsed && this.store !== null && this.store.full()) this.pause()
  }

  pause () {
    if (!this.paused && !this.res.aborted) {
      this.paused = true
      this.res.pause()
    }
  }

  resume () {
    if (this.paused) {
      this.paused = false
      if (!this.res.aborted) this.res.resume()
    }
  }

  /** The store has room again. */
  space () {
    if (this.settled || this.store.full()) return
    this.resume()
  }

  // The consumer of MultipartUpload (see ./upload.js).

  part (head) {
    let name = head.name === null ? '' : head.name
    if (this.paramCharset === 'utf8') name = Buffer.from(name, 'latin1').toString('utf8')
    name = unescapeName(name)
    this.head = head
    if (!head.isFile) {
      this.fieldName = name
      return FIELD
    }
    let originalname = head.filename === null ? '' : head.filename
    if (!head.filenameUtf8 && this.paramCharset === 'utf8') originalname = Buffer.from(originalname, 'latin1').toString('utf8')
    if (!this.preservePath) originalname = basename(originalname)
    originalname = unescapeName(originalname)
    // Each storage's entries get their final shape at once (an added or deleted property
    // later would change the object's hidden class on every file).
    const kind = this.storage.kind
    const file = kind === 'memory'
      ? { fieldname: name, originalname, encoding: head.encoding, mimetype: head.mimeType, size: 0, buffer: null }
      : kind === 'disk'
        ? { fieldname: name, originalname, encoding: head.encoding, mimetype: head.mimeType, size: 0, path: '' }
        : { fieldname: name, originalname, encoding: head.encoding, mimetype: head.mimeType, size: 0 }
    this.file = file
    this.files.push(file)
    if (this.store === null) return ARENA
    this.store.open(file)
    return STREAM
  }

  field (value) {
    if (typeof value !== 'string') value = decodeField(value, this.head.charset)
    this.head = null
    this.fieldChars += value.length
    if (this.fieldChars > this.fieldsMax) {
      return this.fail(errors.tooLarge(this.fieldsMax, this.expected, this.received))
    }
    const fields = this.fields
    const name = this.fieldName
    const held = fields[name]
    if (held === undefined) fields[name] = value
    else if (typeof held === 'string') fields[name] = [held, value]
    else held.push(value)
  }

  data (buffer) {
    this.file.size += buffer.length
    this.store.write(buffer)
  }

  partEnd (range) {
    // An error from here to the next part's head names no part.
    this.head = null
    if (this.file === null) return
    if (range !== null) {
      // Where the file is in the arena, which exists once the body is done.
      this.ranges.push(range[0], range[1])
      this.file.size = range[1] - range[0]
    } else {
      this.store.close()
    }
    this.file = null
  }

  done (arena) {
    this.parsed = true
    this.upload = null
    if (this.clearTimer !== null) this.clearTimer()
    // Nothing more is parsed: the rest of the body (an epilogue) is read and dropped.
    this.resume()
    if (this.store === null) {
      const { files, ranges } = this
      const empty = Buffer.alloc(0)
      for (let i = 0; i < files.length; i++) {
        files[i].buffer = arena === null ? empty : arena.subarray(ranges[2 * i], ranges[2 * i + 1])
      }
      return this.succeed()
    }
    this.store.finish(() => this.succeed())
  }

  fail (fields) {
    // From the native parser: its error's fields; from anywhere else: an Error.
    const error = fields instanceof Error ? fields : errors.multipartError(fields, this.head === null ? undefined : this.currentName())
    if (this.settled) return
    this.settled = true
    if (this.upload !== null) {
      this.upload.abort()
      this.upload = null
    }
    this.release()
    const reject = () => this.reject(error)
    if (this.store === null) return reject()
    this.store.destroy(error, reject)
  }

  currentName () {
    return this.head.isFile ? (this.file !== null ? this.file.fieldname : undefined) : this.fieldName
  }

  succeed () {
    if (this.settled) return
    this.settled = true
    this.release()
    this.resolve({ fields: this.fields, files: this.files })
  }

  release () {
    if (this.clearTimer !== null) {
      this.clearTimer()
      this.clearTimer = null
    }
    this.resume()
    this.async.emitDestroy()
  }
}

// fs.writev takes at most IOV_MAX (1024 on Linux) buffers per call.
const WRITEV_MAX = 1024
// Files being written at once: each fs call is a round trip through libuv's thread pool,
// so a form of many small files written one at a time waits on latency (50 000 one-byte
// files: 37 s one at a time here, 13 s eight at a time); a few in flight hide some of it
// without taking many fds.
const OPEN_MAX = 8

/**
 * Writes the request's files into `dest`: each a new file ('wx': never an existing one)
 * opened, written (writev of the Buffers as they came) and closed in order, up to
 * OPEN_MAX files at once. `full()` while more than highWaterMark bytes wait for the disk;
 * `space()` is called as they go.
 */
class DiskStore {
  constructor (dest, highWaterMark, space, error) {
    this.dest = dest
    this.highWaterMark = highWaterMark
    this.onSpace = space
    this.onError = error
    this.queued = 0
    this.current = null
    this.active = 0
    this.waiting = []
    this.jobs = []
    this.inflight = 0
    this.dead = false
    this.idle = null
    this.removed = null
  }

  full () {
    return this.queued > this.highWaterMark
  }

  open (file) {
    file.path = path.join(this.dest, crypto.randomBytes(16).toString('hex'))
    const job = { path: file.path, fd: null, buffers: [], ended: false, busy: false, started: false, closed: false }
    this.jobs.push(job)
    this.current = job
    if (this.active < OPEN_MAX) this.start(job)
    else this.waiting.push(job)
  }

  start (job) {
    this.active++
    job.started = true
    this.step(job)
  }

  write (buffer) {
    this.queued += buffer.length
    this.current.buffers.push(buffer)
    this.step(this.current)
  }

  close () {
    this.current.ended = true
    this.step(this.current)
    this.current = null
  }

  /** `done()` once every file is written and closed. */
  finish (done) {
    this.idle = done
    this.checkIdle()
  }

  checkIdle () {
    if (this.idle !== null && this.active === 0 && this.waiting.length === 0) {
      const idle = this.idle
      this.idle = null
      idle()
    }
  }

  step (job) {
    if (job.busy || !job.started || job.closed || this.dead) return
    if (job.fd === null) {
      this.call(job, (cb) => fs.open(job.path, 'wx', cb), (fd) => {
        job.fd = fd
      }, true)
    } else if (job.buffers.length > 0) {
      const buffers = job.buffers.length <= WRITEV_MAX ? job.buffers : job.buffers.slice(0, WRITEV_MAX)
      job.buffers = job.buffers.length <= WRITEV_MAX ? [] : job.buffers.slice(WRITEV_MAX)
      this.call(job, (cb) => fs.writev(job.fd, buffers, null, cb), (written) => {
        this.queued -= written
        let n = written
        while (buffers.length > 0 && n >= buffers[0].length) n -= buffers.shift().length
        // A short write (a full disk, a signal): the rest goes again, first.
        if (buffers.length > 0) job.buffers.unshift(buffers[0].subarray(n), ...buffers.slice(1))
        if (!this.full()) this.onSpace()
      })
    } else if (job.ended) {
      // Forgotten before the call: a failure meanwhile must not close it again (the
      // number may by then belong to another file).
      const fd = job.fd
      job.fd = null
      this.call(job, (cb) => fs.close(fd, cb), () => {
        job.closed = true
        this.active--
        const next = this.waiting.shift()
        if (next !== undefined) this.start(next)
        this.checkIdle()
      })
    }
  }

  /** Runs one fs call for `job`; `then(result)` on success, the request fails on error. */
  call (job, run, then, opened = false) {
    job.busy = true
    this.inflight++
    run((err, result) => {
      job.busy = false
      this.inflight--
      // An fd opened after the request failed is closed by remove().
      if (this.dead) {
        if (opened && err === null) job.fd = result
        if (this.inflight === 0) this.remove()
        return
      }
      if (err) return this.onError(err)
      then(result)
      this.step(job)
    })
  }

  /** Stops writing; closes and unlinks every file (once no fs call is in flight), then `done()`. */
  destroy (error, done) {
    this.dead = true
    this.queued = 0
    this.removed = done
    if (this.inflight === 0) this.remove()
  }

  remove () {
    const done = this.removed
    this.removed = null
    if (done === null) return
    const jobs = this.jobs
    this.jobs = []
    let left = 1
    const one = () => { if (--left === 0) done() }
    for (const job of jobs) {
      if (job.fd !== null) {
        left++
        fs.close(job.fd, one)
        job.fd = null
      }
      // Unlinked whether or not it was opened yet: ENOENT is fine.
      left++
      fs.unlink(job.path, one)
    }
    one()
  }
}

/**
 * Hands each file to the caller's Writable. `full()` while the current stream's write()
 * asked to wait (until its 'drain') or while ended streams still hold more than
 * highWaterMark bytes (until their 'finish').
 */
class HandlerStore {
  constructor (handler, highWaterMark, space, error) {
    this.handler = handler
    this.highWaterMark = highWaterMark
    this.onSpace = space
    this.onError = error
    this.current = null
    this.waiting = false
    this.unfinished = new Set()
    this.idle = null
    this.dead = false
  }

  full () {
    if (this.waiting) return true
    let held = 0
    for (const w of this.unfinished) if (w !== this.current) held += w.writableLength
    return held > this.highWaterMark
  }

  open (file) {
    const w = this.handler({ fieldname: file.fieldname, originalname: file.originalname, encoding: file.encoding, mimetype: file.mimetype })
    if (w === null || typeof w !== 'object' || typeof w.write !== 'function' || typeof w.end !== 'function' || typeof w.once !== 'function') {
      throw new TypeError(`uws-body: the storage function must return a Writable, got ${describe(w)}`)
    }
    this.current = w
    this.unfinished.add(w)
    w.on('error', (err) => {
      if (!this.dead) this.onError(err)
    })
    w.once('finish', () => {
      this.unfinished.delete(w)
      if (this.dead) return
      if (this.idle !== null && this.unfinished.size === 0) {
        const idle = this.idle
        this.idle = null
        return idle()
      }
      this.onSpace()
    })
  }

  write (buffer) {
    const w = this.current
    if (!w.write(buffer) && !this.waiting) {
      this.waiting = true
      w.once('drain', () => {
        this.waiting = false
        if (!this.dead) this.onSpace()
      })
    }
  }

  close () {
    const w = this.current
    this.current = null
    // 'drain' never comes after end(): 'finish' (counted by full()) takes over.
    this.waiting = false
    w.end()
  }

  finish (done) {
    if (this.unfinished.size === 0) return done()
    this.idle = done
  }

  destroy (error, done) {
    this.dead = true
    for (const w of this.unfinished) {
      if (typeof w.destroy === 'function') w.destroy(error)
    }
    this.unfinished.clear()
    done()
  }
}

module.exports = { readMultipart, basename, DEFAULT_MEMORY_LIMIT }
