'use strict'
// multer 2's own behaviours, as its test suite (tag v2.1.1) checks them, written anew
// for multipart(): driven as multer's suite drives multer, through a PassThrough
// standing in for the request (no server, no `req.complete`), so the stream path of
// multipart() is held to them too. What docs/multipart.md lists as deliberate differences
// (a malformed body's status 400 where multer's plain Errors make 500) is checked as that
// difference.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PassThrough } = require('node:stream')
const multer = require('multer')
const { multipart, readMultipart, MulterError, BodyError } = require('..')
const { formBody } = require('./helpers/multer-form')
const { bytesInUseAfterGc } = require('./helpers/memory')

const B = 'caseboundary'
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-multer-cases-'))
test.after(() => fs.rmSync(dir, { recursive: true, force: true }))

const file = (name, filename, data = Buffer.from(`data of ${filename}`), type) => ({ name, filename, data, type })
const field = (name, value) => ({ name, data: Buffer.from(value) })

/** A request stream carrying `body` (a Buffer, or parts), as multer's suite makes one. */
function requestOf (body) {
  const bytes = Buffer.isBuffer(body) ? body : formBody(B, body)
  const req = new PassThrough()
  req.headers = { 'content-type': `multipart/form-data; boundary=${B}`, 'content-length': String(bytes.length) }
  return { req, bytes }
}

/** Runs the middleware over `body`; resolves with { err, req } once it called next. */
function submit (middleware, body) {
  const { req, bytes } = requestOf(body)
  return new Promise((resolve) => {
    middleware(req, null, (err) => resolve({ err, req }))
    req.end(bytes)
  })
}

test('req.body, req.file and req.files as multer fills them, files in the order they came', async () => {
  const parts = [field('name', 'multer'), file('tiny0', 'tiny0.dat'), field('a[b]', '1'), file('small0', 'small0.dat'), file('small0', 'small1.dat')]
  const single = await submit(multipart().single('tiny0'), parts.filter((p) => p.name !== 'small0'))
  assert.equal(single.err, undefined)
  assert.deepEqual({ ...single.req.body, a: { ...single.req.body.a } }, { name: 'multer', a: { b: '1' } })
  assert.equal(single.req.file.originalname, 'tiny0.dat')
  assert.equal(single.req.file.buffer.toString(), 'data of tiny0.dat')
  const any = await submit(multipart().any(), parts)
  assert.deepEqual(any.req.files.map((f) => [f.fieldname, f.originalname, f.size]), [['tiny0', 'tiny0.dat', 17], ['small0', 'small0.dat', 18], ['small0', 'small1.dat', 18]])
  const fields = await submit(multipart().fields([{ name: 'tiny0', maxCount: 1 }, { name: 'small0', maxCount: 2 }]), parts)
  assert.deepEqual(Object.keys(fields.req.files), ['tiny0', 'small0'])
  assert.equal(fields.req.files.small0[1].originalname, 'small1.dat')
  // The same middleware serves request after request.
  const reused = multipart().array('small0', 2)
  for (let i = 0; i < 5; i++) {
    const r = await submit(reused, [file('small0', `f${i}`)])
    assert.equal(r.req.files[0].originalname, `f${i}`)
  }
  // A part with an empty file name and no type is a field, as busboy reads it; an empty
  // file input (octet-stream, no name) is no file.
  const empty = await submit(multipart().any(), [field('e', ''), file('f', '', Buffer.alloc(0)), file('g', '', Buffer.alloc(0), 'application/octet-stream')])
  assert.deepEqual([{ ...empty.req.body }, empty.req.files], [{ e: '', f: '' }, []])
})

test('unexpected files, limits and missing names are MulterErrors with multer\'s code, field and message', async () => {
  const cases = [
    [multipart().single('tiny0'), [file('tiny0', 'a'), file('other', 'b')], 'LIMIT_UNEXPECTED_FILE', 'other'],
    [multipart().array('f', 1), [file('f', 'a'), file('f', 'b')], 'LIMIT_UNEXPECTED_FILE', 'f'],
    [multipart().none(), [file('f', 'a')], 'LIMIT_UNEXPECTED_FILE', 'f'],
    [multipart({ limits: { parts: 1 } }).any(), [field('a', '1'), field('b', '2')], 'LIMIT_PART_COUNT'],
    [multipart({ limits: { fileSize: 3 } }).any(), [file('f', 'a', Buffer.from('four'))], 'LIMIT_FILE_SIZE', 'f'],
    [multipart({ limits: { files: 1 } }).any(), [file('f', 'a'), file('g', 'b')], 'LIMIT_FILE_COUNT'],
    [multipart({ limits: { fieldNameSize: 3 } }).any(), [file('long', 'a')], 'LIMIT_FIELD_KEY'],
    [multipart({ limits: { fieldNameSize: 3 } }).any(), [field('long', 'v')], 'LIMIT_FIELD_KEY'],
    [multipart({ limits: { fieldSize: 2 } }).any(), [field('a', 'abc')], 'LIMIT_FIELD_VALUE', 'a'],
    [multipart({ limits: { fields: 1 } }).any(), [field('a', '1'), field('b', '2')], 'LIMIT_FIELD_COUNT'],
    [multipart().any(), [{ data: Buffer.from('nameless') }], 'MISSING_FIELD_NAME'],
    [multipart().any(), [{ filename: 'x', data: Buffer.from('nameless file') }], 'MISSING_FIELD_NAME']
  ]
  for (const [middleware, parts, code, fieldName] of cases) {
    const { err } = await submit(middleware, parts)
    assert.ok(err instanceof MulterError && err instanceof Error && err instanceof BodyError, code)
    assert.equal(err.name, 'MulterError')
    assert.equal(err.code, code)
    assert.equal(err.message, new multer.MulterError(code).message)
    assert.equal(err.field, fieldName, code)
  }
})

test('a storage engine\'s removal errors are storageErrors, with the file and its field', async () => {
  // Methods replaced on a memoryStorage() instance are the ones called.
  const storage = multipart.memoryStorage()
  storage._removeFile = (req, file, cb) => cb(Object.assign(new Error('Test error'), { code: 'TEST' }))
  const { err, req } = await submit(multipart({ storage }).single('tiny0'), [file('tiny0', 'tiny0.dat'), file('small0', 'small0.dat')])
  assert.equal(err.code, 'LIMIT_UNEXPECTED_FILE')
  assert.equal(err.field, 'small0')
  assert.equal(err.storageErrors.length, 1)
  assert.equal(err.storageErrors[0].code, 'TEST')
  assert.equal(err.storageErrors[0].field, 'tiny0')
  assert.equal(err.storageErrors[0].file, req.file)
})

test('after LIMIT_FILE_COUNT the first file is whole in req.files, as multer leaves it', async () => {
  const { err, req } = await submit(multipart({ limits: { files: 1 } }).array('f'), [file('f', 'one'), file('f', 'two')])
  assert.equal(err.code, 'LIMIT_FILE_COUNT')
  assert.equal(req.files.length, 1)
  assert.equal(req.files[0].originalname, 'one')
  assert.equal(req.files[0].size, 'data of one'.length)
  assert.equal(req.files[0].buffer, undefined, 'its bytes went with the request')
})

test('a file the failure cut off is in req.files as multer leaves it: its { fieldname } placeholder, none past fileSize', async () => {
  // busboy's cases "Stopped mid-file #1" and "#2" (the form ends after a file's header
  // block, or in its data), and a file over fileSize with a part after it. multer calls
  // next(err) before its storage calls back for a file whose stream errors (its memory
  // storage never does), so the placeholder is there; one over fileSize it drops.
  const head = `--${B}\r\nContent-Disposition: form-data; name="f"; filename="1k_a.dat"\r\nContent-Type: application/octet-stream\r\n\r\n`
  const bodies = [
    ['ends after the header block', Buffer.from(head), {}],
    ['ends in the data', Buffer.from(head + 'a'), {}],
    ['over fileSize', formBody(B, [file('f', 'big.dat', Buffer.from('abcd')), file('g', 'next.dat')]), { fileSize: 3 }]
  ]
  // A file's names and sizes, and which properties it has (disk names are random).
  const shape = (f) => f && { ...f, path: undefined, filename: undefined, destination: undefined, keys: Object.keys(f).sort().join() }
  const filesOf = (req) => Array.isArray(req.files)
    ? req.files.map(shape)
    : req.files && Object.fromEntries(Object.entries(req.files).map(([k, v]) => [k, v.map(shape)]))
  for (const disk of [false, true]) {
    for (const strategy of ['any', 'fields', 'single']) {
      for (const [what, body, limits] of bodies) {
        const results = []
        for (const [name, make] of [['multipart()', multipart], ['multer', multer]]) {
          const dest = disk ? path.join(dir, `cut-${name}`) : undefined
          const m = make({ limits, dest })
          const middleware = strategy === 'any' ? m.any() : strategy === 'fields' ? m.fields([{ name: 'f' }, { name: 'g' }]) : m.single('f')
          const { err, req } = await submit(middleware, body)
          assert.ok(err, `${name} ${what}: an error`)
          results.push({ files: filesOf(req), file: shape(req.file) })
          if (disk) assert.deepEqual(fs.readdirSync(dest), [], `${name} ${what}: nothing left on disk`)
        }
        assert.deepEqual(results[0], results[1], `${disk ? 'disk' : 'memory'} storage, ${strategy}(), ${what}`)
      }
    }
  }
  // A file a later fileFilter accepted, then cut off: the same.
  const fileFilter = (req, f, cb) => setImmediate(() => cb(null, true))
  const results = []
  for (const make of [multipart, multer]) {
    const req = new PassThrough()
    req.headers = { 'content-type': `multipart/form-data; boundary=${B}`, 'transfer-encoding': 'chunked' }
    const settled = new Promise((resolve) => make({ fileFilter }).any()(req, null, (err) => resolve(err)))
    req.write(head + 'a')
    await new Promise((resolve) => setTimeout(resolve, 20))
    req.end('b')
    assert.ok(await settled)
    results.push(filesOf(req))
  }
  assert.deepEqual(results[0], results[1], 'accepted by a later fileFilter')
})

test('an exception thrown by next() surfaces to whoever fed the request; it is not the request\'s error', async () => {
  const { req, bytes } = requestOf([field('a', '1')])
  let calls = 0
  multipart().none()(req, null, () => {
    calls++
    throw new Error('thrown by next')
  })
  // The events the stream would emit, emitted here so the throw can be caught (the form
  // is complete at its final delimiter, in 'data').
  assert.throws(() => { req.emit('data', bytes); req.emit('end') }, /thrown by next/)
  assert.equal(calls, 1)
})

test('names: latin1 by default, defParamCharset when given, filename* always UTF-8', async () => {
  const utf8 = (s) => Buffer.from(s, 'utf8').toString('latin1')
  const raw = (disposition, body = 'x') => Buffer.from(`--${B}\r\nContent-Disposition: form-data; ${disposition}\r\n\r\n${body}\r\n--${B}--\r\n`, 'latin1')
  const name = (r) => r.req.file.originalname
  assert.equal(name(await submit(multipart().single('f'), raw(`name="f"; filename="${utf8('téléchargé.txt')}"`))), utf8('téléchargé.txt'))
  assert.equal(name(await submit(multipart({ defParamCharset: 'utf8' }).single('f'), raw(`name="f"; filename="${utf8('téléchargé.txt')}"`))), 'téléchargé.txt')
  assert.equal(name(await submit(multipart({ defParamCharset: 'windows-1251' }).single('f'), raw(`name="f"; filename="${Buffer.from([0xcf, 0xf0, 0xe8]).toString('latin1')}.txt"`))), 'При.txt')
  assert.equal(name(await submit(multipart({ defParamCharset: 'latin1' }).single('f'), raw('name="f"; filename="x"; filename*=UTF-8\'\'%E2%82%AC.txt'))), '€.txt')
  const two = [`name="f"; filename="${utf8('ü.txt')}"`, `name="f"; filename="${utf8('名.png')}"`].map((d) => `--${B}\r\nContent-Disposition: form-data; ${d}\r\n\r\nx\r\n`).join('') + `--${B}--\r\n`
  const array = await submit(multipart({ defParamCharset: 'utf8' }).array('f'), Buffer.from(two, 'latin1'))
  assert.deepEqual(array.req.files.map((f) => f.originalname), ['ü.txt', '名.png'])
  assert.throws(() => multipart({ defParamCharset: 'nope' }), /unknown charset "nope"/)
})

test('disk storage: dest is made, files renamed by the filename function, removed on error; a missing destination is the error', async () => {
  const dest = path.join(dir, 'made', 'here')
  const r = await submit(multipart({ dest }).single('f'), [file('f', 'a.txt')])
  assert.equal(r.err, undefined)
  assert.equal(path.dirname(r.req.file.path), dest)
  assert.match(r.req.file.filename, /^[0-9a-f]{32}$/)
  assert.equal(fs.readFileSync(r.req.file.path, 'utf8'), 'data of a.txt')
  const renamed = await submit(multipart({ storage: multipart.diskStorage({ destination: dest, filename: (req, f, cb) => cb(null, `renamed-${f.originalname}`) }) }).single('f'), [file('f', 'b.txt')])
  assert.equal(path.basename(renamed.req.file.path), 'renamed-b.txt')
  const other = path.join(dir, 'other')
  fs.mkdirSync(other)
  const moved = await submit(multipart({ storage: multipart.diskStorage({ destination: (req, f, cb) => cb(null, other) }) }).single('f'), [file('f', 'c.txt')])
  assert.equal(moved.req.file.destination, other)
  const failed = await submit(multipart({ dest: path.join(dir, 'rm'), limits: { fileSize: 50 } }).any(), [file('f', 'ok.txt'), file('g', 'big.txt', Buffer.alloc(100))])
  assert.equal(failed.err.code, 'LIMIT_FILE_SIZE')
  assert.deepEqual(fs.readdirSync(path.join(dir, 'rm')), [], 'what was stored before the error is removed')
  const missing = await submit(multipart({ storage: multipart.diskStorage({ destination: (req, f, cb) => cb(null, path.join(dir, 'missing')) }) }).single('f'), [file('f', 'd.txt')])
  assert.equal(missing.err.code, 'ENOENT')
})

test('malformed bodies: a 400 BodyError where multer gives a plain Error (500), with busboy\'s messages', async () => {
  const { req, bytes } = requestOf(Buffer.from('test'))
  req.headers['content-type'] = 'multipart/form-data'
  const noBoundary = await new Promise((resolve) => { multipart().single('f')(req, null, resolve); req.end(bytes) })
  assert.deepEqual([noBoundary.status, noBoundary.code, noBoundary.message], [400, 'ERR_MULTIPART_BOUNDARY', 'Multipart: Boundary not found'])
  const cut = await submit(multipart().single('f'), formBody(B, [file('f', 'a', Buffer.alloc(200))]).subarray(0, 150))
  assert.deepEqual([cut.err.status, cut.err.code, cut.err.message, cut.err.reason], [400, 'ERR_MULTIPART_TRUNCATED', 'Unexpected end of form', 'body'])
  // readMultipart's keep uws-body's own messages.
  const res = { onData (f) { res.data = f }, onAborted () {}, pause () {}, resume () {} }
  const read = readMultipart(res, { 'content-type': `multipart/form-data; boundary=${B}` })
  const cutBytes = formBody(B, [file('f', 'a', Buffer.alloc(200))]).subarray(0, 150)
  res.data(cutBytes.buffer.slice(cutBytes.byteOffset, cutBytes.byteOffset + cutBytes.length), true)
  await assert.rejects(read, { code: 'ERR_MULTIPART_TRUNCATED', message: 'unexpected end of form (in the body)' })
})

test('many files removed after an error, without overflowing the stack, and nothing held', async () => {
  const parts = Array.from({ length: 3000 }, (_, i) => file('f', `${i}`, Buffer.from('x')))
  const storage = multipart.memoryStorage()
  storage._removeFile = (req, f, cb) => cb(null)
  const { err, req } = await submit(multipart({ storage, limits: { files: 2999 } }).any(), parts)
  assert.equal(err.code, 'LIMIT_FILE_COUNT')
  assert.equal(err.storageErrors.length, 0)
  assert.ok(req.files.length <= 2999)
  assert.equal(await bytesInUseAfterGc(), 0)
})
