'use strict'
// The package test (scripts/test-package.sh) runs this folder from an installed copy,
// beside only what npm ships and a copy of examples/. A relative require that leaves
// those (say into soak/ or bench/) passes here and fails there; this finds it here.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const TESTS = __dirname
const PACKAGE = path.join(TESTS, '..')
const { files } = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'))
const reachable = [TESTS, path.join(PACKAGE, 'examples'), path.join(PACKAGE, 'package.json'),
  ...files.map((f) => path.resolve(PACKAGE, f))]

/** Whether `target` (a path, or a module path without its .js) is among what they have. */
const isInside = (target) => target === PACKAGE || reachable.some((root) =>
  [target, target + '.js'].some((t) => t === root || t.startsWith(root + path.sep)))

function * sources (dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory() && entry.name !== 'fixtures') yield * sources(full)
    else if (/\.(c|m)?js$/.test(entry.name)) yield full
  }
}

test('every relative require and __dirname path in __test__ stays inside what the installed package\'s tests have', () => {
  const outside = []
  for (const file of sources(TESTS)) {
    const text = fs.readFileSync(file, 'utf8')
    // (?<!\\n): not a require written inside a string, as layers.test.js writes some.
    for (const [, spec] of text.matchAll(/(?<!\\n)require\(\s*'(\.{1,2}(?:\/[^']*)?)'\s*\)/g)) {
      if (!isInside(path.resolve(path.dirname(file), spec))) outside.push(`${path.relative(PACKAGE, file)}: require('${spec}')`)
    }
    // A file run by its path (a child's server), joined from __dirname and literal names.
    for (const [call, args] of text.matchAll(/path\.join\(__dirname((?:\s*,\s*'[^']*')+)\s*\)/g)) {
      const target = path.join(path.dirname(file), ...[...args.matchAll(/'([^']*)'/g)].map((m) => m[1]))
      if (!isInside(target)) outside.push(`${path.relative(PACKAGE, file)}: ${call}`)
    }
  }
  assert.deepEqual(outside, [])
})
