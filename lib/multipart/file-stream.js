'use strict'
// A file's `file.stream`, the Readable its storage engine reads: made for it, and cut
// short by the form's failure.
const { Readable } = require('node:stream')

/** A file's stream; `read`: its engine wants more. */
function fileStream (highWaterMark, read) {
  const stream = new Readable({ highWaterMark, read })
  // A stream ended with the request's error before its engine listens for one.
  stream.on('error', () => {})
  return stream
}

/**
 * A file's stream cut by the request's error: marked `truncated` ('limit' emitted at a
 * size limit, as busboy), then destroyed with the error, never ended: an engine that
 * completes on 'end' (lib-storage's upload) would store part of a file as the whole.
 * pipe() passes no destruction on, so what the stream is piped into is destroyed with
 * it, without an error (the engine may not listen for one: an 'error' then would end
 * the process), so an engine that pipes it on (multer-s3's content-type sniffing) sees
 * its stream close early, as lib-storage does, instead of waiting for ever.
 */
function cutStream (stream, err) {
  stream.truncated = true
  if (err.code === 'LIMIT_FILE_SIZE') stream.emit('limit')
  for (const destination of [...stream._readableState.pipes]) {
    if (typeof destination.destroy === 'function') destination.destroy()
  }
  stream.destroy(err)
}

module.exports = { fileStream, cutStream }
