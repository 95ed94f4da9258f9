'use strict'
const native = require('./lib/native')
const { BodyAccumulator, JS_TIER_MAX } = require('./lib/accumulator')
const { BodyError } = require('./lib/errors')
const { readBody } = require('./lib/read-body')

/** Native memory held by bodies, process-wide (all threads). */
function stats () {
  return native.stats()
}

module.exports = { BodyAccumulator, BodyError, readBody, stats, JS_TIER_MAX }
