'use strict'
// The storage engines of both multipart APIs. All have multer's interface:
//   _handleFile(req, file, cb)   read `file.stream`, call back with what to add to the
//                                file (`{ path, size }`, ...) or with an error
//   _removeFile(req, file, cb)   undo it, for a request that failed
// so multer's own engines, multer-s3 and the like work in their place. The engine
// (./engine.js) puts MemoryStorage's files straight into the request's one native block
// (an arena) instead of going through `file.stream`, unless its methods were replaced.
const { Buffer } = require('node:buffer')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { pipeline, finished } = require('node:stream')
const { MulterError } = require('../native/errors')
const { readNames, describe } = require('../plan/check')

class MemoryStorage {
  _handleFile (req, file, cb) {
    const pieces = []
    file.stream.on('data', (piece) => pieces.push(piece))
    file.stream.on('error', cb)
    file.stream.on('end', () => {
      // A second copy, paid only when this engine is called through file.stream: the
      // engine's own path puts the file in the arena, one copy.
      const buffer = Buffer.concat(pieces)
      cb(null, { buffer, size: buffer.length })
    })
  }

  _removeFile (req, file, cb) {
    delete file.buffer
    cb(null)
  }
}

/** True for a MemoryStorage whose methods are its own: its files may go to the arena. */
function isArenaStorage (storage) {
  return storage instanceof MemoryStorage &&
    storage._handleFile === MemoryStorage.prototype._handleFile &&
    storage._removeFile === MemoryStorage.prototype._removeFile
}

/** multer's default file name: 16 random bytes in hex, no extension. */
function randomName (req, file, cb) {
  crypto.randomBytes(16, (err, raw) => cb(err, err ? undefined : raw.toString('hex')))
}

function tmpdir (req, file, cb) {
  cb(null, os.tmpdir())
}

// Write streams of files being written, so a removal waits for the descriptor to close.
const writing = new WeakMap()
// Files being flushed (`flush`), each with the removals waiting for its second descriptor
// to close: set before the write stream can close, so a removal never falls between.
const flushing = new WeakMap()

const DISK_OPTIONS = ['destination', 'filename', 'flush']

/**
 * multer's disk storage: `destination` (a directory, created with the storage, or a
 * function that calls back with one), `filename` (a function; default 32 random hex
 * digits, and then the file is created new: `wx`) and `flush` (each file fsynced before
 * it counts as stored, as multer 2.5 does). Whatever the application's callbacks
 * throw or pass, at once or later, becomes the file's error, never an exception out of
 * a callback of theirs.
 */
class DiskStorage {
  constructor (options) {
    if (options !== undefined && options !== null && typeof options !== 'object') throw new TypeError(`uws-body: diskStorage(options) takes an object, got ${describe(options)}`)
    const o = readNames(options, DISK_OPTIONS, 'diskStorage option')
    if (o.filename !== undefined && typeof o.filename !== 'function') throw new TypeError('uws-body: diskStorage filename must be a function')
    this.getFilename = o.filename || randomName
    this.exclusive = o.filename === undefined
    this.flush = Boolean(o.flush)
    if (typeof o.destination === 'string') {
      // As multer: a fixed destination is created when the storage is.
      fs.mkdirSync(o.destination, { recursive: true })
      const destination = o.destination
      this.getDestination = (req, file, cb) => cb(null, destination)
    } else if (o.destination === undefined) {
      this.getDestination = tmpdir
    } else if (typeof o.destination === 'function') {
      this.getDestination = o.destination
    } else {
      throw new TypeError(`uws-body: diskStorage destination must be a directory or a function, got ${describe(o.destination)}`)
    }
  }

  _handleFile (req, file, cb) {
    const done = once(cb)
    // A continuation handed to the application's callback: whatever it throws (fs's
    // ERR_INVALID_ARG_VALUE for a name with a NUL, say) is this file's error.
    const guard = (fn) => (...args) => {
      try {
        fn(...args)
      } catch (err) {
        done(err)
      }
    }
    const write = guard((destination, filename) => {
      if (typeof filename !== 'string' || filename === '') throw new TypeError(`uws-body: diskStorage filename callback gave ${describe(filename)}, not a file name`)
      if (file.stream.destroyed) return done(new MulterError('STREAM_DESTROYED'))
      const finalPath = path.join(destination, filename)
      const out = fs.createWriteStream(finalPath, { flags: this.exclusive ? 'wx' : 'w' })
      // Set before a byte is written: a request that fails removes what is there.
      file.path = finalPath
      writing.set(file, out)
      out.once('close', () => writing.delete(file))
      if (this.flush) flushing.set(file, [])
      pipeline(file.stream, out, (err) => {
        const info = err ? undefined : { destination, filename, path: finalPath, size: out.bytesWritten }
        if (err || !this.flush) {
          flushed(file)
          return done(err || null, info)
        }
        fsyncFile(finalPath, (err) => {
          flushed(file)
          done(err, err ? undefined : info)
        })
      })
    })
    call(done, () => this.getDestination(req, file, guard((err, destination) => {
      if (err) return done(err)
      if (typeof destination !== 'string' || destination === '') throw new TypeError(`uws-body: diskStorage destination callback gave ${describe(destination)}, not a directory`)
      call(done, () => this.getFilename(req, file, guard((err, filename) => {
        if (err) return done(err)
        write(destination, filename)
      })))
    })))
  }

  _removeFile (req, file, cb) {
    const waiting = flushing.get(file)
    if (waiting !== undefined) return waiting.push(() => this._removeFile(req, file, cb))
    const at = file.path
    delete file.destination
    delete file.filename
    delete file.path
    // Never created (the open failed) is removed already.
    const unlink = () => fs.unlink(at, (err) => cb(err && err.code !== 'ENOENT' ? err : null))
    const out = writing.get(file)
    if (!out || out.closed) return unlink()
    const released = () => {
      out.removeListener('close', released)
      out.removeListener('error', released)
      unlink()
    }
    out.once('close', released)
    out.once('error', released)
    out.destroy()
  }
}

/**
 * readMultipart's `(file) => Writable`: each file's bytes are piped into the stream the
 * function returns, and the file is stored when it finishes. `file.digests` (with a
 * `digest` list) is there by the time the stream's final() runs. A stream that errors, or
 * closes before it finished (destroy() without an error: Node then emits only 'close'),
 * is the request's error (ERR_STREAM_PREMATURE_CLOSE). A file cut short by the request's
 * failure (its stream destroyed with the error) destroys the Writable instead of ending
 * it, so the caller never takes a part of a file for the whole.
 */
class WritableStorage {
  constructor (handler) {
    this.handler = handler
  }

  _handleFile (req, file, cb) {
    const done = once(cb)
    let w
    const info = { fieldname: file.fieldname, originalname: file.originalname, encoding: file.encoding, mimetype: file.mimetype }
    try {
      w = this.handler(info)
    } catch (err) {
      return done(err)
    }
    if (w === null || typeof w !== 'object' || typeof w.write !== 'function' || typeof w.end !== 'function' || typeof w.on !== 'function') {
      return done(new TypeError(`uws-body: the storage function must return a Writable, got ${describe(w)}`))
    }
    const stream = file.stream
    // Its 'finish', or its error or early close, whatever comes first: once it is over.
    finished(w, (err) => done(err || null, {}))
    stream.on('error', (err) => w.destroy(err))
    // The file's digests (a `digest` list), set at the part's end, on `info` before pipe()
    // ends the Writable (its 'end' listener comes after this one), so its final() can pass
    // them on (examples/s3.js: the object's checksum).
    stream.once('end', () => { if (file.digests !== undefined) info.digests = file.digests })
    stream.pipe(w)
  }

  _removeFile (req, file, cb) {
    // The caller's stream is the caller's: a failed request destroyed it with its error.
    cb(null)
  }
}

/**
 * fsync of the file at `at` (its write stream's descriptor is closed by the time the
 * stream finished, on some Node versions: a second one; fsync is of the file, not of
 * the descriptor).
 */
function fsyncFile (at, cb) {
  fs.open(at, 'r+', (err, fd) => {
    if (err) return cb(err)
    fs.fsync(fd, (syncErr) => fs.close(fd, (closeErr) => cb(syncErr || closeErr || null)))
  })
}

/** The flush of `file` is over (or never began): the removals waiting for it go on. */
function flushed (file) {
  const waiting = flushing.get(file)
  if (waiting === undefined) return
  flushing.delete(file)
  for (const removal of waiting) removal()
}

/** Calls `run`; what it throws goes to `done`. */
function call (done, run) {
  try {
    run()
  } catch (err) {
    done(err)
  }
}

function once (cb) {
  let called = false
  return (err, info) => {
    if (called) return
    called = true
    cb(err, info)
  }
}

const memoryStorage = () => new MemoryStorage()
const diskStorage = (options) => new DiskStorage(options)

module.exports = { MemoryStorage, DiskStorage, WritableStorage, memoryStorage, diskStorage, isArenaStorage }
