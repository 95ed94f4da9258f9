/// <reference types="node" />

/** The digests uws-body makes, by their names in `digest` and in a `Digests` object. */
export type DigestAlgorithm = 'sha256' | 'sha512' | 'md5' | 'crc32c'

/**
 * The `digest` option of every reader. Default (true): a digest the request declares
 * (Content-Digest over the bytes as sent, Repr-Digest over the decoded bytes, with
 * sha-256 or sha-512; Content-MD5 over the bytes as sent) is checked as the body is
 * copied, and a body that does not match fails with 400 ERR_BODY_DIGEST_MISMATCH before
 * the program gets it. An algorithm not made here or a malformed header is ignored (RFC
 * 9530). A list also makes those digests of the body as the program gets it (decoded),
 * declared or not. false: nothing is checked or made.
 */
export type DigestOption = boolean | readonly DigestAlgorithm[]

/** The digests a `digest` list asked for, of the bytes the program got: each a Buffer (CRC-32C's 4 bytes big-endian, as S3 writes it). */
export type Digests = { [A in DigestAlgorithm]?: Buffer }

export interface BodyOptions {
  /** The content-length header value. Absent, null or '' (uWS's missing header) = unknown length. */
  contentLength?: number | string | null
  /**
   * The content-encoding header value: gzip, x-gzip, deflate (zlib or raw), br, zstd, or
   * a list of up to two (`gzip, br`, decoded in reverse order). Absent, null, '' or
   * 'identity' = not encoded; anything else fails with 415.
   */
  contentEncoding?: string | null
  /** false refuses every encoded body with 415 (body-parser's `inflate: false`). Default true. */
  inflate?: boolean
  /**
   * Largest body accepted: bytes, or a string in body-parser's format ('100kb', '1.5mb',
   * '1000'). Strings bytes.parse would misread (' 10kb ', '1e3') throw TypeError. Default '100kb'.
   */
  limit?: number | string
  /** Largest buffer allocated before bytes arrive, in bytes. Default 1048576 (1 MiB). */
  maxPreallocated?: number
  /** The Content-Digest, Repr-Digest and Content-MD5 header values, if any: checked at finish(). */
  contentDigest?: string | null
  reprDigest?: string | null
  contentMd5?: string | null
  /** Check the declared digests (default), not (false), or also make these (see `digests`). */
  digest?: DigestOption
}

export interface ReadBodyOptions {
  /** As BodyOptions.limit. Default '100kb'. */
  limit?: number | string
  maxPreallocated?: number
  /** false refuses encoded bodies with 415. Default true. */
  inflate?: boolean
  /**
   * Milliseconds for the whole body to arrive, from the call: later, 408 request.timeout
   * (ERR_BODY_TIMEOUT) and the memory is freed. Default 300000 (Node's http requestTimeout);
   * 0 or Infinity: none.
   */
  timeout?: number
  /** See LingerOptions. Default { bytes: 64 MiB, timeout: 10000, idle: 1000, errorAtOnce: false }. */
  linger?: LingerOptions | false
  /** Called once if the client goes away; `res` must not be used after that. */
  onAborted?: () => void
  /** See DigestOption. A list goes with onDigest. */
  digest?: DigestOption
  /** With a `digest` list: called once with the digests, just before the promise resolves. */
  onDigest?: (digests: Digests) => void
}

export interface BodyStreamOptions {
  /** Largest body, as sent and as decoded (as BodyOptions.limit). Default: none (the stream's memory is bounded anyway). */
  limit?: number | string
  /** false refuses encoded bodies with 415. Default true. */
  inflate?: boolean
  /** Milliseconds for the whole body to arrive, from the call (408 after). Default 0: none. */
  timeout?: number
  /** Bytes buffered before the client is paused. Default 524288 (512 KiB). */
  highWaterMark?: number
  /** See LingerOptions: for a body the stream stops reading (an error, destroy()). */
  linger?: LingerOptions | false
  /** Called once if the client goes away; `res` must not be used after that. */
  onAborted?: () => void
  /**
   * See DigestOption. A declared digest that does not match is the stream's 'error' in
   * place of 'end' (the bytes before it were already emitted). With a list, the digests
   * are in `stream.digests` and a 'digest' event, before 'end'.
   */
  digest?: DigestOption
}

/** bodyStream's Readable. */
export type BodyReadable = import('node:stream').Readable & {
  /** With a `digest` list: the digests, set just before 'end' (and emitted as 'digest'); else null. */
  readonly digests: Digests | null
}

export interface ReadTextOptions extends ReadBodyOptions {
  /** A Node Buffer encoding; default 'utf8'. */
  encoding?: BufferEncoding
}

export type BodyErrorType =
  | 'entity.too.large'
  | 'charset.unsupported'
  | 'parameters.too.many'
  | 'querystring.parse.rangeError'
  | 'request.size.invalid'
  | 'request.aborted'
  | 'encoding.unsupported'
  | 'encoding.invalid'
  | 'memory.exhausted'
  | 'request.digest.mismatch'
  | 'memory.budget'
  | 'request.timeout'
  | 'multipart.unsupported'
  | 'multipart.boundary'
  | 'entity.parse.failed'
  | 'multipart.header'
  | 'multipart.truncated'
  | 'multipart.limit'
  | 'multipart.field'
  | 'multipart.storage'

export type BodyErrorCode =
  | 'ERR_BODY_TOO_LARGE'
  | 'ERR_BODY_LENGTH_MISMATCH'
  | 'ERR_BODY_INVALID_LENGTH'
  | 'ERR_BODY_ENCODING_UNSUPPORTED'
  | 'ERR_BODY_ENCODING_INVALID'
  | 'ERR_BODY_CHARSET_UNSUPPORTED'
  | 'ERR_BODY_PARAMETERS_TOO_MANY'
  | 'ERR_BODY_DEPTH_EXCEEDED'
  | 'ERR_BODY_PARSE'
  | 'ECONNABORTED'
  | 'ERR_BODY_OUT_OF_MEMORY'
  | 'ERR_BODY_DIGEST_MISMATCH'
  | 'ERR_BODY_BUDGET'
  | 'ERR_BODY_STRING_TOO_LONG'
  | 'ERR_BODY_TIMEOUT'
  | 'ERR_MULTIPART_CONTENT_TYPE'
  | 'ERR_MULTIPART_BOUNDARY'
  | 'ERR_MULTIPART_HEADER'
  | 'ERR_MULTIPART_TRUNCATED'
  | MulterErrorCode
  | 'LIMIT_HEADER_PAIRS'
  | 'LIMIT_HEADER_SIZE'

/** The limits multer names, with its codes (413 as a BodyError, as a MulterError too). */
export type MultipartLimitCode =
  | 'LIMIT_PART_COUNT'
  | 'LIMIT_FILE_SIZE'
  | 'LIMIT_FILE_COUNT'
  | 'LIMIT_FIELD_KEY'
  | 'LIMIT_FIELD_VALUE'
  | 'LIMIT_FIELD_COUNT'

/** Why a multipart body is malformed (`reason` of multipart.boundary, .header, .truncated). */
export type MultipartReason =
  | 'missing' | 'too long' | 'character' | 'malformed'
  | 'syntax' | 'folding' | 'no disposition' | 'disposition'
  | 'preamble' | 'headers' | 'body' | 'delimiter'

/**
 * What the client did wrong, with the status to answer. Shaped like raw-body's errors.
 * uws-body makes them (they reject readBody/readText, fill BodyAccumulator's `error`, reach
 * the parsers' `next`); there is no public constructor. Test for one with `instanceof`.
 * docs/errors.md lists every code.
 */
export class BodyError extends Error {
  protected constructor()
  name: 'BodyError' | 'MulterError'
  status: 400 | 408 | 413 | 415 | 500 | 503
  statusCode: 400 | 408 | 413 | 415 | 500 | 503
  type: BodyErrorType
  code: BodyErrorCode
  expose: true
  /** The limit that was exceeded (entity.too.large). */
  limit?: number
  /** The declared content-length, where there was one. */
  length?: number
  expected?: number
  /** Bytes received when the error happened. */
  received?: number
  /** The unsupported encoding (encoding.unsupported, lower-cased) or the coding that failed (encoding.invalid). */
  encoding?: string
  /**
   * Why an encoded body is invalid (encoding.invalid: 'corrupt', 'truncated', 'trailing'),
   * or what is wrong with a multipart body (multipart.boundary: 'missing', 'too long',
   * 'character', 'malformed'; multipart.header: 'syntax', 'folding', 'no disposition',
   * 'disposition'; multipart.truncated, where it stopped: 'preamble', 'headers', 'body',
   * 'delimiter').
   */
  reason?: 'corrupt' | 'truncated' | 'trailing' | MultipartReason
  /** The name of the part a multipart limit was broken in, when known. */
  field?: string
  /** The client's name of the file a multipart error is about, when known. */
  filename?: string
  /** The refused charset (charset.unsupported), lower-cased. */
  charset?: string
  /** The deadline that passed, in ms (request.timeout). */
  timeout?: number
  /** The header whose digest did not match (request.digest.mismatch): 'content-digest', 'repr-digest' or 'content-md5'. */
  header?: 'content-digest' | 'repr-digest' | 'content-md5'
  /** The algorithm of that digest. */
  algorithm?: DigestAlgorithm
  /** Headers the answer carries (memory.budget: Retry-After), as http-errors' `headers`. */
  headers?: Record<string, string>
}

export class BodyAccumulator {
  /**
   * Never throws for what a client sent: a declared length over the limit, a bad
   * content-length or an unsupported encoding is already in `error` on return.
   * Throws TypeError for option types that are the program's mistake.
   */
  constructor(options?: BodyOptions)
  /**
   * Copies the chunk before returning (uWS neuters its ArrayBuffer when onData returns).
   * true while the body is acceptable; false from the first error on.
   * Throws TypeError for a chunk that is not binary, is detached (or a view outside its
   * resized buffer), or is shared memory (SharedArrayBuffer); Error after finish()/abort().
   */
  push(chunk: ArrayBuffer | ArrayBufferView): boolean
  /** The whole body, owned by the caller. Throws the body's error, or Error if called twice. */
  finish(): Buffer
  /**
   * The whole body decoded as a string. utf8, latin1 and utf16le bodies read by the native
   * tier (see JS_TIER_MAX) are decoded straight from native memory, with no Buffer made.
   * Throws like finish(), and TypeError for an unknown encoding.
   */
  finishString(encoding?: BufferEncoding): string
  /** Releases the body's memory now. Idempotent; does nothing after finish(). */
  abort(): void
  /** null, or the BodyError that made push() return false. */
  readonly error: BodyError | null
  /** Bytes accepted so far, as sent (encoded, for an encoded body). */
  readonly received: number
  /** Bytes held now, decoded (0 after finish(), an error or abort()). */
  readonly length: number
  /** Bytes allocated now. */
  readonly capacity: number
  /** After finish() or finishString(): the digests the `digest` list asked for; else null. */
  readonly digests: Digests | null
}

/** The minimal parts of uWS's HttpResponse that readBody uses. */
export interface UwsResponseLike {
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): unknown
  onAborted(handler: () => void): unknown
}

/** What bodyStream also uses: uWS's throttling of the client. */
export interface UwsPausableResponseLike extends UwsResponseLike {
  pause(): unknown
  resume(): unknown
}

/** uWS's HttpRequest (only valid inside the handler), or a headers object with lower-case names. */
export type UwsRequestLike = { getHeader(name: string): string } | Record<string, string | undefined>

/**
 * Reads a uWS request body. Call synchronously in the route handler. Resolves with the
 * body or rejects with a BodyError (what the client sent or did); on abort it sets
 * `res.aborted = true`. A body refused before its end rejects once its rest is dropped
 * (see LingerOptions), so any answer the handler then writes reaches the client.
 * Continuations and `onAborted` run in the caller's async context.
 * @throws {TypeError} synchronously, before touching `res`, for the program's mistakes:
 *   a `res` that is not a uWS HttpResponse, a `req` that is neither an HttpRequest nor a
 *   headers object, a wrong option type or a limit string such as `' 10kb '`.
 */
export function readBody(res: UwsResponseLike, req: UwsRequestLike, options?: ReadBodyOptions): Promise<Buffer>

/**
 * readBody for text: resolves with the body decoded as options.encoding (default utf8).
 * @throws {TypeError} synchronously, as readBody does, and for an unknown encoding.
 */
export function readText(res: UwsResponseLike, req: UwsRequestLike, options?: ReadTextOptions): Promise<string>

/**
 * readBody compiled for a route: the options are checked once, here (a TypeError now for
 * a wrong one), and each call reads one request as readBody would. The form for a hot
 * route: `const read = bodyReader({ limit: '1mb' })`, then `read(res, req)` in its handler.
 */
export function bodyReader(options?: ReadBodyOptions): (res: UwsResponseLike, req: UwsRequestLike) => Promise<Buffer>

/** readText compiled for a route, as bodyReader is readBody. */
export function textReader(options?: ReadTextOptions): (res: UwsResponseLike, req: UwsRequestLike) => Promise<string>

/**
 * A uWS request body as a Readable of Buffers (decoded, for an encoded body), with
 * backpressure: the client is paused (res.pause()) while the stream is full. Call
 * synchronously in the route handler; it owns res.onData and res.onAborted. Errors (what
 * the client sent or did, or the timeout) are BodyErrors emitted once as 'error'.
 * destroy() stops reading: the rest of the body is dropped as it arrives, and the
 * application may still answer.
 * @throws {TypeError} synchronously for the program's mistakes, as readBody.
 */
export function bodyStream(res: UwsPausableResponseLike, req: UwsRequestLike, options?: BodyStreamOptions): BodyReadable

/** bodyStream compiled for a route, as bodyReader is readBody. */
export function streamReader(options?: BodyStreamOptions): (res: UwsPausableResponseLike, req: UwsRequestLike) => BodyReadable

/**
 * For code built on BodyAccumulator: aborts `accumulator` and calls onTimeout with a 408
 * request.timeout BodyError if it is still being read after `ms` (0 or Infinity: never).
 * Returns the function that cancels it: call it on every end path.
 */
export function bodyTimeout(accumulator: BodyAccumulator, ms: number, onTimeout: (err: BodyError) => void): () => void

export interface Stats {
  /** Native bytes held by bodies being read and by Buffers not yet collected, all threads. */
  bytesInUse: number
  /** Allocations behind bytesInUse. */
  blocksInUse: number
  /** Bytes the pool keeps idle for later bodies; a block idle for 4 s is freed. */
  bytesPooled: number
  /** The bound on bytesPooled (setPoolLimit). */
  poolLimit: number
  /**
   * Native bytes this thread has reported to its V8 isolate as external memory (the
   * bodies, streams and arenas it holds, and the idle pool blocks on its ledger; never
   * Buffers, which V8 counts itself), so that its garbage collector sees them.
   */
  bytesReported: number
  /** The memory budget (setMemoryBudget): Infinity when there is none. */
  memoryBudget: number
  /**
   * Bytes reserved under the budget, all threads: bodies being read, native blocks until
   * they go back to the pool, and other threads' idle JS-tier credit (at most two leases
   * of a 64th of the budget, 1 MiB at most, each). 0 on a quiet single-threaded server.
   */
  budgetReserved: number
  /** Bodies refused for the budget (503 ERR_BODY_BUDGET) since the process started. */
  budgetRefusals: number
}

export function stats(): Stats

/**
 * Bounds the memory held by bodies being read, process-wide (every worker thread). A body
 * of a declared length is admitted whole or refused before any byte is read; one of
 * unknown length, or decoded, reserves as it grows. A refusal is a 503 BodyError with code
 * ERR_BODY_BUDGET and a Retry-After header (`headers`). Infinity: no budget. Default: a
 * quarter of the cgroup's memory limit, else of physical memory.
 */
export function setMemoryBudget(bytes: number): void

/** Bounds the bytes the pool keeps idle (default 256 MiB); 0 disables pooling. A block idle for 4 s is freed. */
export function setPoolLimit(bytes: number): void

/**
 * Opt-in, once at startup, for Node 24: sets V8's --scavenger-max-new-space-capacity-mb to
 * 8 (Node 22's default) at run time, so that garbage Buffers are collected by young-
 * generation scavenges (every 32 MiB of them) instead of full mark-compacts. The main
 * isolate's young generation keeps its size; only worker threads started later get a
 * smaller one. Does nothing on V8 < 12 (Node 20) or when the command line sets the flag.
 */
export function tuneGc(): { applied: boolean; reason: string }

/** Bodies of a known length up to this many bytes (and maxPreallocated) are read in JS, larger ones natively; a body read only as UTF-8 text has its own bound (docs/design.md). */
export const JS_TIER_MAX: number
/** A body of unknown length keeps a first chunk up to this size in JS. */
export const FIRST_CHUNK_MAX: number

/** An Express middleware: (req, res, next). Typed loosely so that it fits Express and ultimate-express. */
export type BodyParserMiddleware = (req: any, res: any, next: (err?: unknown) => void) => void

/** body-parser's common options. */
export interface ParserOptions {
  /** Largest decoded body: bytes, or '100kb'-style (see BodyOptions.limit). Default '100kb'. */
  limit?: number | string
  /** Milliseconds for the whole body to arrive (408 request.timeout after). Default 300000; 0 or Infinity: none. */
  timeout?: number
  /** See LingerOptions: next(err) runs once the rest of a refused body is dropped, or a bound passed. */
  linger?: LingerOptions | false
  /** false: encoded bodies get 415. Default true (gzip, deflate, br, zstd are decoded). */
  inflate?: boolean
  /** Which content-types to parse: a media type ('json', 'text/*'), a list, or a function of req. */
  type?: string | string[] | ((req: any) => boolean)
  /** Called with the raw body before parsing; a throw gives 403 entity.verify.failed. */
  verify?: (req: any, res: any, buf: Buffer, encoding: string | null) => void
  /** See DigestOption. With a list, `req.digests` holds the digests (a `Digests`) when the parser calls next(). */
  digest?: DigestOption
}

export interface JsonOptions extends ParserOptions {
  /** Only objects and arrays at the top level (default true). */
  strict?: boolean
  reviver?: (this: any, key: string, value: any) => any
}

export interface TextOptions extends ParserOptions {
  /** Charset when the content-type names none. Default 'utf-8'. */
  defaultCharset?: string
}

export interface UrlencodedOptions extends ParserOptions {
  /** qs's nested syntax (a[b]=1). Default false. */
  extended?: boolean
  /** More parameters than this: 413 parameters.too.many. Default 1000. */
  parameterLimit?: number
  /** Nesting allowed with extended (deeper: 400 querystring.parse.rangeError). Default 32. */
  depth?: number
  /** 'utf-8' (default) or 'iso-8859-1'. */
  defaultCharset?: 'utf-8' | 'iso-8859-1'
  charsetSentinel?: boolean
  interpretNumericEntities?: boolean
}

// body-parser 2's rule for all four: a request with no body (no content-length, no
// transfer-encoding) or of a type the parser does not take leaves req.body undefined.

/** body-parser's json(): req.body is the parsed JSON ({} for an empty body). */
export function json(options?: JsonOptions): BodyParserMiddleware
/** body-parser's raw(): req.body is a Buffer (empty for an empty body). */
export function raw(options?: ParserOptions): BodyParserMiddleware
/** body-parser's text(): req.body is a string ('' for an empty body). */
export function text(options?: TextOptions): BodyParserMiddleware
/** body-parser's urlencoded(): req.body is the parsed form ({} for an empty body). */
export function urlencoded(options?: UrlencodedOptions): BodyParserMiddleware

/**
 * multipart/form-data limits, with busboy's and multer's names, the same for readMultipart
 * and multipart(). Each is a non-negative integer or Infinity, the most allowed, inclusive
 * (multer 2's meaning): `fileSize: 10` accepts a file of 10 bytes and refuses one of 11
 * with 413 LIMIT_FILE_SIZE (busboy itself trips fileSize, fieldSize and parts on reaching
 * the value: pass value - 1 for its exact behaviour). An unknown name is a TypeError.
 */
export interface MultipartLimits {
  /** Bytes of a part's name, as sent. Default none. */
  fieldNameSize?: number
  /** Bytes of one field's value. Default 1048576 (1 MiB). */
  fieldSize?: number
  /** Field parts. Default none. */
  fields?: number
  /** Bytes of one file. Default none. */
  fileSize?: number
  /** File parts. Default none. */
  files?: number
  /** Parts, fields and files together. Default none. */
  parts?: number
  /** Header lines in one part. Default 2000. */
  headerPairs?: number
  /** Bytes of one part's header block. Default 16384. */
  headerSize?: number
  /** Deepest `a[b][c]` nesting of a field name (400 LIMIT_FIELD_NESTING). Default none. */
  fieldNestingDepth?: number
  /** Largest `[n]` index in a field name (400 LIMIT_FIELD_ARRAY_INDEX). Default none. */
  fieldArrayIndexLimit?: number
}

/** What a file part says about itself (the storage function gets this). */
export interface MultipartFileInfo {
  fieldname: string
  /** The client's file name: after the last / or \ unless preservePath; never used as a path by uws-body. */
  originalname: string
  /** Content-Transfer-Encoding, '7bit' without one (not applied). */
  encoding: string
  /** The part's Content-Type, 'text/plain' without one. */
  mimetype: string
  /**
   * With a `digest` list: the file's digests, made as its bytes were parsed (set at the
   * part's end: before the storage function's Writable ends, and before the file is stored).
   */
  digests?: Digests | null
}

export interface MultipartFile extends MultipartFileInfo {
  /** Bytes received. */
  size: number
}

/** A file kept in memory: a view of one Buffer shared by the request's files. */
export interface MultipartMemoryFile extends MultipartFile {
  buffer: Buffer
}

/** A file written to disk: a new file in `dest`, named by 32 random hex digits. */
export interface MultipartDiskFile extends MultipartFile {
  /** The folder, the name in it, and both joined. */
  destination: string
  filename: string
  path: string
}

export interface MultipartResult<File extends MultipartFile = MultipartMemoryFile> {
  /** Field values by name; a name sent more than once gives an array, in order. */
  fields: Record<string, string | string[]>
  /** File parts, in the order sent. */
  files: File[]
}

/** The options readMultipart and multipart() share, with one meaning. An unknown name is a TypeError. */
export interface MultipartCommonOptions {
  /**
   * Largest body, as sent and, for a compressed form, decoded (bytes or '64mb'). Default
   * 64 MiB for memory storage, none for the others (whose fields are then bounded by
   * 64 MiB together).
   */
  limit?: number | string
  /** Milliseconds for the whole body (408 after). Default 300000 for memory storage, none otherwise. */
  timeout?: number
  /** How plain name and filename parameters are read: any charset TextDecoder knows. Default 'latin1' (busboy's). */
  defParamCharset?: string
  /** How a field's value without a charset of its own is read: any charset iconv-lite knows. Default 'utf8' (busboy's). */
  defCharset?: string
  /** Keep the client's whole file name, / and \ included. Default false. */
  preservePath?: boolean
  /** Bytes one file's stream (or an undecided file's held data) may hold before the client is paused. Default 524288 for readMultipart; multipart(): Node's Readable default, as multer's. */
  highWaterMark?: number
  /** Memory storage: the most allocated for the request's files before their bytes arrive. Default 1 MiB. */
  maxPreallocated?: number
  /** See LingerOptions: how much of a refused form's rest is read and dropped before the error is given. Default as readBody's. */
  linger?: LingerOptions | false
  /**
   * See DigestOption: the form's declared digests (Content-Digest...) are checked over the
   * whole body, and a mismatch removes every file stored. A list also makes each file's
   * digests as its bytes are parsed (decoded, for a compressed form), on the file object
   * as `digests`.
   */
  digest?: DigestOption
}

export interface ReadMultipartOptions extends MultipartCommonOptions {
  /** Where files go: 'memory' (default), { dest } (created if missing), (file) => Writable, or any storage engine. */
  storage?: 'memory' | { dest: string } | ((file: MultipartFileInfo) => import('node:stream').Writable) | StorageEngine
  /** The limits, or a function of `req` (the call's: a uWS HttpRequest, read during the call, or a headers object) giving them per request. */
  limits?: MultipartLimits | ((req: any) => MultipartLimits | undefined)
  /** Called once if the client goes away; `res` must not be used after that. */
  onAborted?: () => void
}

/**
 * Reads a multipart/form-data body of a bare uWS request. Call synchronously in the
 * route handler; it owns res.onData and res.onAborted. Rejects once with a BodyError
 * (415, 400, 408, 413 with multer's LIMIT_* codes, request.aborted) or with the storage's
 * own error (disk, the Writable's), after every file written so far is removed.
 * @throws {TypeError} synchronously for the program's mistakes, as readBody.
 */
export function readMultipart(res: UwsPausableResponseLike, req: UwsRequestLike, options: ReadMultipartOptions & { storage: { dest: string } }): Promise<MultipartResult<MultipartDiskFile>>
export function readMultipart(res: UwsPausableResponseLike, req: UwsRequestLike, options: ReadMultipartOptions & { storage: ((file: MultipartFileInfo) => import('node:stream').Writable) | StorageEngine }): Promise<MultipartResult<MultipartFile & Record<string, unknown>>>
export function readMultipart(res: UwsPausableResponseLike, req: UwsRequestLike, options?: ReadMultipartOptions & { storage?: 'memory' }): Promise<MultipartResult<MultipartMemoryFile>>
export function readMultipart(res: UwsPausableResponseLike, req: UwsRequestLike, options?: ReadMultipartOptions): Promise<MultipartResult<MultipartFile & { buffer?: Buffer, path?: string }>>

/** readMultipart compiled for a route, as bodyReader is readBody: its result is typed by its storage as readMultipart's. */
export function multipartReader(options: ReadMultipartOptions & { storage: { dest: string } }): (res: UwsPausableResponseLike, req: UwsRequestLike) => Promise<MultipartResult<MultipartDiskFile>>
export function multipartReader(options: ReadMultipartOptions & { storage: ((file: MultipartFileInfo) => import('node:stream').Writable) | StorageEngine }): (res: UwsPausableResponseLike, req: UwsRequestLike) => Promise<MultipartResult<MultipartFile & Record<string, unknown>>>
export function multipartReader(options?: ReadMultipartOptions & { storage?: 'memory' }): (res: UwsPausableResponseLike, req: UwsRequestLike) => Promise<MultipartResult<MultipartMemoryFile>>
export function multipartReader(options?: ReadMultipartOptions): (res: UwsPausableResponseLike, req: UwsRequestLike) => Promise<MultipartResult<MultipartFile & { buffer?: Buffer, path?: string }>>

/** A file as multer describes it: req.file, the items of req.files, and fileFilter's argument. */
export interface MulterFile {
  /** The part's `name` (the form field). */
  fieldname: string
  /** The client's file name (its last path segment unless preservePath): untrusted. */
  originalname: string
  /** The part's Content-Transfer-Encoding ('7bit' when none). */
  encoding: string
  /** The part's Content-Type essence ('text/plain' when none). */
  mimetype: string
  /** Bytes stored (set once the file is stored). */
  size: number
  /** Disk storage: the folder, the name in it and the whole path. */
  destination?: string
  filename?: string
  path?: string
  /**
   * Memory storage: the bytes (a view of the request's one shared block, see
   * docs/multipart.md). Absent from the files in req.files after a failure: the block is
   * freed then (multer keeps each file's buffer).
   */
  buffer?: Buffer
  /** While a storage engine's _handleFile runs: the file's bytes, as they arrive. */
  stream?: import('node:stream').Readable
  /** With a `digest` list: the file's digests (set when its stream ends, before its storage engine calls back). */
  digests?: Digests | null
}


/** Where files go: multer's storage engine contract (multer's own engines fit). */
export interface StorageEngine {
  _handleFile(req: any, file: MulterFile, callback: (error?: any, info?: Partial<MulterFile>) => void): void
  _removeFile(req: any, file: MulterFile, callback: (error: Error | null) => void): void
}

export interface DiskStorageOptions {
  /** A folder (created when the storage is), or a function calling back with one. Default os.tmpdir(). */
  destination?: string | ((req: any, file: MulterFile, callback: (error: Error | null, destination: string) => void) => void)
  /** Calls back with the file's name. Default 16 random bytes in hex, no extension. */
  filename?: (req: any, file: MulterFile, callback: (error: Error | null, filename: string) => void) => void
  /** fsync each file before it counts as stored. Default false. */
  flush?: boolean
}

export type FileFilterCallback = (error: Error | null, acceptFile?: boolean) => void

export interface MultipartOptions extends MultipartCommonOptions {
  /** Disk storage in this folder (created with the middleware). */
  dest?: string
  /** A storage engine (default: memory, unless dest). */
  storage?: StorageEngine
  limits?: MultipartLimits | ((req: any) => MultipartLimits | undefined)
  /** Accept (cb(null, true)), skip (cb(null, false)) or fail (cb(err)) each file; may answer later. */
  fileFilter?: (req: any, file: MulterFile, callback: FileFilterCallback) => void
  /** multer's name for highWaterMark. */
  fileHwm?: number
  /**
   * Feeds the body into `sink` instead of reading the request (multer's default is
   * `req.pipe(sink)`): `(req, sink) => sink.end(req.rawBody)` for a request read already
   * (Cloud Functions). `sink` is a Writable: write and end it, or pipe into it.
   */
  streamHandler?: (req: any, sink: import('node:stream').Writable) => void
}

export interface Multipart {
  /** One file of this field in req.file. */
  single(fieldName: string): BodyParserMiddleware
  /** Files of this field in req.files (more than maxCount: LIMIT_UNEXPECTED_FILE). */
  array(fieldName: string, maxCount?: number): BodyParserMiddleware
  /** req.files keyed by field name. */
  fields(fields: ReadonlyArray<{ name: string, maxCount?: number }>): BodyParserMiddleware
  /** Text fields only: any file is LIMIT_UNEXPECTED_FILE. */
  none(): BodyParserMiddleware
  /** Every file, in req.files. */
  any(): BodyParserMiddleware
}

export type MulterErrorCode =
  | MultipartLimitCode
  | 'LIMIT_UNEXPECTED_FILE'
  | 'MISSING_FIELD_NAME'
  | 'LIMIT_FIELD_NESTING'
  | 'LIMIT_FIELD_ARRAY_INDEX'
  | 'INVALID_FIELD_NAME'
  | 'STREAM_DESTROYED'

/**
 * multer's error (code, field, filename, message) as a BodyError, with the HTTP status and
 * type multer does not set: 413 for the limits, 400 for a form's names and unexpected
 * files, 500 for STREAM_DESTROYED. Both multipart APIs give it for multer's codes.
 */
export class MulterError extends BodyError {
  constructor(code: MulterErrorCode, field?: string, filename?: string)
  readonly name: 'MulterError'
  code: MulterErrorCode
  /** Errors removing stored files after a failure. */
  storageErrors?: Error[]
}

/** multer's API: multipart(options).single(name) and so on; multipart.diskStorage(...). */
export const multipart: {
  (options?: MultipartOptions): Multipart
  diskStorage(options?: DiskStorageOptions): StorageEngine
  memoryStorage(): StorageEngine
  MulterError: typeof MulterError
}

/**
 * What the server still reads of a body refused before its end (a limit, a bad
 * encoding, a timeout, a stream destroyed), so that the answer reaches a client still
 * sending it: the rest is dropped, never kept, until it ends, for at most `bytes` more
 * bytes and `timeout` ms and while no pause lasts `idle` ms, and only then does the error
 * reach the application (the promise rejects, the stream errors, next(err) runs). The answer, however it is
 * written, goes out as any answer when the body has ended (keep-alive intact); past a
 * bound, as one closing answer (`Connection: close`), reading stopped, and the
 * connection closed 2 s later. `false`: nothing more is read (past the bound at once).
 */
export interface LingerOptions {
  /** Bytes, or a string like '64mb'. Default 64 MiB. */
  bytes?: number | string
  /** Milliseconds from the refusal, 0 to 2147483647 (0: none). Default 10000. */
  timeout?: number
  /**
   * Milliseconds the client may pause, after the refusal or its last byte, before its
   * body is past the bound (0 to 2147483647; 0: at once). Default 1000.
   */
  idle?: number
  /**
   * Deliver the error at the refusal instead of after the rest. An answer written on the
   * uWS response meanwhile is held and written once the rest is dropped. Default false.
   */
  errorAtOnce?: boolean
}

/** The parts of uWS's HttpResponse that answerError uses. */
export interface UwsAnswerableResponse extends UwsPausableResponseLike {
  writeStatus(status: string | ArrayBufferView | ArrayBuffer): unknown
  writeHeader(key: string, value: string): unknown
  end(body?: string | ArrayBufferView | ArrayBuffer, closeConnection?: boolean): unknown
  cork(cb: () => void): unknown
  close(): unknown
  aborted?: boolean
}

export interface AnswerErrorOptions {
  /** The answer's body instead of the JSON { status, code, message }. */
  body?: string | Buffer
  /** Its content-type; default application/json (text/plain for a string `body`). */
  contentType?: string
  /**
   * More headers. A name is an RFC 9110 token other than content-length, connection and
   * transfer-encoding, a value visible ASCII, space and tab; a header that is not (a
   * value from the request with a control or non-ASCII character, say) is left out of the
   * answer, with a process warning once per name (code UWS_BODY_HEADER_LEFT_OUT): it
   * could not be written as the same bytes on every answer path.
   */
  headers?: Record<string, string | number>
  /**
   * Only for a body uws-body does not read (BodyAccumulator): whether its last chunk was
   * seen (default true). When false, answerError reads and drops the rest itself (its
   * onData replaces yours) and answers once it is done, as for uws-body's readers.
   */
  bodyEnded?: boolean
  /** With bodyEnded: false, the bounds for the rest (see LingerOptions). */
  linger?: LingerOptions | false
}

/**
 * Answers an error on a bare uWS response so that it reaches the client, also one still
 * sending a body that was refused: status from error.status (400-599, else 500), a short
 * JSON body { status, code, message } (code and message when the error is meant for the
 * client: BodyError, MulterError, `expose`). On a body still arriving it is held until
 * the rest is dropped, as any answer is (see LingerOptions). Does nothing once
 * `res.aborted` is set or `res` was answered.
 * @throws {TypeError} for a `res` that is not a uWS response or an option of the wrong type.
 */
export function answerError(res: UwsAnswerableResponse, error: unknown, options?: AnswerErrorOptions): void
