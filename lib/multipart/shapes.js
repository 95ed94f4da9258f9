'use strict'
// One finished object of each kind the engine makes per form, kept so that V8 keeps its
// hidden class. Optimized code holds the hidden classes it was specialised for weakly: a
// full GC that finds no live object of one frees it and throws away every function
// optimized against it, to be compiled again over the next forms. Between two forms
// nothing of theirs is alive, so without these each full GC costs the parser's hot
// functions (upload.js feed, engine.js part and done, form-files.js filePart, ...)
// their optimized code (bench/RESULTS.md, "Multipart on bare uWS", row (b)).
// The latest of each kind is kept (its hidden class is the one in use, whatever field
// representations V8 has settled on since), and only once its form is over, when it
// holds nothing of the form's data: the engine after letGo() (and with it its plan, its
// files and its ending), the upload after it was settled, a file's state without its
// file; and objects made as the form's were, of no names and no bytes: a part's head, a
// memory file, a one-byte Buffer made natively (./upload.js).
const latest = { engine: null, upload: null, fileState: null, head: null, file: null, adapter: null, nativeBuffer: null }

/** `object` (a finished one, holding no data of its form) stands for its kind from now on. */
function keepShape (kind, object) {
  latest[kind] = object
}

module.exports = { keepShape }
