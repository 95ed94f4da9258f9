'use strict'
// What the engine (./engine.js) keeps of the part being read: a field's head, or a file
// and where its bytes stand (filter, held pieces, stream, its engine).
const { ASKING } = require('./file')

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
    this.at = ASKING // where the file is (./file.js), changed by its transition() alone
    this.pieces = [] // data held until the answer (or, memory storage, until the end)
    this.held = 0
    this.size = 0 // bytes of the part so far
    this.stream = null
    this.holding = false // the file holds the source (./valve.js)
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
