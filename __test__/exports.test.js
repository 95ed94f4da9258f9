'use strict'
// The package's exports are named in three places: index.js (what require gives),
// index.mjs (what import gives: it re-exports the names Node finds in index.js) and
// index.d.ts (what the types declare). Each must name exactly index.js's.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const ts = require('typescript')

// The package tested: this repository, or the installed copy scripts/test-package.sh runs
// this folder in (whose files are the ones npm ships).
const PACKAGE = path.join(__dirname, '..')
const runtime = require('..')
const RUNTIME = Object.keys(runtime).sort()

test('index.mjs exports every name of index.js, no other, and index.js as its default', async () => {
  const esm = await import(pathToFileURL(path.join(PACKAGE, 'index.mjs')).href)
  // Node 23+ adds 'module.exports' to the names of every CommonJS module imported, and so
  // to what index.mjs re-exports of it.
  const named = Object.keys(esm).filter((name) => name !== 'default' && name !== 'module.exports').sort()
  assert.deepEqual(named, RUNTIME)
  assert.equal(esm.default, runtime, 'the default export is require(\'uws-body\') itself')
  for (const name of RUNTIME) assert.equal(esm[name], runtime[name], name)
})

/** The value names index.d.ts exports (functions, classes, consts), and every name it declares, with repeats. */
function declarations () {
  const file = path.join(PACKAGE, 'index.d.ts')
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const values = []
  const declared = []
  for (const statement of source.statements) {
    const exported = ts.getCombinedModifierFlags(statement) & ts.ModifierFlags.Export
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (exported) values.push(d.name.getText(source))
      continue
    }
    if (!statement.name) continue
    const name = statement.name.getText(source)
    if (ts.isFunctionDeclaration(statement)) {
      // An overloaded function is one export declared once per signature.
      if (exported && !values.includes(name)) values.push(name)
      continue
    }
    if (exported && ts.isClassDeclaration(statement)) values.push(name)
    declared.push(name)
  }
  return { values: values.sort(), declared }
}

test('index.d.ts declares every export of index.js as a value, and no value export index.js lacks', () => {
  assert.deepEqual(declarations().values, RUNTIME)
})

test('index.d.ts declares each interface, type and class once', () => {
  // TypeScript merges an interface declared twice: legal, but a reader of one declaration
  // does not see the other's members.
  const { declared } = declarations()
  const twice = declared.filter((name, i) => declared.indexOf(name) !== i)
  assert.deepEqual(twice, [])
})
