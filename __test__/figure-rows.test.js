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

// README's headline ranges for the built-in parsers are the min-max of the medians in
// bench/RESULTS.md's saturated run (its first section, `npm run bench:saturate`), column
// "built-ins / uws-body" of each Node's ultimate-express table: a new run that changes them
// must change README too.
test('README\'s speed-up ranges under ultimate-express are bench/RESULTS.md\'s', () => {
  const results = fs.readFileSync(path.join(ROOT, 'bench/RESULTS.md'), 'utf8')
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ')
  const start = results.indexOf('## Saturated servers')
  assert.ok(start >= 0, 'bench/RESULTS.md has no saturated run')
  const saturated = results.slice(start)
  for (const node of ['20', '24']) {
    const heading = saturated.search(new RegExp(`^## Node v${node}\\.[^\\n]*: ultimate-express`, 'm'))
    assert.ok(heading >= 0, `Node ${node}: no ultimate-express section in the saturated run`)
    const section = saturated.slice(heading, saturated.indexOf('\n## ', heading + 1))
    const all = section.split('\n')
    const first = all.findIndex((l) => l.startsWith('|') && l.includes('built-ins / uws-body'))
    assert.ok(first >= 0, `Node ${node}: no built-ins / uws-body column`)
    const after = all.findIndex((l, i) => i > first && !l.startsWith('|'))
    const lines = all.slice(first, after)
    const column = lines[0].split('|').map((c) => c.trim()).indexOf('built-ins / uws-body')
    const values = lines.slice(2).map((l) => parseFloat(l.split('|')[column]))
    assert.ok(values.length >= 5 && values.every((v) => v > 0), `Node ${node}: ${values}`)
    const range = `${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}x`
    assert.ok(readme.includes(`${range} uws-body's server CPU per request on Node ${node}`) || readme.includes(`${range} on Node ${node}`),
      `README should give Node ${node}'s range as ${range}`)
  }
})
