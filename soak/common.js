'use strict'
// What the soak scripts share: their command line and the servers' JSON reports.
const http = require('node:http')

/** The number after `--name` on the command line, or `fallback`. */
function arg (name, fallback) {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}

/** `--name` is on the command line. */
function flag (name) {
  return process.argv.includes(`--${name}`)
}

/** GET http://127.0.0.1:port/urlPath as JSON. */
function getJson (port, urlPath) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve(JSON.parse(text)))
    }).on('error', reject)
  })
}

module.exports = { arg, flag, getJson }
