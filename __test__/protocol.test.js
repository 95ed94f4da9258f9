'use strict'
// The numbers lib/ and the addon pass each other are named twice, once in each language
// (lib/native/protocol.js, src/node/protocol.rs): here the two must agree, and every name must be
// used on both sides (a name one side stopped using is a protocol the other still speaks).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const native = require('../lib/native/native')
const protocol = require('../lib/native/protocol')

// The repository's sources (helpers/repository.js: also when run from an installed copy).
const ROOT = require('./helpers/repository').REPO

/** The files under `dir` (recursively) whose names end in `ext`, with their text. */
function sources (dir, ext) {
  return fs.readdirSync(path.join(ROOT, dir), { recursive: true })
    .filter((f) => f.endsWith(ext))
    .map((f) => ({ file: path.join(dir, f), text: fs.readFileSync(path.join(ROOT, dir, f), 'utf8') }))
}

/** The Rust module name of a JS group name: SINK_X -> sink_x. */
const rustName = (group) => group.toLowerCase()

test('the addon\'s protocol table is lib/native/protocol.js, name for name and value for value', () => {
  assert.equal(typeof native.protocol, 'object')
  assert.deepStrictEqual(Object.keys(native.protocol).sort(), Object.keys(protocol).sort())
  for (const group of Object.keys(protocol)) {
    assert.deepStrictEqual(native.protocol[group], protocol[group], group)
    assert.deepStrictEqual(Object.keys(native.protocol[group]), Object.keys(protocol[group]), `${group}: the same order`)
  }
})

test('both tables are frozen', () => {
  for (const table of [native.protocol, protocol]) {
    assert.ok(Object.isFrozen(table))
    for (const group of Object.values(table)) assert.ok(Object.isFrozen(group))
  }
})

test('a group\'s values are distinct, and an array\'s slots are 0..n-1', () => {
  for (const [group, names] of Object.entries(protocol)) {
    const values = Object.values(names)
    assert.equal(new Set(values).size, values.length, `${group}: a value given twice`)
    for (const v of values) assert.ok(Number.isInteger(v) && v >= 0, `${group}: ${v}`)
  }
  for (const slots of [protocol.HEAD, protocol.SIZES, protocol.FORM]) {
    assert.deepStrictEqual(Object.values(slots), Object.values(slots).map((_, i) => i))
  }
  // upload.js sends `room` for the sinks >= STREAM.
  const { STREAM, PENDING } = protocol.SINK
  for (const [name, v] of Object.entries(protocol.SINK)) {
    assert.equal(v >= STREAM, name === 'STREAM' || name === 'PENDING', name)
  }
  assert.ok(PENDING > STREAM)
})

test('every name is used in src/node (as group::NAME) and in lib (taken from its group)', () => {
  const rust = sources('src/node', '.rs').filter(({ file }) => !file.endsWith('protocol.rs'))
  // `use super::protocol::{head as slot, outcome}`: the names each group goes by.
  const rustAliases = new Map()
  for (const { text } of rust) {
    for (const [, list] of text.matchAll(/protocol::\{([^}]*)\}/g)) {
      for (const item of list.split(',').map((s) => s.trim()).filter(Boolean)) {
        const [group, alias = group] = item.split(/\s+as\s+/)
        if (!rustAliases.has(group)) rustAliases.set(group, new Set())
        rustAliases.get(group).add(alias)
      }
    }
  }
  const js = sources('lib', '.js').filter(({ file }) => file !== path.join('lib', 'native', 'protocol.js'))
  // Each lib file takes groups from lib/native/protocol.js and names from the groups; the local
  // names it uses beyond that line, by group.
  const usedInJs = new Map()
  for (const { text } of js) {
    const taken = text.match(/const \{([^}]*)\} = require\('(?:\.\.?\/)+(?:native\/)?protocol'\)/)
    if (!taken) continue
    for (const group of taken[1].split(',').map((s) => s.trim())) {
      const from = text.match(new RegExp(`const \\{([^}]*)\\} = ${group}\\n`))
      assert.ok(from, `a lib file takes ${group} but no names from it`)
      for (const item of from[1].split(',').map((s) => s.trim())) {
        const [name, local = name] = item.split(/\s*:\s*/)
        const uses = text.match(new RegExp(`\\b${local}\\b`, 'g')).length
        if (uses > 1) usedInJs.set(`${group}.${name}`, true)
      }
    }
  }
  for (const [group, names] of Object.entries(protocol)) {
    const aliases = rustAliases.get(rustName(group))
    assert.ok(aliases, `src/node does not use protocol::${rustName(group)}`)
    for (const name of Object.keys(names)) {
      const pattern = new RegExp(`\\b(${[...aliases].join('|')})::${name}\\b`)
      assert.ok(rust.some(({ text }) => pattern.test(text)), `${group}.${name}: not used in src/node`)
      assert.ok(usedInJs.has(`${group}.${name}`), `${group}.${name}: not used in lib`)
    }
  }
})
