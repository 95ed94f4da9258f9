'use strict'

/**
 * What a client did wrong, with the HTTP status to answer. Same shape as the errors of
 * raw-body / body-parser (status, statusCode, type, expose, and the size fields), so
 * existing error handlers work unchanged.
 */
class BodyError extends Error {
  constructor (message, fields) {
    super(message)
    this.name = 'BodyError'
    this.status = fields.status
    this.statusCode = fields.status
    this.type = fields.type
    this.code = fields.code
    this.expose = true
    for (const key of ['limit', 'length', 'expected', 'received', 'encoding', 'reason', 'charset', 'timeout', 'field', 'header', 'algorithm']) {
      if (fields[key] !== undefined) this[key] = fields[key]
    }
  }
}

// code -> [status, type, message]. Native errors arrive as { code, ...fields } and are
// built from this same table, so both tiers produce identical errors.
const KINDS = {
  ERR_BODY_TOO_LARGE: [413, 'entity.too.large', () => 'request entity too large'],
  ERR_BODY_LENGTH_MISMATCH: [400, 'request.size.invalid', () => 'request size did not match content length'],
  ERR_BODY_INVALID_LENGTH: [400, 'request.size.invalid', () => 'invalid content-length header'],
  ERR_BODY_ENCODING_UNSUPPORTED: [415, 'encoding.unsupported', (f) => `unsupported content encoding "${f.encoding}"`],
  ERR_BODY_ENCODING_INVALID: [400, 'encoding.invalid', (f) => `invalid ${f.encoding} body: ${REASONS[f.reason]}`],
  ECONNABORTED: [400, 'request.aborted', () => 'request aborted'],
  ERR_BODY_OUT_OF_MEMORY: [503, 'memory.exhausted', () => 'no memory for the request body'],
  // The body's digest is not the one its request declared (Content-Digest, Repr-Digest,
  // Content-MD5): `header` names the header, `algorithm` the hash (lib/body/digest.js).
  ERR_BODY_DIGEST_MISMATCH: [400, 'request.digest.mismatch', (f) => `${f.header} ${f.algorithm} digest does not match the body`],
  // The process's memory budget (setMemoryBudget) has no room for this body now: the
  // error carries a Retry-After header (`headers`, as http-errors' do).
  ERR_BODY_BUDGET: [503, 'memory.budget', () => 'the server is reading too many request bodies; try again later'],
  // A body read as text (finishString, readText, the text parsers) whose string would be
  // longer than V8 makes one: `limit` is buffer.constants.MAX_STRING_LENGTH.
  ERR_BODY_STRING_TOO_LONG: [413, 'entity.too.large', () => 'request entity too large to be read as a string'],
  // The body did not arrive whole within the `timeout` option (lib/body/deadlines.js).
  ERR_BODY_TIMEOUT: [408, 'request.timeout', () => 'request timeout'],
  // The Express parsers' own errors (lib/frameworks/body-parser), with body-parser's status and type.
  ERR_BODY_CHARSET_UNSUPPORTED: [415, 'charset.unsupported', (f) => `unsupported charset "${f.charset.toUpperCase()}"`],
  ERR_BODY_PARAMETERS_TOO_MANY: [413, 'parameters.too.many', () => 'too many parameters'],
  ERR_BODY_DEPTH_EXCEEDED: [400, 'querystring.parse.rangeError', () => 'The input exceeded the depth'],
  // Given to body-parser's own parse failure (lib/frameworks/body-parser/read.js), which stays V8's
  // SyntaxError with its message: not made from this row but for the code's tests.
  ERR_BODY_PARSE: [400, 'entity.parse.failed', () => 'the body could not be parsed'],
  // multipart/form-data (src/core/multipart/error.rs): the limits keep multer's codes
  // and messages, so a MulterError can be made from any of them.
  ERR_MULTIPART_CONTENT_TYPE: [415, 'multipart.unsupported', () => 'unsupported content type: multipart/form-data expected'],
  ERR_MULTIPART_BOUNDARY: [400, 'multipart.boundary', (f) => `invalid multipart boundary (${f.reason})`],
  ERR_MULTIPART_HEADER: [400, 'multipart.header', (f) => `malformed part header (${f.reason})`],
  ERR_MULTIPART_TRUNCATED: [400, 'multipart.truncated', (f) => `unexpected end of form (in the ${f.reason})`],
  LIMIT_PART_COUNT: [413, 'multipart.limit', () => 'Too many parts'],
  LIMIT_FILE_SIZE: [413, 'multipart.limit', () => 'File too large'],
  LIMIT_FILE_COUNT: [413, 'multipart.limit', () => 'Too many files'],
  LIMIT_FIELD_KEY: [413, 'multipart.limit', () => 'Field name too long'],
  LIMIT_FIELD_VALUE: [413, 'multipart.limit', () => 'Field value too long'],
  LIMIT_FIELD_COUNT: [413, 'multipart.limit', () => 'Too many fields'],
  LIMIT_HEADER_PAIRS: [413, 'multipart.limit', () => 'Too many header pairs'],
  LIMIT_HEADER_SIZE: [413, 'multipart.limit', () => 'Part header too large'],
  // multer's other codes: what a form's names and files break (400), and a file stream
  // destroyed before its storage engine read it (500).
  LIMIT_UNEXPECTED_FILE: [400, 'multipart.field', () => 'Unexpected file field'],
  MISSING_FIELD_NAME: [400, 'multipart.field', () => 'Field name missing'],
  LIMIT_FIELD_NESTING: [400, 'multipart.field', () => 'Field name nesting too deep'],
  LIMIT_FIELD_ARRAY_INDEX: [400, 'multipart.field', () => 'Field name array index too large'],
  INVALID_FIELD_NAME: [400, 'multipart.field', () => 'Invalid field name'],
  STREAM_DESTROYED: [500, 'multipart.storage', () => 'File stream was destroyed']
}

// The codes of errors that are the program's mistake or the library's, never the
// client's: thrown at the call (TypeError, Error), or, with a 500 status, passed on.
// code -> what it means. Not BodyErrors; listed so that every code has one home.
const PROGRAM_ERRORS = {
  ERR_INVALID_ARG_TYPE: 'a chunk that is not an ArrayBuffer or a view of one (TypeError)',
  ERR_BODY_CHUNK_DETACHED: 'a chunk whose memory is gone: a detached ArrayBuffer, a view outside its buffer (TypeError)',
  ERR_BODY_CHUNK_SHARED: 'a chunk of shared memory (SharedArrayBuffer), which another thread may write (TypeError)',
  ERR_BODY_STATE: 'a BodyAccumulator call its state does not allow: push() or finish() after finish() or abort()',
  ERR_BODY_GONE: "ultimate-express did not read this request's body and uWS dropped it (a parser after async middleware): 500",
  ERR_UWS_BODY_NATIVE: 'the native addon did not load (the error lists where it looked)',
  ERR_UWS_BODY_NAPI: 'an N-API call failed inside the addon (a Node bug or exhausted memory)',
  ERR_UWS_BODY_INTERNAL: 'a defect in the addon, caught before it could harm the process',
  ERR_INTERNAL: "the code answerError sends for an error not meant for the client (a 5xx without expose): the error's own stays on the server"
}

// The codes multer's MulterError has: errors with these are MulterErrors (a BodyError
// with multer's name, `field` and `filename`), from both multipart APIs.
const MULTER_CODES = new Set(['LIMIT_PART_COUNT', 'LIMIT_FILE_SIZE', 'LIMIT_FILE_COUNT', 'LIMIT_FIELD_KEY',
  'LIMIT_FIELD_VALUE', 'LIMIT_FIELD_COUNT', 'LIMIT_UNEXPECTED_FILE', 'MISSING_FIELD_NAME', 'LIMIT_FIELD_NESTING',
  'LIMIT_FIELD_ARRAY_INDEX', 'INVALID_FIELD_NAME', 'STREAM_DESTROYED'])

// The `reason` of an encoding.invalid error (src/core/error.rs Invalid).
const REASONS = {
  corrupt: 'corrupt data',
  truncated: 'the body ends before the encoded stream does',
  trailing: 'data after the end of the stream'
}

function bodyError (code, fields) {
  const [status, type, message] = KINDS[code]
  const err = new BodyError(message(fields), { ...fields, code, status, type })
  if (code === 'ERR_BODY_BUDGET') err.headers = { 'Retry-After': RETRY_AFTER }
  return err
}

// The Retry-After of a refusal for the memory budget, in seconds: bodies being read end
// and return their memory in about that time.
const RETRY_AFTER = '1'

function tooLarge (limit, length, received) {
  return bodyError('ERR_BODY_TOO_LARGE', { limit, length: orUndefined(length), expected: orUndefined(length), received })
}

function lengthMismatch (expected, received) {
  return bodyError('ERR_BODY_LENGTH_MISMATCH', { length: expected, expected, received })
}

function aborted (expected, received) {
  return bodyError('ECONNABORTED', { length: orUndefined(expected), expected: orUndefined(expected), received })
}

function stringTooLong (limit, received) {
  return bodyError('ERR_BODY_STRING_TOO_LONG', { limit, received })
}

function timedOut (timeout, received) {
  return bodyError('ERR_BODY_TIMEOUT', { timeout, received })
}

function overBudget () {
  return bodyError('ERR_BODY_BUDGET', {})
}

function orUndefined (length) {
  return length >= 0 ? length : undefined
}

/**
 * multer's MulterError (its code, message, `field` and `filename`), as a BodyError: with
 * an HTTP status (multer sets none, so Express answers 500; a client's mistake is a 4xx)
 * and a stable `type`. `new MulterError(code, field, filename)` as in multer.
 */
class MulterError extends BodyError {
  constructor (code, field, filename) {
    const kind = KINDS[code]
    super(kind ? kind[2]({}) : `Unknown error: ${code}`, { status: kind ? kind[0] : 500, type: kind ? kind[1] : 'multipart.error', code })
    this.name = 'MulterError'
    if (field) this.field = field
    if (filename) this.filename = filename
  }
}

/**
 * A multipart body's error: `fields` as the native side gives them (`{ code, reason?,
 * max? }`, or a body error's fields for an encoded form), plus `field` and `filename`
 * (the part's names, when known). multer's codes give a MulterError; `limit` is a broken
 * limit's value (an inclusive maximum).
 */
function multipartError (fields, field, filename) {
  const code = fields.code
  if (!MULTER_CODES.has(code)) {
    if (code.startsWith('ERR_BODY_')) return bodyError(code, fields)
    return bodyError(code, { reason: fields.reason, limit: fields.max, field })
  }
  const err = new MulterError(code, field, filename)
  if (fields.max !== undefined) err.limit = fields.max
  return err
}

// busboy's messages for a malformed form, which multer passes on as they are: multipart()'s
// errors carry them, their code, status and type kept.
const BUSBOY_MESSAGES = {
  ERR_MULTIPART_TRUNCATED: () => 'Unexpected end of form',
  ERR_MULTIPART_HEADER: () => 'Malformed part header',
  // A boundary busboy takes (too long, or a character RFC 2046 does not allow) keeps ours.
  ERR_MULTIPART_BOUNDARY: (err) => err.reason === 'missing' ? 'Multipart: Boundary not found' : null,
  ERR_MULTIPART_CONTENT_TYPE: (_, contentType) => `Unsupported content type: ${contentType}`
}

/** `err` (just made) with busboy's message, where busboy has one for it. */
function withBusboyMessage (err, contentType) {
  const message = Object.hasOwn(BUSBOY_MESSAGES, err.code) ? BUSBOY_MESSAGES[err.code](err, contentType) : null
  if (message !== null) err.message = message
  return err
}

/** A call the accumulator's state does not allow: the program's mistake, not the client's. */
function stateError (message) {
  const err = new Error(`BodyAccumulator: ${message}`)
  err.code = 'ERR_BODY_STATE'
  return err
}

module.exports = { BodyError, MulterError, KINDS, PROGRAM_ERRORS, bodyError, tooLarge, lengthMismatch, aborted, stringTooLong, timedOut, overBudget, multipartError, withBusboyMessage, stateError }
