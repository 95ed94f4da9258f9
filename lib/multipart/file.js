'use strict'
// One file's lifecycle inside a form: where it is, and in one table what each event does
// there. The form's files (./form-files.js) move a file only through transition(), and
// read where it is from its state; an event a state does not name is a bug, and throws.

// Its filter is being asked, as its part begins.
const ASKING = 'asking'
// The filter answers later: the bytes are held (and pause the source past highWaterMark).
const HELD = 'held'
// The same, the part complete.
const HELD_WHOLE = 'heldWhole'
// More than fileSize while the filter has not answered: the bytes are dropped, and an
// acceptance is LIMIT_FILE_SIZE.
const OVER = 'over'
// The filter said yes at once: placed (arena, engine) as it returns.
const ACCEPTED = 'accepted'
// Memory storage, accepted at once: the bytes go to the request's arena.
const ARENA = 'arena'
// Memory storage, accepted late: the bytes are held until the part ends.
const GATHERING = 'gathering'
// Its stream is made, its engine not free yet: it waits its turn (./turns.js).
const WAITING = 'waiting'
const WAITING_WHOLE = 'waitingWhole'
// With its engine, the part still arriving.
const STREAMING = 'streaming'
// With its engine, all its bytes too, not stored yet: counted in finishingBytes.
const FINISHING = 'finishing'
// The form failed while it arrived: its stream destroyed, or (memory) its placeholder kept.
const CUT_OFF = 'cutOff'
// Its engine called back (stored it, or failed).
const RETURNED = 'returned'
// Memory storage: its held bytes became the file.
const STORED = 'stored'
// Refused by its filter, or let go by the form's failure before its engine had it.
const DROPPED = 'dropped'

// The filter did not answer before it returned.
const LATER = 'later'
// An undecided file's bytes passed fileSize.
const OVER_SIZE = 'overSize'
// The part's data is complete.
const PART_END = 'partEnd'
// The filter said yes (no filter: yes to every file) before it returned.
const ACCEPT = 'accept'
// The filter said no, or failed, or answered once the form had stopped or the file was
// over fileSize.
const REJECT = 'reject'
// Memory storage takes an accepted file.
const KEEP = 'keep'
// An accepted file's engine is busy with others.
const QUEUE = 'queue'
// The file is handed to its engine.
const BEGIN = 'begin'
// The form failed while the file arrived, and what it holds is kept (or cut, with its engine).
const CUT = 'cut'
// The form failed and the file is let go.
const DROP = 'drop'
// Its engine called back.
const CALLED_BACK = 'calledBack'

const STATES = [ASKING, HELD, HELD_WHOLE, OVER, ACCEPTED, ARENA, GATHERING, WAITING, WAITING_WHOLE, STREAMING, FINISHING, CUT_OFF, RETURNED, STORED, DROPPED]
const EVENTS = [LATER, OVER_SIZE, PART_END, ACCEPT, REJECT, KEEP, QUEUE, BEGIN, CUT, DROP, CALLED_BACK]

const TRANSITIONS = Object.freeze({
  [ASKING]: Object.freeze({ [LATER]: HELD, [ACCEPT]: ACCEPTED, [REJECT]: DROPPED }),
  [HELD]: Object.freeze({ [OVER_SIZE]: OVER, [PART_END]: HELD_WHOLE, [REJECT]: DROPPED, [KEEP]: GATHERING, [QUEUE]: WAITING, [BEGIN]: STREAMING }),
  [HELD_WHOLE]: Object.freeze({ [REJECT]: DROPPED, [KEEP]: STORED, [QUEUE]: WAITING_WHOLE, [BEGIN]: FINISHING }),
  [OVER]: Object.freeze({ [PART_END]: OVER, [REJECT]: DROPPED }),
  [ACCEPTED]: Object.freeze({ [KEEP]: ARENA, [QUEUE]: WAITING, [BEGIN]: STREAMING }),
  // Its range is taken at its end; the body's end describes it.
  [ARENA]: Object.freeze({ [PART_END]: ARENA, [CUT]: CUT_OFF, [DROP]: DROPPED }),
  [GATHERING]: Object.freeze({ [PART_END]: STORED, [CUT]: CUT_OFF, [DROP]: DROPPED }),
  [WAITING]: Object.freeze({ [PART_END]: WAITING_WHOLE, [BEGIN]: STREAMING, [DROP]: DROPPED }),
  [WAITING_WHOLE]: Object.freeze({ [BEGIN]: FINISHING, [DROP]: DROPPED }),
  [STREAMING]: Object.freeze({ [PART_END]: FINISHING, [CUT]: CUT_OFF, [CALLED_BACK]: RETURNED }),
  // A file all there when the form fails is let finish, then removed.
  [FINISHING]: Object.freeze({ [CALLED_BACK]: RETURNED }),
  [CUT_OFF]: Object.freeze({ [CALLED_BACK]: RETURNED }),
  // An engine may call back before its stream ended; the rest still flows into it.
  [RETURNED]: Object.freeze({ [PART_END]: RETURNED }),
  [STORED]: Object.freeze({}),
  // Refused while its part still arrives: the rest is skipped.
  [DROPPED]: Object.freeze({ [PART_END]: DROPPED })
})

/** The state `event` leads to from `state`, or null when it cannot happen there. */
function next (state, event) {
  const to = TRANSITIONS[state][event]
  return to === undefined ? null : to
}

/** Moves `file` (a FileState) on by `event`; returns where it now is. */
function transition (file, event) {
  const to = next(file.at, event)
  if (to === null) throw new Error(`uws-body: a multipart file ${file.at} cannot take ${event}`)
  file.at = to
  return to
}

/** Whether the file still waits for its filter's answer (a second answer is ignored). */
function undecided (state) {
  return state === ASKING || state === HELD || state === HELD_WHOLE || state === OVER
}

module.exports = {
  ASKING,
  HELD,
  HELD_WHOLE,
  OVER,
  ACCEPTED,
  ARENA,
  GATHERING,
  WAITING,
  WAITING_WHOLE,
  STREAMING,
  FINISHING,
  CUT_OFF,
  RETURNED,
  STORED,
  DROPPED,
  LATER,
  OVER_SIZE,
  PART_END,
  ACCEPT,
  REJECT,
  KEEP,
  QUEUE,
  BEGIN,
  CUT,
  DROP,
  CALLED_BACK,
  STATES,
  EVENTS,
  TRANSITIONS,
  next,
  transition,
  undecided
}
