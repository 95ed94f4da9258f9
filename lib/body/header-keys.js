'use strict'
// The request headers the readers take from a uWS HttpRequest, each as the bytes of its
// lower-case name. uWS's getHeader reads a key given as bytes as they are; a string key
// it converts to UTF-8 in memory allocated and freed on every call (docs/performance.md,
// row 'what a request reads'). Each key has an ArrayBuffer of its own and never leaves
// the library.
const encoder = new TextEncoder()
const key = (name) => encoder.encode(name).buffer

module.exports = {
  CONTENT_LENGTH: key('content-length'),
  CONTENT_ENCODING: key('content-encoding'),
  CONTENT_TYPE: key('content-type'),
  CONTENT_DIGEST: key('content-digest'),
  REPR_DIGEST: key('repr-digest'),
  CONTENT_MD5: key('content-md5')
}
