'use strict'
// One file's lifecycle inside a form (lib/multipart/file.js): its table, pair by pair,
// against one written out here; what transition() does with a pair the table lacks; which
// states still wait for the filter; and that every state is reached and the ends are ends.
const test = require('node:test')
const assert = require('node:assert/strict')
const life = require('../lib/multipart/file')
const { FileState } = require('../lib/multipart/parts')

const { ASKING, HELD, HELD_WHOLE, OVER, ACCEPTED, ARENA, GATHERING, WAITING, WAITING_WHOLE } = life
const { STREAMING, FINISHING, CUT_OFF, RETURNED, STORED, DROPPED } = life
const { LATER, OVER_SIZE, PART_END, ACCEPT, REJECT, KEEP, QUEUE, BEGIN, CUT, DROP, CALLED_BACK } = life

// Each state's row, in EVENTS' order: where the event leads, or null when it cannot happen.
//                        LATER OVER_SIZE PART_END       ACCEPT    REJECT   KEEP       QUEUE          BEGIN      CUT      DROP     CALLED_BACK
const EXPECTED = {
  [ASKING]: /*       */ [HELD, null, null, ACCEPTED, DROPPED, null, null, null, null, null, null],
  [HELD]: /*         */ [null, OVER, HELD_WHOLE, null, DROPPED, GATHERING, WAITING, STREAMING, null, null, null],
  [HELD_WHOLE]: /*   */ [null, null, null, null, DROPPED, STORED, WAITING_WHOLE, FINISHING, null, null, null],
  [OVER]: /*         */ [null, null, OVER, null, DROPPED, null, null, null, null, null, null],
  [ACCEPTED]: /*     */ [null, null, null, null, null, ARENA, WAITING, STREAMING, null, null, null],
  [ARENA]: /*        */ [null, null, ARENA, null, null, null, null, null, CUT_OFF, DROPPED, null],
  [GATHERING]: /*    */ [null, null, STORED, null, null, null, null, null, CUT_OFF, DROPPED, null],
  [WAITING]: /*      */ [null, null, WAITING_WHOLE, null, null, null, null, STREAMING, null, DROPPED, null],
  [WAITING_WHOLE]: /**/ [null, null, null, null, null, null, null, FINISHING, null, DROPPED, null],
  [STREAMING]: /*    */ [null, null, FINISHING, null, null, null, null, null, CUT_OFF, null, RETURNED],
  [FINISHING]: /*    */ [null, null, null, null, null, null, null, null, null, null, RETURNED],
  [CUT_OFF]: /*      */ [null, null, null, null, null, null, null, null, null, null, RETURNED],
  [RETURNED]: /*     */ [null, null, RETURNED, null, null, null, null, null, null, null, null],
  [STORED]: /*       */ [null, null, null, null, null, null, null, null, null, null, null],
  [DROPPED]: /*      */ [null, null, DROPPED, null, null, null, null, null, null, null, null]
}

test('the table: every state and event, what it leads to or that it cannot happen', () => {
  assert.deepEqual(life.EVENTS, [LATER, OVER_SIZE, PART_END, ACCEPT, REJECT, KEEP, QUEUE, BEGIN, CUT, DROP, CALLED_BACK])
  assert.deepEqual(life.STATES, Object.keys(EXPECTED))
  for (const state of life.STATES) {
    life.EVENTS.forEach((event, i) => {
      assert.equal(life.next(state, event), EXPECTED[state][i], `${event} in ${state}`)
    })
  }
})

test('transition(): a pair in the table moves the file, any other throws and leaves it', () => {
  for (const state of life.STATES) {
    life.EVENTS.forEach((event, i) => {
      const file = new FileState(null)
      file.at = state
      const to = EXPECTED[state][i]
      if (to === null) {
        assert.throws(() => life.transition(file, event), /cannot take/, `${event} in ${state}`)
        assert.equal(file.at, state)
      } else {
        assert.equal(life.transition(file, event), to, `${event} in ${state}`)
        assert.equal(file.at, to)
      }
    })
  }
})

test('a file begins asking its filter; it is undecided until the filter answers', () => {
  assert.equal(new FileState(null).at, ASKING)
  const undecided = life.STATES.filter(life.undecided)
  assert.deepEqual(undecided, [ASKING, HELD, HELD_WHOLE, OVER])
})

test('every state is reached from ASKING; STORED, DROPPED and RETURNED are left by nothing (a late part end stays)', () => {
  const reached = new Set([ASKING])
  for (let grew = true; grew;) {
    grew = false
    for (const state of reached) {
      for (const to of Object.values(life.TRANSITIONS[state])) if (!reached.has(to)) { reached.add(to); grew = true }
    }
  }
  assert.deepEqual([...reached].sort(), [...life.STATES].sort())
  for (const end of [STORED, DROPPED, RETURNED]) {
    for (const to of Object.values(life.TRANSITIONS[end])) assert.equal(to, end)
  }
})
