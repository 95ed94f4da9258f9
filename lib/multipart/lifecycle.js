'use strict'
// A form's lifecycle: its states, and in one table what each event does in each. An event
// a state does not name is ignored there: the first error wins, and a file that is stored
// while the body is still being read ends nothing. The form's ending (./form-ending.js)
// changes state only through next(), and acts on entering a state.

// The parser reads the body; files may be with their storage engines already.
const READING = 'reading'
// The body is read; files are still with their engines.
const STORING = 'storing'
// Failed: files still with their engines are cut short, and the engine waits for them to
// call back (at most its grace), so that what they stored is known before it is removed.
const FAILING = 'failing'
// Failed: each file an engine stored, or began to write, is removed, one after the other.
const REMOVING = 'removing'
// Over: the adapter is told (done, or the error with its storageErrors), everything held
// is let go; the source may still deliver the body's rest, which is dropped.
const ENDED = 'ended'

// Refused before a byte is parsed (content-type, length): start()'s caller tells the adapter.
const REFUSED = 'refused'
// The parser saw the form's end.
const BODY_READ = 'bodyRead'
// No file is with its engine or waiting for its filter.
const IDLE = 'idle'
// An error: the client's (abort, a limit, a malformed form), the application's (a filter,
// a storage engine or sink, at once or later) or the timeout's.
const FAILED = 'failed'
// The wait for engines after a failure ran out: removal starts without them.
const GRACE_OVER = 'graceOver'
// Every removal called back.
const REMOVED = 'removed'

const STATES = [READING, STORING, FAILING, REMOVING, ENDED]
const EVENTS = [REFUSED, BODY_READ, IDLE, FAILED, GRACE_OVER, REMOVED]

const TRANSITIONS = Object.freeze({
  [READING]: Object.freeze({ [REFUSED]: ENDED, [BODY_READ]: STORING, [FAILED]: FAILING }),
  [STORING]: Object.freeze({ [IDLE]: ENDED, [FAILED]: FAILING }),
  [FAILING]: Object.freeze({ [IDLE]: REMOVING, [GRACE_OVER]: REMOVING }),
  [REMOVING]: Object.freeze({ [REMOVED]: ENDED }),
  [ENDED]: Object.freeze({})
})

/** The state `event` leads to from `state`, or null when the event is ignored there. */
function next (state, event) {
  const to = TRANSITIONS[state][event]
  return to === undefined ? null : to
}

/**
 * Whether the form goes on in `state`: parts are taken, files go to their engines and a
 * filter's answer counts. From FAILING on nothing new starts.
 */
function goesOn (state) {
  return state === READING || state === STORING
}

module.exports = {
  READING,
  STORING,
  FAILING,
  REMOVING,
  ENDED,
  REFUSED,
  BODY_READ,
  IDLE,
  FAILED,
  GRACE_OVER,
  REMOVED,
  STATES,
  EVENTS,
  TRANSITIONS,
  next,
  goesOn
}
