'use strict'
// What one request's form is read by, made once as it begins and never changed (frozen):
// the engine's options and the request's headers and limits. Only values that may outlive
// the form: what the application hands in (its req, its filter, its adapter) is held by
// whoever uses it, and let go when the form ends.
const { parseContentLength, INVALID } = require('../body/headers')

class RequestPlan {
  /** options, request: as MultipartEngine's (./engine.js). */
  constructor (options, request) {
    const expected = parseContentLength(request.contentLength)
    const encoding = request.contentEncoding
    this.options = options // ./options.js: shared by the requests of one configuration
    this.contentType = request.contentType
    this.contentLength = expected === INVALID ? -1 : expected
    this.lengthInvalid = expected === INVALID
    this.contentEncoding = encoding === undefined || encoding === null || encoding === '' ? null : String(encoding)
    this.digests = request.digests
    this.fieldBytes = options.decodeDefault !== null // ./upload.js: fields without a charset as bytes
    this.limits = request.limits
    Object.freeze(this)
  }
}

module.exports = { RequestPlan }
