'use strict'
// The seed under ultimate-express: ultimate-express PR #369's reading (bench/seed.js
// seedReader: one preallocated Buffer up to 1 MiB of known length without
// content-encoding, else a copy per chunk and one concat, skipped for one chunk) as a
// middleware per route, with the built-ins' content-type test and endings (JSON.parse,
// ultimate-express's query parser, the Buffer).
//   lean()    the reader and nothing else: the "20-line reader" uws-body has to beat
//   parser()  inside the rest of 2.2.1's createBodyParser (AsyncResource.bind(next), the
//             req.bodyRead and method tests, a NullObject body first): the built-ins with
//             only the reading replaced, so parser / built-ins is the PR's change alone
const path = require('node:path')
const { AsyncResource } = require('node:async_hooks')
const bytes = require('bytes')
const { seedReader } = require('../seed')

const UEX = path.dirname(require.resolve('ultimate-express'))
// ultimate-express's own query parser for extended: false.
const querystring = require(require.resolve('fast-querystring', { paths: [UEX] }))

const NullObject = function () {}
NullObject.prototype = Object.create(null)

function parser (simpleType, finish, full) {
  return (options = {}) => {
    const limit = bytes(options.limit === undefined ? '100kb' : options.limit)
    return (req, res, next) => {
      if (full) {
        next = AsyncResource.bind(next)
        if (req.bodyRead) return next()
        if (!req.body) req.body = new NullObject()
      }
      const type = req.headers['content-type']
      if (!type) return next()
      const length = req.headers['content-length']
      if (full && length === '0') return next()
      const semicolon = type.indexOf(';')
      if ((semicolon < 0 ? type : type.substring(0, semicolon)) !== simpleType) return next()
      if (full) {
        if (length && +length > limit) return next(new Error('Request entity too large'))
        if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next()
      }
      let reader
      try {
        reader = seedReader(length === undefined ? -1 : +length, req.headers['content-encoding'], limit)
      } catch (err) {
        return next(err)
      }
      if (full) req.bodyRead = true
      let failed = false
      const onData = (ab) => {
        if (failed) return
        try {
          reader.push(ab)
        } catch (err) {
          failed = true
          next(err)
        }
      }
      const onEnd = () => {
        if (failed) return
        let buf
        try {
          buf = reader.finish()
        } catch (err) {
          return next(err)
        }
        finish(req, next, buf, options)
      }
      // As the built-ins: straight from uWS while no chunk has reached the request stream.
      if (!req.receivedData) {
        req._res.onData((ab, isLast) => {
          onData(ab)
          if (isLast) onEnd()
        })
      } else {
        req.on('data', (c) => onData(c.buffer.slice(c.byteOffset, c.byteOffset + c.length)))
        req.on('end', onEnd)
      }
    }
  }
}

// The built-ins' endings (json's strict test is on a body not yet parsed, so never fails).
const json = (req, next, buf, options) => {
  if (buf.length === 0) {
    req.body = {}
    return next()
  }
  try {
    req.body = JSON.parse(buf.toString(), options.reviver)
  } catch (err) {
    return next(err)
  }
  next()
}
const raw = (req, next, buf) => {
  req.body = buf
  next()
}
const urlencoded = (req, next, buf) => {
  try {
    req.body = querystring.parse(buf.toString())
  } catch (err) {
    return next(err)
  }
  next()
}

const parsers = (full) => ({
  json: parser('application/json', json, full),
  raw: parser('application/octet-stream', raw, full),
  urlencoded: parser('application/x-www-form-urlencoded', urlencoded, full)
})

module.exports = { lean: () => parsers(false), parser: () => parsers(true) }
