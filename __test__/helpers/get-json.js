'use strict'
// GET a JSON document over a fresh connection, for tests and soak scripts that poll a
// server's /stats. It lives with the tests because the installed package's tests run
// without the repository's other folders.
const http = require('node:http')

function getJson (port, urlPath) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve(JSON.parse(text)))
    }).on('error', reject)
  })
}

module.exports = { getJson }
