'use strict'
// One error vocabulary: lib/native/errors.js's tables are its source. Every code the library's
// sources (JS and Rust) use must be in them, and index.d.ts and docs/errors.md must say
// the same codes with the same statuses and types: a code added in one place only fails
// here. (src/core/error_table.rs checks the Rust core's statuses and types against the
// same table.)
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { KINDS, PROGRAM_ERRORS, bodyError, MulterError, BodyError } = require('../lib/native/errors')

// The repository's files: this test checks the sources, docs and types agree.
const root = require('./helpers/repository').REPO
const CODE = /['"`]((?:ERR|LIMIT)_[A-Z0-9_]*[A-Z0-9]|ECONNABORTED|MISSING_FIELD_NAME|INVALID_FIELD_NAME|STREAM_DESTROYED)['"`]/g

function sources (dir, ext) {
  const out = []
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sources(rel, ext))
    else if (entry.name.endsWith(ext) && !/tests?\.rs$|props\.rs$|error_table\.rs$/.test(entry.name)) out.push(rel)
  }
  return out
}

/** The rows of the markdown table after `marker` in `text`: arrays of cells. */
function tableAfter (text, marker) {
  const at = text.indexOf(marker)
  assert.ok(at >= 0, `no ${marker}`)
  const rows = []
  for (const line of text.slice(at).split('\n').slice(1)) {
    if (!line.startsWith('|')) {
      if (rows.length) break
      continue
    }
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim().replace(/^`|`$/g, '')))
  }
  return rows.slice(2)
}

// Codes in the sources that no user sees: Node's own, read to be turned into ours, and the
// fault-injection test build's.
const FOREIGN = ['ERR_STRING_TOO_LONG', 'ERR_INJECTED']

test('every code the sources use is in lib/native/errors.js', () => {
  const known = new Set([...Object.keys(KINDS), ...Object.keys(PROGRAM_ERRORS), ...FOREIGN])
  const used = new Map()
  for (const file of [...sources('lib', '.js'), 'index.js', ...sources('src', '.rs')]) {
    for (const [, code] of fs.readFileSync(path.join(root, file), 'utf8').matchAll(CODE)) {
      if (!used.has(code)) used.set(code, file)
    }
  }
  for (const [code, file] of used) assert.ok(known.has(code), `${code} (${file}) is not in lib/native/errors.js`)
  assert.ok(used.size >= 30, `${used.size} codes found`)
})

test('docs/errors.md lists every code with the table\'s status and type', () => {
  const text = fs.readFileSync(path.join(root, 'docs', 'errors.md'), 'utf8')
  const rows = tableAfter(text, '<!-- error codes')
  const documented = new Map(rows.map(([code, status, type]) => [code, [Number(status), type]]))
  for (const [code, [status, type]] of Object.entries(KINDS)) {
    assert.deepEqual(documented.get(code), [status, type], `docs/errors.md: ${code}`)
  }
  assert.deepEqual([...documented.keys()].sort(), Object.keys(KINDS).sort(), 'no code documented that the table lacks')
  const program = tableAfter(text, '<!-- program error codes').map(([code]) => code)
  assert.deepEqual(program.sort(), Object.keys(PROGRAM_ERRORS).sort())
})

test('index.d.ts names every code, type and status', () => {
  const types = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8')
  for (const [code, [status, type]] of Object.entries(KINDS)) {
    assert.ok(types.includes(`'${code}'`), `index.d.ts lacks the code ${code}`)
    assert.ok(types.includes(`'${type}'`), `index.d.ts lacks the type ${type}`)
    assert.match(types, new RegExp(`status: [^\\n]*\\b${status}\\b`), `index.d.ts: status ${status}`)
  }
})

test('errors built from the table: a BodyError each, a MulterError for multer\'s codes', () => {
  for (const [code, [status, type]] of Object.entries(KINDS)) {
    const err = bodyError(code, { encoding: 'x', reason: 'corrupt', charset: 'x' })
    assert.ok(err instanceof BodyError)
    assert.deepEqual([err.code, err.status, err.statusCode, err.type, err.expose], [code, status, status, type, true])
    assert.equal(typeof err.message, 'string')
  }
  const m = new MulterError('LIMIT_FILE_SIZE', 'f', 'a.txt')
  assert.ok(m instanceof BodyError && m instanceof Error)
  assert.deepEqual([m.name, m.code, m.status, m.field, m.filename, m.message], ['MulterError', 'LIMIT_FILE_SIZE', 413, 'f', 'a.txt', 'File too large'])
  assert.equal(new MulterError('NOPE').message, 'Unknown error: NOPE')
})
