'use strict'
// Cases from body-parser's own test suite (v2.3.0: json, raw, text, urlencoded), written
// anew: where body-parser has a message, uws-body's parsers give the same one. Each request
// goes to a node:http server that runs body-parser on /bp and uws-body on /ub, and must
// get the same answer from both, as body-parser's tests print it: `[type] message`.
const test = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const zlib = require('node:zlib')
const bodyParser = require('body-parser')
const uwsBody = require('..')
const { request } = require('./helpers/client')
const { bytesInUseAfterGc } = require('./helpers/memory')

const KINDS = ['json', 'raw', 'text', 'urlencoded']

/**
 * /json, /json-loose (strict: false), /<kind>/no-inflate (inflate: false, any type);
 * /<kind>/any/<inflate: 0|1>/<verify: 0|1> (any type).
 */
function parserFor (lib, path) {
  const [, name, variant, inflate, verify] = path.split('/')
  if (variant === 'no-inflate') return lib[name]({ inflate: false, type: '*/*' })
  if (variant === 'any') return lib[name]({ inflate: inflate === '1', verify: verify === '1' ? () => {} : undefined, type: '*/*' })
  if (name === 'json-loose') return lib.json({ strict: false })
  return lib[name]()
}

function startServer () {
  const parsers = new Map()
  const server = http.createServer((req, res) => {
    const [, lib, ...rest] = req.url.split('/')
    const path = '/' + rest.join('/')
    const key = `${lib} ${path}`
    if (!parsers.has(key)) parsers.set(key, parserFor(lib === 'bp' ? bodyParser : uwsBody, path))
    parsers.get(key)(req, res, (err) => {
      res.statusCode = err ? err.status || 500 : 200
      res.end(err ? `[${err.type}] ${err.message}` : JSON.stringify(Buffer.isBuffer(req.body) ? req.body.toString('base64') : req.body))
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

async function both (port, path, headers, body) {
  const [expected, actual] = await answers(port, path, headers, body)
  assert.deepEqual(actual, expected, `${path} ${JSON.stringify(body).slice(0, 80)}`)
  return actual
}

/** [body-parser's answer, uws-body's] to the same request. */
async function answers (port, path, headers, body) {
  const send = (lib) => request(port, { path: `/${lib}${path}`, headers, body: Buffer.from(body) })
  return [await send('bp'), await send('ub')]
}

const JSON_TYPE = { 'content-type': 'application/json' }

test('strict json refuses primitives with body-parser\'s message (V8\'s own, as body-parser builds it)', async () => {
  const server = await startServer()
  try {
    const port = server.address().port
    const r = await both(port, '/json', JSON_TYPE, 'true')
    assert.equal(r.status, 400)
    if (Number(process.versions.node.split('.')[0]) >= 20) {
      assert.equal(r.body, '[entity.parse.failed] Unexpected token \'t\', "true" is not valid JSON')
    }
    for (const body of [' true', '\x20\x09\x0a\x0dtrue', '123', '"str"', 'null', '   ', '\x20\x09\x0a\x0d', `"${'x'.repeat(200)}"`, '  1'.repeat(40), 'tru', '{"a":', '{:']) {
      await both(port, '/json', JSON_TYPE, body)
    }
    // strict: false parses them, and bad JSON keeps JSON.parse's message.
    for (const body of ['true', '123', ' "s"', 'tru']) await both(port, '/json-loose', JSON_TYPE, body)
  } finally {
    server.close()
  }
})

test('a parse failure is body-parser\'s SyntaxError, with the stable code ERR_BODY_PARSE', async () => {
  const failure = (lib, body, options) => new Promise((resolve) => {
    const server = http.createServer((req, res) => lib.json(options)(req, res, (err) => { res.end(); server.close(); resolve(err) }))
    server.listen(0, '127.0.0.1', () => request(server.address().port, { headers: JSON_TYPE, body: Buffer.from(body) }))
  })
  for (const [body, options] of [['{nope', {}], ['true', {}], ['{"a":1}', { reviver: () => { throw new Error('no') } }]]) {
    const [theirs, ours] = [await failure(bodyParser, body, options), await failure(uwsBody, body, options)]
    assert.equal(ours.constructor, theirs.constructor, body)
    assert.deepEqual([ours.message, ours.status, ours.statusCode, ours.type, ours.expose, ours.body], [theirs.message, theirs.status, theirs.statusCode, theirs.type, theirs.expose, theirs.body], body)
    assert.equal(theirs.code, undefined)
    assert.equal(ours.code, 'ERR_BODY_PARSE', body)
  }
})

test('inflate: false refuses every encoding with body-parser\'s message', async () => {
  const server = await startServer()
  try {
    const port = server.address().port
    for (const kind of KINDS) {
      for (const encoding of ['gzip', 'GZIP', 'deflate', 'br', 'compress']) {
        const r = await both(port, `/${kind}/no-inflate`, { 'content-type': 'text/plain', 'content-encoding': encoding }, zlib.gzipSync('x=1'))
        assert.deepEqual(r, { status: 415, body: '[encoding.unsupported] content encoding unsupported' })
      }
      // identity, in any case, is not an encoding.
      for (const encoding of ['identity', 'IDENTITY']) {
        const r = await both(port, `/${kind}/no-inflate`, { 'content-type': 'text/plain', 'content-encoding': encoding }, kind === 'json' ? '{"x":1}' : 'x=1')
        assert.equal(r.status, 200)
      }
    }
    // With inflate (the default), an unknown coding names itself.
    const r = await both(port, '/json', { ...JSON_TYPE, 'content-encoding': 'compress' }, '{}')
    assert.deepEqual(r, { status: 415, body: '[encoding.unsupported] unsupported content encoding "compress"' })
  } finally {
    server.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})

// body-parser 2.4.0 checks, in this order: the charset its kind refuses (json: utf-*,
// urlencoded: utf-8 or iso-8859-1), with verify a charset iconv-lite does not know, then
// inflate: false and the encoding, an encoding it cannot decode, the declared length, and
// last a charset iconv-lite does not know (raw-body's decoder).
test('charset and encoding refusals come in body-parser\'s order', async () => {
  const server = await startServer()
  const differences = []
  try {
    const port = server.address().port
    for (const kind of KINDS) {
      const plain = kind === 'json' ? '{"x":1}' : 'x=1'
      for (const charset of [null, 'utf-8', 'koi8-r', 'utf-99', 'x-bogus']) {
        const type = 'text/plain' + (charset === null ? '' : `; charset=${charset}`)
        for (const encoding of [null, 'gzip', 'compress']) {
          const headers = encoding === null ? { 'content-type': type } : { 'content-type': type, 'content-encoding': encoding }
          const body = encoding === 'gzip' ? zlib.gzipSync(plain) : plain
          const cases = ['1/0', '0/0', '1/1', '0/1'].map((variant) => [variant, body])
          // Over the limit by its declared length, which raw-body checks before the charset.
          if (encoding === null) cases.push(['1/0', 'x'.repeat(101 * 1024)])
          for (const [variant, sent] of cases) {
            const [expected, actual] = await answers(port, `/${kind}/any/${variant}`, headers, sent)
            if (actual.status !== expected.status || actual.body !== expected.body) {
              differences.push(`${kind} inflate/verify ${variant} ${JSON.stringify(headers)} ${sent.length} bytes: ${actual.status} ${actual.body}, body-parser ${expected.status} ${expected.body}`)
            }
          }
        }
      }
    }
  } finally {
    server.close()
  }
  assert.deepEqual(differences, [])
  assert.equal(await bytesInUseAfterGc(), 0)
})

test('other messages body-parser\'s suite checks: limits, charsets, parameters, depth', async () => {
  const server = await startServer()
  try {
    const port = server.address().port
    await both(port, '/json', JSON_TYPE, JSON.stringify({ s: 'x'.repeat(110 * 1024) }))
    await both(port, '/json', { 'content-type': 'application/json; charset=koi8-r' }, '{}')
    await both(port, '/text', { 'content-type': 'text/plain; charset=x-bogus' }, 'x')
    await both(port, '/urlencoded', { 'content-type': 'application/x-www-form-urlencoded; charset=koi8-r' }, 'a=1')
    await both(port, '/urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, Array.from({ length: 1001 }, (_, i) => `k${i}=1`).join('&'))
    await both(port, '/raw', { 'content-type': 'application/octet-stream' }, Buffer.alloc(101 * 1024))
  } finally {
    server.close()
  }
  assert.equal(await bytesInUseAfterGc(), 0)
})
