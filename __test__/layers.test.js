'use strict'
// lib/ by layer: each folder of lib/ is one layer, and a file imports only its own layer
// and the layers below it, so that what a file may rely on shows in its path. Also: no
// file in lib/ over MAX_LINES lines.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { REPO } = require('./helpers/repository')

// The layers, top first. Folders on one line stand side by side: neither imports the other.
const LAYERS = [
  ['api', 'frameworks'], // the public readers on bare uWS; the Express drop-ins
  ['multipart'], // the multipart engine
  ['body'], // the read path: a body's bytes, stores, deadlines, digests, headers
  ['refusal'], // a refused body's rest, and the answer held until it is dropped
  ['plan'], // options, checked and compiled once
  ['native'] // the addon's loader, the numbers passed to it, the errors both tiers share
]
const MAX_LINES = 400

const rankOf = new Map(LAYERS.flatMap((folders, rank) => folders.map((f) => [f, rank])))
const LIB = path.join(REPO, 'lib')

/** Every .js file in `dir`, as paths from lib/. */
function libFiles (dir = LIB) {
  return fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.js')).map((f) => f.split(path.sep).join('/'))
}

/** The imports that break the layering in `files` ({ path: text }): one line each. */
function violations (files) {
  const found = []
  for (const [file, text] of Object.entries(files)) {
    const layer = file.split('/')[0]
    if (!rankOf.has(layer) || !file.includes('/')) {
      found.push(`${file}: not in a layer's folder (${[...rankOf.keys()].join(', ')})`)
      continue
    }
    for (const [, spec] of text.matchAll(/require\((?:'|")(\.[^'"]*)(?:'|")\)/g)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec))
      const to = target.split('/')[0]
      if (target.startsWith('..')) {
        found.push(`${file} -> ${spec}: outside lib/`)
      } else if (to === layer) {
        continue
      } else if (!rankOf.has(to)) {
        found.push(`${file} -> ${spec}: not a layer's folder`)
      } else if (rankOf.get(to) < rankOf.get(layer)) {
        found.push(`${file} -> ${spec}: runs up, from ${layer}/ to ${to}/`)
      } else if (rankOf.get(to) === rankOf.get(layer)) {
        found.push(`${file} -> ${spec}: runs sideways, from ${layer}/ to ${to}/`)
      }
    }
  }
  return found
}

const read = () => Object.fromEntries(libFiles().map((f) => [f, fs.readFileSync(path.join(LIB, f), 'utf8')]))

test('every import in lib/ runs within its layer or down', () => {
  assert.deepStrictEqual(violations(read()), [])
})

test('an import that runs up, sideways or out of the layers is caught', () => {
  const files = read()
  const before = violations(files)
  files['native/native.js'] += "\nrequire('../body/accumulator')\n"
  files['api/gc.js'] += "\nrequire('../frameworks/source')\n"
  files['body/chunk.js'] += "\nrequire('../../index')\n"
  files['loose.js'] = "'use strict'\n"
  assert.deepStrictEqual(violations(files).filter((v) => !before.includes(v)).sort(), [
    'api/gc.js -> ../frameworks/source: runs sideways, from api/ to frameworks/',
    'body/chunk.js -> ../../index: outside lib/',
    "loose.js: not in a layer's folder (api, frameworks, multipart, body, refusal, plan, native)",
    'native/native.js -> ../body/accumulator: runs up, from native/ to body/'
  ])
})

test(`no file in lib/ is over ${MAX_LINES} lines`, () => {
  const long = Object.entries(read()).map(([f, text]) => [f, text.split('\n').length - 1]).filter(([, n]) => n > MAX_LINES)
  assert.deepStrictEqual(long, [])
})
