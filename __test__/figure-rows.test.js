'use strict'
// Comments in lib/ and src/, and docs/design.md, name the docs/performance.md row where a
// figure lives (`docs/performance.md, row '...'`) instead of quoting it: every row named
// must exist.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = require('./helpers/repository').REPO

function sources (dir, ext) {
  return fs.readdirSync(path.join(ROOT, dir), { recursive: true })
    .filter((f) => f.endsWith(ext))
    .map((f) => ({ file: path.join(dir, f), text: fs.readFileSync(path.join(ROOT, dir, f), 'utf8') }))
}

test('every docs/performance.md row a lib/ or src/ comment or docs/design.md names is a row there', () => {
  const perf = fs.readFileSync(path.join(ROOT, 'docs/performance.md'), 'utf8')
  const rows = new Set([...perf.matchAll(/^\| ([^|]+) \|/gm)].map((m) => m[1].trim()))
  let named = 0
  const design = { file: 'docs/design.md', text: fs.readFileSync(path.join(ROOT, 'docs/design.md'), 'utf8') }
  for (const { file, text } of [...sources('lib', '.js'), ...sources('src', '.rs'), design]) {
    // A comment's (or a paragraph's) row name may run onto its next line.
    const joined = text.replace(/\n\s*(?:\/\/[/!]?|\*)? ?/g, ' ')
    for (const [, row] of joined.matchAll(/docs\/performance\.md, rows? '([^']+)'/g)) {
      named++
      assert.ok(rows.has(row), `${file}: no row '${row}' in docs/performance.md`)
    }
  }
  assert.ok(named > 10, `only ${named} rows named`)
})
