'use strict'
// What the soak scripts share: their command line and the servers' JSON reports.
const { getJson } = require('../__test__/helpers/get-json')

/** The number after `--name` on the command line, or `fallback`. */
function arg (name, fallback) {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}

/** `--name` is on the command line. */
function flag (name) {
  return process.argv.includes(`--${name}`)
}

module.exports = { arg, flag, getJson }
