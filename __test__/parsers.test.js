'use strict'
// Differential: the same requests to Express + body-parser and to ultimate-express + uws-body's
// parsers must give the same status and the same req.body.
const test = require('node:test')
const assert = require('node:assert/strict')
const zlib = require('node:zlib')
const { startApps } = require('./helpers/apps')
const { request } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const JSON_TYPE = { 'content-type': 'application/json' }
const big = (n) => JSON.stringify({ data: 'x'.repeat(n) })
const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":true}')])
const gz = (s) => zlib.gzipSync(Buffer.from(s))
const corruptGzip = () => { const b = gz('{"a":1}'); b[12] ^= 0xff; return b }

/** [route, headers, body, options?]: every request goes to /h/route and /d/route on both servers. */
const CASES = [
  ['json', JSON_TYPE, '{"a":1,"b":[1,2]}'],
  ['json', JSON_TYPE, '[1,2,3]'],
  ['json', JSON_TYPE, '  \n {"spaced":true}'],
  ['json', JSON_TYPE, '123'],
  ['json', JSON_TYPE, '"str"'],
  ['json', JSON_TYPE, '   '],
  ['json', JSON_TYPE, ''],
  ['json', JSON_TYPE, '{"a":'],
  ['json', JSON_TYPE, bom],
  ['json', { 'content-type': 'Application/JSON' }, '{"caps":1}'],
  ['json', { 'content-type': 'application/json; charset=utf-8' }, '{"cs":1}'],
  ['json', { 'content-type': 'application/json; charset=UTF-8' }, '{"cs":2}'],
  ['json', { 'content-type': 'application/json; charset=utf8' }, '{"cs":3}'],
  ['json', { 'content-type': 'application/json; charset=utf-16le' }, Buffer.from('{"wide":"\u00e9"}', 'utf16le')],
  ['json', { 'content-type': 'application/json; charset=latin1' }, '{"cs":4}'],
  ['json', { 'content-type': 'application/json; charset=utf-99' }, '{"cs":5}'],
  ['json', { 'content-type': 'application/vnd.api+json' }, '{"vnd":1}'],
  ['json', { 'content-type': 'application/json; charset' }, '{"bad":"param"}'],
  ['json', { 'content-type': 'application/json;; charset="utf-8"' }, '{"bad":"params"}'],
  ['json', { 'content-type': 'application/json; charset="utf-8"' }, '{"quoted":1}'],
  ['text', { 'content-type': 'text/plain; charset=' }, 'empty charset'],
  ['json', { 'content-type': 'text/plain' }, '{"skipped":1}'],
  ['json', {}, '{"no":"type"}'],
  ['json', JSON_TYPE, null],
  ['json', JSON_TYPE, big(200 * 1024)],
  ['json', { ...JSON_TYPE, 'content-encoding': 'gzip' }, gz('{"gzip":true}')],
  ['json', { ...JSON_TYPE, 'content-encoding': 'GZIP' }, gz('{"gzip":"caps"}')],
  ['json', { ...JSON_TYPE, 'content-encoding': 'deflate' }, zlib.deflateSync('{"deflate":true}')],
  ['json', { ...JSON_TYPE, 'content-encoding': 'br' }, zlib.brotliCompressSync('{"br":true}')],
  ['json', { ...JSON_TYPE, 'content-encoding': 'identity' }, '{"identity":true}'],
  ['json', { ...JSON_TYPE, 'content-encoding': 'compress' }, '{"a":1}'],
  ['json', { ...JSON_TYPE, 'content-encoding': 'gzip' }, corruptGzip()],
  ['json', { ...JSON_TYPE, 'content-encoding': 'gzip' }, gz(big(200 * 1024))],
  ['json', { ...JSON_TYPE, 'content-encoding': 'gzip' }, gz(big(60 * 1024))],
  ['json', JSON_TYPE, '{"a":1}', { chunked: true, chunkSize: 3 }],
  ['json-limit', JSON_TYPE, big(990)],
  ['json-limit', JSON_TYPE, big(1001)],
  ['json-limit', JSON_TYPE, big(1001), { chunked: true, chunkSize: 100 }],
  ['json-loose', JSON_TYPE, '123'],
  ['json-loose', JSON_TYPE, 'null'],
  ['json-loose', JSON_TYPE, '"s"'],
  ['json-reviver', JSON_TYPE, '{"n":21,"m":[1,2]}'],
  ['json-verify', JSON_TYPE, '{"ok":1}'],
  ['json-verify', JSON_TYPE, '{"forbidden":1}'],
  ['json-no-inflate', { ...JSON_TYPE, 'content-encoding': 'gzip' }, gz('{"a":1}')],
  ['json-no-inflate', JSON_TYPE, '{"plain":1}'],
  ['json-any-type', { 'content-type': 'text/plain' }, '{"text":1}'],
  ['json-any-type', { 'content-type': 'application/x-whatever' }, '{"app":1}'],
  ['json-any-type', { 'content-type': 'image/png' }, '{"img":1}'],
  ['json-type-fn', { 'x-parse': 'yes' }, '{"fn":1}'],
  ['json-type-fn', { 'x-parse': 'no', ...JSON_TYPE }, '{"fn":2}'],
  ['raw', { 'content-type': 'application/octet-stream' }, Buffer.from([0, 1, 2, 255, 254])],
  ['raw', { 'content-type': 'application/octet-stream' }, ''],
  ['raw', { 'content-type': 'application/octet-stream' }, Buffer.alloc(150 * 1024, 7)],
  ['raw', { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' }, zlib.gzipSync(Buffer.alloc(5000, 9))],
  ['raw', { 'content-type': 'text/plain' }, 'not raw'],
  ['raw-any', { 'content-type': 'text/plain' }, 'any type'],
  ['raw-any', {}, 'no type at all'],
  ['raw-any', { 'content-type': 'x/y' }, Buffer.alloc(2000)],
  ['raw-verify', { 'content-type': 'application/octet-stream' }, 'forbidden bytes'],
  ['text', { 'content-type': 'text/plain' }, 'hello \u00e9 world'],
  ['text', { 'content-type': 'text/plain' }, ''],
  ['text', { 'content-type': 'text/plain; charset=utf8' }, 'utf8 alias'],
  ['text', { 'content-type': 'text/plain; charset=iso-8859-1' }, Buffer.from('caf\u00e9', 'latin1')],
  ['text', { 'content-type': 'text/plain; charset=utf-16le' }, Buffer.from('\ufeffwide', 'utf16le')],
  ['text', { 'content-type': 'text/plain; charset=koi8-r' }, Buffer.from([0xc1, 0xc2])],
  ['text', { 'content-type': 'text/plain; charset=nope' }, 'x'],
  // An unknown charset is refused after the encoding and the declared length.
  ['text', { 'content-type': 'text/plain; charset=nope', 'content-encoding': 'compress' }, 'x'],
  ['text', { 'content-type': 'text/plain; charset=nope' }, 'x'.repeat(150 * 1024)],
  ['text', { 'content-type': 'text/plain; charset=nope', 'content-encoding': 'gzip' }, gz('x')],
  ['text-no-inflate', { 'content-type': 'text/plain; charset=nope', 'content-encoding': 'gzip' }, gz('x')],
  ['text', { 'content-type': 'text/plain' }, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('bom text')])],
  ['text', { 'content-type': 'text/plain' }, Buffer.from([0xff, 0xfe, 0x41])],
  ['text-latin1', { 'content-type': 'text/plain' }, Buffer.from('d\u00e9faut', 'latin1')],
  ['urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&b=2&b=3&c'],
  ['urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 'a[b]=1&x=%20y+z'],
  ['urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, ''],
  ['urlencoded', { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }, 'a=%E9'],
  ['urlencoded', { 'content-type': 'application/x-www-form-urlencoded; charset=koi8-r' }, 'a=1'],
  ['urlencoded-extended', { 'content-type': 'application/x-www-form-urlencoded' }, 'a[b][c]=1&d[]=1&d[]=2&__proto__[x]=1'],
  ['urlencoded-params', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&b=2&c=3'],
  ['urlencoded-params', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&b=2&c=3&d=4'],
  ['urlencoded-depth', { 'content-type': 'application/x-www-form-urlencoded' }, 'a[b]=1'],
  ['urlencoded-depth', { 'content-type': 'application/x-www-form-urlencoded' }, 'a[b][c]=1']
]

// Where uws-body differs from body-parser on purpose (docs/express.md, "Deliberate differences from body-parser"):
// a corrupt encoded body. body-parser passes zlib's error on (400, zlib's message, no
// type); uws-body's has type encoding.invalid and its own message. Everything else,
// messages included, must be the same.
const ENCODING_INVALID = { error: { status: 400, type: 'encoding.invalid' } }

function normalize (response) {
  const value = JSON.parse(decodeURIComponent(response.headers['x-body']))
  const error = value.error
  const corrupt = error && error.status === 400 && (error.type === 'encoding.invalid' || error.type === undefined)
  return { status: response.status, value: corrupt ? ENCODING_INVALID : value, body: corrupt ? '' : response.body }
}

async function send (port, path, headers, body, options = {}) {
  const r = await request(port, {
    path,
    headers,
    body: body === null ? Buffer.alloc(0) : Buffer.from(body),
    declaredLength: body === null ? false : null,
    withHeaders: true,
    ...options
  })
  return r
}

test('same status and req.body as Express + body-parser, for every case', async () => {
  const apps = await startApps()
  const logged = console.error
  console.error = () => {} // ultimate-express's default handler logs every error
  try {
    for (const [route, headers, body, options] of CASES) {
      const label = `${route} ${JSON.stringify(headers)} ${body === null ? '(no body)' : Buffer.from(body).subarray(0, 40).toString('latin1')}`
      const [expected, actual] = [
        await send(apps.express, `/h/${route}`, headers, body, options),
        await send(apps.ultimate, `/h/${route}`, headers, body, options)
      ]
      assert.deepEqual(normalize(actual), normalize(expected), label)
      const [expectedDefault, actualDefault] = [
        await send(apps.express, `/d/${route}`, headers, body, options),
        await send(apps.ultimate, `/d/${route}`, headers, body, options)
      ]
      assert.equal(actualDefault.status, expectedDefault.status, `default handler: ${label}`)
    }
  } finally {
    console.error = logged
    apps.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

const METHODS = ['GET', 'HEAD', 'DELETE', 'OPTIONS', 'POST', 'PUT', 'PATCH']
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/** [route, headers, body, options?] sent with every method: bodies, empty bodies, no body. */
const METHOD_CASES = [
  ['json', JSON_TYPE, '{"m":1}'],
  ['json', JSON_TYPE, '{"m":2}', { chunked: true, chunkSize: 2 }],
  ['json', JSON_TYPE, '{"m":3}', { cuts: [3], pause: 10 }],
  ['json', JSON_TYPE, ''],
  ['json', JSON_TYPE, null],
  ['json', JSON_TYPE, '', { chunked: true }],
  ['json', JSON_TYPE, '{"m":'],
  ['json', JSON_TYPE, 'true'],
  ['json', { ...JSON_TYPE, 'content-encoding': 'gzip' }, gz('{"m":"gz"}')],
  ['json-limit', JSON_TYPE, big(1001)],
  ['json-no-inflate', { ...JSON_TYPE, 'content-encoding': 'gzip' }, gz('{"a":1}')],
  ['text', { 'content-type': 'text/plain' }, 'method text'],
  ['text', { 'content-type': 'text/plain' }, ''],
  ['text', { 'content-type': 'text/plain' }, null],
  ['raw', { 'content-type': 'application/octet-stream' }, Buffer.from([1, 2, 3])],
  ['urlencoded', FORM, 'a=1&b=2'],
  ['urlencoded', FORM, ''],
  ['urlencoded', FORM, null]
]

test('every method, with and without a body: same answers as Express + body-parser', async () => {
  const apps = await startApps()
  const logged = console.error
  console.error = () => {}
  try {
    for (const method of METHODS) {
      for (const [route, headers, body, options] of METHOD_CASES) {
        const label = `${method} ${route} ${JSON.stringify(headers)} ${body === null ? '(no body)' : JSON.stringify(Buffer.from(body).toString('latin1'))} ${JSON.stringify(options || {})}`
        const expected = await send(apps.express, `/h/${route}`, headers, body, { method, ...options })
        const actual = await send(apps.ultimate, `/h/${route}`, headers, body, { method, ...options })
        assert.deepEqual(normalize(actual), normalize(expected), label)
      }
    }
  } finally {
    console.error = logged
    apps.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})
