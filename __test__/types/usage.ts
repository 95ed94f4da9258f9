// Type-checked by __test__/types.test.js (tsc --noEmit --strict), never run: every export
// used as README shows it, and, on lines marked @ts-expect-error, misuse the types must
// reject (tsc fails if such a line compiles).
import uWS from 'uWebSockets.js'
import express from 'express'
import ultimateExpress from 'ultimate-express'
import {
  BodyAccumulator,
  BodyError,
  bodyStream,
  bodyTimeout,
  readBody,
  readMultipart,
  readText,
  bodyReader,
  textReader,
  streamReader,
  multipartReader,
  setMemoryBudget,
  setPoolLimit,
  stats,
  tuneGc,
  JS_TIER_MAX,
  FIRST_CHUNK_MAX,
  json,
  raw,
  text,
  urlencoded,
  multipart,
  MulterError
} from 'uws-body'
import type { Digests, DigestOption, BodyErrorType, BodyErrorCode, Stats, BodyParserMiddleware, MultipartFileInfo, MultipartMemoryFile, MultipartDiskFile, MultipartFile, MultipartResult, ReadMultipartOptions, MultipartReason, MulterFile, StorageEngine } from 'uws-body'
import { PassThrough } from 'node:stream'

{
  // The compiled forms: options checked once per route, then one call per request.
  const readUpload = bodyReader({ limit: '10mb' })
  const readJson = textReader({ limit: '1mb', encoding: 'utf8' })
  const streamFile = streamReader({ highWaterMark: 64 * 1024 })
  const readForm = multipartReader({ storage: { dest: '/tmp/uploads' }, limits: { files: 2 } })
  const readMemoryForm = multipartReader({ limits: { fileSize: 1024 } })
  uWS.App()
    .post('/upload', (res, req) => { readUpload(res, req).then((b: Buffer) => res.end(String(b.length)), () => {}) })
    .post('/json', (res, req) => { readJson(res, req).then((t: string) => res.end(t), () => {}) })
    .post('/file', (res, req) => { streamFile(res, req).on('data', (d: Buffer) => d.length) })
    .post('/form', (res, req) => { readForm(res, req).then(({ files }) => files.map((f) => f.path), () => {}) })
    .post('/small-form', (res, req) => { readMemoryForm(res, req).then(({ files }) => files.map((f) => f.buffer.length), () => {}) })
  // @ts-expect-error a compiled reader takes no options per call
  uWS.App().post('/x', (res, req) => { readUpload(res, req, { limit: 1 }) })
}
uWS.App().post('/digest', (res, req) => {
  let sha256 = ''
  readBody(res, req, { digest: ['sha256', 'crc32c'], onDigest: (d) => { sha256 = d.sha256?.toString('hex') ?? '' } }).then(
    (body: Buffer) => res.cork(() => res.end(`${body.length} ${sha256}`)),
    () => {}
  )
})
uWS.App().post('/digest-stream', (res, req) => {
  const stream = bodyStream(res, req, { digest: ['md5'] })
  stream.on('digest', (d: Digests) => d.md5)
  stream.on('end', () => { const d: Digests | null = stream.digests; res.end(d?.md5?.toString('base64') ?? '') })
})
{
  const acc = new BodyAccumulator({ contentDigest: 'sha-256=:AAAA:', reprDigest: null, contentMd5: undefined, digest: false })
  const d: Digests | null = acc.digests
  const option: DigestOption = ['sha512']
  // @ts-expect-error 'sha1' is not made
  const wrong: DigestOption = ['sha1']
  void d; void option; void wrong
  ultimateExpress().post('/d', json({ digest: ['sha256'] }), (req: any, res: any) => res.json(req.digests))
  uWS.App().post('/form-digest', (res, req) => {
    readMultipart(res, req, { digest: ['sha256'] }).then((r) => res.end(r.files.map((f) => f.digests?.sha256?.toString('hex')).join()))
  })
  // The storage function's file has its digests by the time its stream ends.
  readMultipart(uWS.App() as any, {} as any, { digest: ['crc32c'], storage: (file: MultipartFileInfo) => new PassThrough({ final: (cb) => { console.log(file.digests?.crc32c?.toString('base64')); cb() } }) })
  // A form's declared digests are checked (true, the default) or not (false).
  readMultipart(uWS.App() as any, {} as any, { digest: false })
  // @ts-expect-error the digest option is true, false or a list of names
  readMultipart(uWS.App() as any, {} as any, { digest: 'sha256' })
}

uWS.App().post('/upload', (res, req) => {
  readBody(res, req, { limit: '10mb', maxPreallocated: 1 << 20, inflate: false, onAborted: () => {} }).then(
    (body: Buffer) => {
      if (res.aborted) return
      res.cork(() => res.end(`got ${body.length} bytes`))
    },
    (err: unknown) => {
      if (res.aborted) return
      if (err instanceof BodyError) {
        const status: 400 | 408 | 413 | 415 | 500 | 503 = err.status
        const type: BodyErrorType = err.type
        const code: BodyErrorCode = err.code
        res.cork(() => res.writeStatus(`${status} ${type} ${code}`).end())
      }
    }
  )
})

uWS.App().post('/text', async (res, req) => {
  const str: string = await readText(res, req, { encoding: 'latin1', limit: 1000 })
  const fromHeaders: Buffer = await readBody(res, { 'content-length': '3', 'content-encoding': 'gzip' })
  res.end(str + fromHeaders.length)
})

const acc = new BodyAccumulator({ contentLength: '12', contentEncoding: 'gzip, br', limit: '1mb', maxPreallocated: 0, inflate: true })
const accepted: boolean = acc.push(new ArrayBuffer(4)) && acc.push(new Uint8Array(4)) && acc.push(Buffer.alloc(4))
if (acc.error) {
  const reason: 'corrupt' | 'truncated' | 'trailing' | MultipartReason | undefined = acc.error.reason
  console.log(acc.error.status, acc.error.limit, acc.error.encoding, reason)
}
const whole: Buffer = acc.finish()
const decoded: string = new BodyAccumulator({ contentLength: null }).finishString('utf16le')
new BodyAccumulator().abort()
const sizes: number[] = [acc.received, acc.length, acc.capacity, JS_TIER_MAX, FIRST_CHUNK_MAX]
const s: Stats = stats()
setPoolLimit(s.bytesPooled + s.poolLimit + s.bytesInUse + s.blocksInUse + s.bytesReported)
setMemoryBudget(s.memoryBudget === Infinity ? 256 * 1024 * 1024 : s.budgetReserved + s.budgetRefusals)
setMemoryBudget(Infinity)
// @ts-expect-error a budget is a number of bytes
setMemoryBudget('256mb')
const retry: string | undefined = new BodyAccumulator().error?.headers?.['Retry-After']
console.log(retry)
const tuned: { applied: boolean, reason: string } = tuneGc()
console.log(tuned.applied, tuned.reason)
console.log(accepted, whole, decoded, sizes)

// The parsers fit both frameworks' use(), and per route.
const parsers: BodyParserMiddleware[] = [
  json({ limit: '1mb', strict: false, reviver: (key, value) => value, inflate: false, type: ['application/json', 'application/*+json'] }),
  raw({ type: '*/*', limit: 64 << 20, verify: (req, res, buf, encoding) => { if (buf.length === 0 && encoding === null) throw new Error('empty') } }),
  text({ defaultCharset: 'iso-8859-1', type: (req) => req.headers['x-text'] === '1' }),
  urlencoded({ extended: true, parameterLimit: 10, depth: 2, defaultCharset: 'utf-8', charsetSentinel: true, interpretNumericEntities: true })
]
const ue = ultimateExpress()
ue.use(json())
ue.post('/upload', raw({ type: '*/*', limit: '64mb' }), (req, res) => res.send(`${req.body.length} bytes`))
const ex = express()
ex.use(...parsers)
ex.post('/form', urlencoded(), (req, res) => { res.json(req.body) })

// Misuse the types reject.
// @ts-expect-error BodyError has no public constructor (it needs fields only uws-body fills)
new BodyError('x')
// @ts-expect-error readBody needs the response
readBody()
// @ts-expect-error the response must have onData and onAborted
readBody({}, {})
// @ts-expect-error an unknown encoding (readText throws TypeError at once)
readText({ onData () {}, onAborted () {} }, {}, { encoding: 'utf-9' })
// @ts-expect-error limit is a number or a string
json({ limit: {} })
// @ts-expect-error urlencoded's defaultCharset is utf-8 or iso-8859-1
urlencoded({ defaultCharset: 'koi8-r' })
// @ts-expect-error error is readonly
acc.error = null
// @ts-expect-error error may be null: narrow it first
console.log(acc.error.status)
// @ts-expect-error contentLength is a string, number or null
new BodyAccumulator({ contentLength: true })
// @ts-expect-error push takes binary data
acc.push('text')
// @ts-expect-error a status BodyError never has
const wrong: 500 = new BodyAccumulator().error!.status
// @ts-expect-error the onAborted callback takes no arguments
readBody({ onData () {}, onAborted () {} }, {}, { onAborted: (reason: string) => {} })
console.log(wrong)

uWS.App().post('/stream', (res, req) => {
  const stream = bodyStream(res, req, { limit: '1gb', inflate: true, timeout: 60_000, highWaterMark: 1 << 20, onAborted: () => {} })
  stream.on('error', (err: unknown) => {
    if (err instanceof BodyError && !res.aborted) {
      const status: 400 | 408 | 413 | 415 | 500 | 503 = err.status
      const timeout: number | undefined = err.timeout
      res.cork(() => res.writeStatus(`${status} ${timeout}`).end(err.type, true))
    }
  })
  ;(async () => {
    for await (const chunk of stream) console.log((chunk as Buffer).length)
  })()
})
const timed = new BodyAccumulator({ limit: '1mb' })
const cancel: () => void = bodyTimeout(timed, 30_000, (err: BodyError) => console.log(err.code === 'ERR_BODY_TIMEOUT'))
cancel()
readBody(uWS as any, {}, { timeout: 1000 })
json({ timeout: 5000 })
// @ts-expect-error bodyStream needs a response that can pause and resume
bodyStream({ onData () {}, onAborted () {} }, {})
// @ts-expect-error timeout is milliseconds, not a string
bodyStream({ onData () {}, onAborted () {}, pause () {}, resume () {} }, {}, { timeout: '5s' })
// @ts-expect-error maxPreallocated does not apply to a stream
bodyStream({ onData () {}, onAborted () {}, pause () {}, resume () {} }, {}, { maxPreallocated: 1 })
// @ts-expect-error bodyTimeout needs a callback
bodyTimeout(timed, 10)

// readMultipart: the file type follows the storage.
uWS.App().post('/form', async (res, req) => {
  const memory: MultipartResult<MultipartMemoryFile> = await readMultipart(res, req, { limits: { fileSize: 1 << 20, files: 3, fieldNameSize: 100, fieldSize: 1000, fields: 10, parts: 13, headerPairs: 20, headerSize: 4096 }, limit: '8mb', timeout: 30_000, onAborted: () => {} })
  const first: Buffer = memory.files[0].buffer
  const field: string | string[] | undefined = memory.fields.title
  const disk = await readMultipart(res, req, { storage: { dest: '/tmp/uploads' }, defParamCharset: 'utf8', preservePath: false, highWaterMark: 1 << 16, linger: { bytes: '8mb', timeout: 5000 } })
  const where: string = disk.files[0].path
  const streamed = await readMultipart(res, req, { storage: (file: MultipartFileInfo) => { console.log(file.originalname, file.mimetype, file.encoding, file.fieldname); return new PassThrough() } })
  const size: number = streamed.files[0].size
  const options: ReadMultipartOptions = { storage: 'memory' }
  const any: MultipartResult<MultipartFile> = await readMultipart(res, req, options)
  const perRequest = await readMultipart(res, req, { limits: (r) => (r.getHeader('x-big') ? { fileSize: 1 << 30 } : undefined), defCharset: 'windows-1251' })
  console.log(first, field, where, size, any, perRequest)
  try {
    await readMultipart(res, req)
  } catch (err) {
    if (err instanceof BodyError && err.code === 'LIMIT_FILE_SIZE') console.log(err.field, err.limit, err.type === 'multipart.limit')
  }
})
// @ts-expect-error readMultipart needs a response that can pause and resume
readMultipart({ onData () {}, onAborted () {} }, {})
// @ts-expect-error limits have busboy's names
readMultipart({ onData () {}, onAborted () {}, pause () {}, resume () {} }, {}, { limits: { maxFileSize: 1 } })
// @ts-expect-error linger is bounds or false
readMultipart({ onData () {}, onAborted () {}, pause () {}, resume () {} }, {}, { linger: true })
// @ts-expect-error a memory file has no path
readMultipart({ onData () {}, onAborted () {}, pause () {}, resume () {} }, {}).then((r) => r.files[0].path)
// @ts-expect-error a disk file has no buffer
readMultipart({ onData () {}, onAborted () {}, pause () {}, resume () {} }, {}, { storage: { dest: '/tmp' } }).then((r) => r.files[0].buffer)
// multipart(): multer's surface, with multer's storages and any engine.
const upload = multipart({
  limits: { fileSize: 1 << 20, files: 3, fieldNameSize: 100 },
  fileFilter: (req, file: MulterFile, cb) => cb(null, file.mimetype.startsWith('image/')),
  preservePath: false,
  defParamCharset: 'utf8',
  defCharset: 'latin1',
  linger: false
})
const onDisk = multipart({ storage: multipart.diskStorage({ destination: '/tmp/up', filename: (req, file, cb) => cb(null, file.originalname), flush: true }) })
const fromRawBody = multipart({ streamHandler: (req, sink) => { sink.end(req.rawBody) } })
// @ts-expect-error streamHandler is a function
multipart({ streamHandler: 'pipe' })
const engine: StorageEngine = {
  _handleFile (req, file, cb) { file.stream?.resume(); file.stream?.on('end', () => cb(null, { size: 0 })) },
  _removeFile (req, file, cb) { cb(null) }
}
const uploads: BodyParserMiddleware[] = [
  upload.single('avatar'), upload.array('photos', 4), upload.fields([{ name: 'a', maxCount: 1 }, { name: 'b' }]), upload.none(), upload.any(),
  multipart({ dest: '/tmp/up' }).any(), onDisk.any(), multipart({ storage: engine, limits: (req) => ({ parts: 10 }) }).any(),
  multipart({ storage: multipart.memoryStorage() }).single('f'), fromRawBody.any()
]
ue.post('/avatar', upload.single('avatar'), (req: any, res) => { res.send(`${(req.file as MulterFile).size}`) })
ue.use((err: unknown, req: any, res: any, next: () => void) => {
  if (err instanceof MulterError && err.code === 'LIMIT_FILE_SIZE') res.status(err.status).send(err.field)
  else next()
})
console.log(uploads, new multipart.MulterError('LIMIT_PART_COUNT').message)
// @ts-expect-error MulterError codes are multer's
new MulterError('LIMIT_EVERYTHING')
// @ts-expect-error array()'s maxCount is a number
upload.array('photos', '4')

// Early answers (lib/refusal/refusal.js): answerError and the `linger` option.
import { answerError } from 'uws-body'
import type { LingerOptions, AnswerErrorOptions } from 'uws-body'
uWS.App().post('/linger', (res, req) => {
  const bounds: LingerOptions = { bytes: '16mb', timeout: 5000 }
  readBody(res, req, { limit: '1mb', linger: bounds }).then(
    (body) => { if (!res.aborted) res.cork(() => res.end(`${body.length}`)) },
    (err) => answerError(res, err)
  )
  bodyStream(res, req, { linger: false }).on('error', (err) => answerError(res, err, { body: 'no', contentType: 'text/plain', headers: { 'retry-after': 5 } }))
  const options: AnswerErrorOptions = { bodyEnded: false, linger: { bytes: 0 } }
  answerError(res, new Error('x'), options)
})
json({ linger: { timeout: 2000 } })
// @ts-expect-error answerError needs the response
answerError()
// @ts-expect-error linger is false or { bytes, timeout }
readBody({ onData () {}, onAborted () {} }, {}, { linger: true })
// @ts-expect-error linger.timeout is a number of ms
raw({ linger: { timeout: '10s' } })
