'use strict'
// multer's two storage engines, with its API and results. Both are ordinary storage
// engines (`_handleFile(req, file, cb)`, `_removeFile(req, file, cb)`) that any
// multer-style code may call; multipart() also knows MemoryStorage, and puts its files
// straight into the request's shared arena instead of going through `file.stream`.
const { Buffer } = require('node:buffer')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { pipeline } = require('node:stream')

class MemoryStorage {
  _handleFile (req, file, cb) {
    const pieces = []
    file.stream.on('data', (piece) => pieces.push(piece))
    file.stream.on('error', cb)
    file.stream.on('end', () => {
      const buffer = Buffer.concat(pieces)
      cb(null, { buffer, size: buffer.length })
    })
  }

  _removeFile (req, file, cb) {
    delete file.buffer
    cb(null)
  }
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

class DiskStorage {
  constructor (options) {
    const o = options || {}
    this.getFilename = o.filename || randomName
    if (typeof o.destination === 'string') {
      // As multer: a fixed destination is created when the storage is.
      fs.mkdirSync(o.destination, { recursive: true })
      const destination = o.destination
      this.getDestination = (req, file, cb) => cb(null, destination)
    } else {
      this.getDestination = o.destination || tmpdir
    }
  }

  _handleFile (req, file, cb) {
    this.getDestination(req, file, (err, destination) => {
      if (err) return cb(err)
      this.getFilename(req, file, (err, filename) => {
        if (err) return cb(err)
        const finalPath = path.join(destination, filename)
        if (file.stream.destroyed) {
          const { MulterError } = require('./multer')
          return cb(new MulterError('STREAM_DESTROYED'))
        }
        const out = fs.createWriteStream(finalPath)
        file.path = finalPath
        writing.set(file, out)
        out.once('close', () => writing.delete(file))
        pipeline(file.stream, out, (err) => {
          if (err) return cb(err)
          cb(null, { destination, filename, path: finalPath, size: out.bytesWritten })
        })
      })
    })
  }

  _removeFile (req, file, cb) {
    const at = file.path
    delete file.destination
    delete file.filename
    delete file.path
    const out = writing.get(file)
    if (!out || out.closed) return fs.unlink(at, cb)
    const released = () => {
      out.removeListener('close', released)
      out.removeListener('error', released)
      fs.unlink(at, cb)
    }
    out.once('close', released)
    out.once('error', released)
    out.destroy()
  }
}

const memoryStorage = () => new MemoryStorage()
const diskStorage = (options) => new DiskStorage(options)

module.exports = { MemoryStorage, DiskStorage, memoryStorage, diskStorage }
