'use strict'
// The limits of a multipart form, for readMultipart and multipart() alike: one table of
// names and defaults (busboy's names; its defaults, and Node's for a header block), one
// check. Each limit is the most allowed, inclusive: `fileSize: 10` accepts a 10-byte file
// (multer 2's meaning; busboy alone trips on reaching the value).
const { MIB, KIB } = require('../plan/limits')
const { checkNames, objectOption } = require('../plan/check')

const DEFAULTS = Object.freeze({
  fieldNameSize: Infinity, // bytes of a name as sent
  fieldSize: 1 * MIB, // bytes of one field's value
  fields: Infinity, // fields (non-file parts)
  fileSize: Infinity, // bytes of one file
  files: Infinity, // file parts
  parts: Infinity, // parts of any kind
  headerPairs: 2000, // header lines of one part
  headerSize: 16 * KIB, // bytes of one part's header block
  fieldNestingDepth: Infinity, // `[` groups in a field's name: `a[b][c]` is 2
  fieldArrayIndexLimit: Infinity // the largest `[n]` index in a field's name
})
const NAMES = Object.keys(DEFAULTS)

/**
 * The limits object an application gave (or undefined/null), as a complete frozen set.
 * Throws a TypeError for an unknown name (naming the closest known one) and for a value
 * that is not a non-negative integer or Infinity (multer's rule and message: busboy
 * compares most limits with ===, so 1.5 would silently disable one).
 */
function parseLimits (limits) {
  if (limits === undefined || limits === null) return DEFAULTS
  objectOption(limits, 'limits')
  checkNames(limits, NAMES, 'limit')
  const parsed = { ...DEFAULTS }
  for (const name of NAMES) {
    const value = limits[name]
    if (value === undefined || value === null) continue
    if (!((Number.isInteger(value) && value >= 0) || value === Infinity)) {
      throw new TypeError(`Expected limits.${name} to be a non-negative integer or Infinity`)
    }
    parsed[name] = value
  }
  return Object.freeze(parsed)
}

module.exports = { DEFAULTS, parseLimits }
