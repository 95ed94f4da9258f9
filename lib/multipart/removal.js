'use strict'
// Undoing a failed form's files through their storage engine's _removeFile, multer's way:
// one after the other, each failure kept (with its file) for the error's storageErrors.

/** Removes `files`, then calls `done(storageErrors)`. */
function removeAll (storage, req, files, done) {
  const storageErrors = []
  const removeNext = (i) => {
    if (i === files.length) return done(storageErrors)
    const file = files[i]
    let called = false
    const after = (removeErr) => {
      if (called) return
      called = true
      if (removeErr) {
        removeErr.file = file
        removeErr.field = file.fieldname
        storageErrors.push(removeErr)
      }
      setImmediate(removeNext, i + 1)
    }
    try {
      storage._removeFile(req, file, after)
    } catch (removeErr) {
      after(removeErr)
    }
  }
  removeNext(0)
}

/** A file stored after the removals began: removed, its outcome told to no one. */
function removeLate (storage, req, file) {
  try {
    storage._removeFile(req, file, () => {})
  } catch {}
}

module.exports = { removeAll, removeLate }
