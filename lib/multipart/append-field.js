'use strict'
// req.body as multer builds it (with the append-field package): a field name is a path,
// `a[b][0]` or `a[]`, into objects without a prototype and arrays. Written anew from its
// observable behaviour (the differential test compares req.body with multer's):
// - the name up to the first `[` is the first key; an empty one makes the whole name a
//   plain key, as does any bracket group that does not parse;
// - `[digits]` indexes an array, `[text]` keys an object, a final `[]` appends;
// - a value set twice becomes an array of both; a value under a key that already holds
//   an object goes to that object's '' key; an array indexed by text becomes an object
//   of its items.

const OBJECT = 0
const ARRAY = 1
const MAX_INDEX = 2 ** 32 - 2 // the largest array index

/** The steps of a name, or null when the name is a plain key. */
function pathOf (name) {
  const first = name.indexOf('[')
  if (first === 0) return null
  if (first === -1) return [{ key: name, next: OBJECT, append: false }]
  const steps = [{ key: name.slice(0, first), next: OBJECT, append: false }]
  let at = first
  while (at < name.length) {
    if (name.charCodeAt(at) !== 0x5b) return null
    if (name.charCodeAt(at + 1) === 0x5d) {
      // `[]` appends, and only at the very end.
      if (at + 2 !== name.length) return null
      steps[steps.length - 1].append = true
      break
    }
    const close = name.indexOf(']', at + 1)
    if (close === -1) return null
    const inner = name.slice(at + 1, close)
    if (/^\d+$/.test(inner)) {
      steps[steps.length - 1].next = ARRAY
      steps.push({ key: parseInt(inner, 10), next: OBJECT, append: false })
    } else {
      steps[steps.length - 1].next = OBJECT
      steps.push({ key: inner, next: OBJECT, append: false })
    }
    at = close + 1
  }
  return steps
}

const kindOf = (value) => value === undefined ? 'none' : Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : 'scalar'

function setLast (holder, key, append, value) {
  const current = holder[key]
  switch (kindOf(current)) {
    case 'none':
      holder[key] = append ? [value] : value
      break
    case 'array':
      current.push(value)
      break
    case 'object':
      setLast(current, '', false, value)
      break
    default:
      holder[key] = [current, value]
  }
}

function descend (holder, step) {
  const current = holder[step.key]
  switch (kindOf(current)) {
    case 'none': {
      const made = step.next === ARRAY ? [] : Object.create(null)
      holder[step.key] = made
      return made
    }
    case 'object':
      return current
    case 'array': {
      if (step.next === ARRAY) return current
      // Its items by their own keys, never by its length: `[4294967294]` alone makes a
      // length of 2^32 - 1, which a walk over the indices (multer's forEach) pays for.
      const made = Object.create(null)
      for (const key of Object.keys(current)) {
        if (Number(key) > MAX_INDEX) continue // a number no index holds: forEach skips it
        const item = current[key]
        if (item !== undefined) made[key] = item
      }
      holder[step.key] = made
      return made
    }
    default: {
      const made = Object.create(null)
      made[''] = current
      holder[step.key] = made
      return made
    }
  }
}

/** Adds one field to `store` (throws, as append-field does, on what it cannot build). */
function appendField (store, name, value) {
  const steps = pathOf(name)
  if (steps === null) return setLast(store, name, false, value)
  let holder = store
  for (let i = 0; i < steps.length - 1; i++) holder = descend(holder, steps[i])
  const last = steps[steps.length - 1]
  setLast(holder, last.key, last.append, value)
}

module.exports = { appendField }
