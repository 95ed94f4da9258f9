'use strict'
// What the engine (./engine.js) keeps of the part being read: a field's head, or a file
// and where its bytes stand (filter, held pieces, stream, its engine).

class FieldState {
  constructor (head) {
    this.isField = true
    this.head = head
  }
}

class FileState {
  constructor (file) {
    this.isField = false
    this.file = file
    this.token = null
    this.decided = false // the filter answered
    this.accepted = false
    this.ended = false // the part's data is complete
    this.pieces = [] // data held until the answer (or, memory storage, until the end)
    this.held = 0
    this.size = 0 // bytes of the part so far
    this.over = false // more than fileSize of them before the answer
    this.stream = null
    this.started = false // handed to its engine
    this.holding = false
    this.finishing = false // all with its engine, not stored yet: counted in finishingBytes
    this.range = null
  }
}

/** A file as its part begins: what the part's head says of it. */
function fileEntry (fieldname, originalname, encoding, mimetype) {
  return { fieldname, originalname, encoding, mimetype }
}

/** A memory storage file, complete: its bytes are `buffer`, a range of the arena. */
function inArena (file, size, buffer) {
  file.size = size
  file.buffer = buffer
  return file
}

module.exports = { FieldState, FileState, fileEntry, inArena }
