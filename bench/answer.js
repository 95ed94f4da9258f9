'use strict'
// What the body-reading servers answer, and the check each contender passes before it is
// timed: the load generator only checks for a 200, so a reader that answered fast and
// wrong would otherwise be timed as if it were right.
const querystring = require('node:querystring')
const zlib = require('node:zlib')
const { post } = require('./load')

/** The answer: a Buffer's or string's length, or a parsed body's key count. */
const summary = (b) => String(Buffer.isBuffer(b) || typeof b === 'string' ? b.length : Object.keys(b).length)

const INFLATE = { gzip: zlib.gunzipSync, deflate: zlib.inflateSync, br: zlib.brotliDecompressSync }

/** The answer a parsing server owes this request. */
function expected (route, headers, body) {
  const encoding = headers['content-encoding']
  const plain = encoding ? INFLATE[encoding](body) : body
  const parsed = { '/raw': () => plain, '/json': () => JSON.parse(plain.toString()), '/text': () => plain.toString(), '/urlencoded': () => querystring.parse(plain.toString()) }[route]
  return summary(parsed())
}

/** Rejects unless the server at `port` answers the request with 200 and `want`. */
async function check (port, who, route, headers, body, want) {
  const { status, text } = await post(port, route, headers, body)
  if (status !== 200 || text !== want) throw new Error(`bench: ${who} answered POST ${route} (${body.length} B) with ${status} ${JSON.stringify(text.slice(0, 80))}, not 200 ${JSON.stringify(want)}`)
}

module.exports = { summary, expected, check }
