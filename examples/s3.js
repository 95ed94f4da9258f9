'use strict'
// multipart/form-data uploads on bare uWS streamed to S3-compatible object storage: each
// file goes to its own object through @aws-sdk/lib-storage's Upload (a multipart upload
// above 5 MiB), with backpressure from the store to the client, and nothing left in the
// bucket when the request fails. docs/s3.md explains it; s3Uploads() is the recipe (the
// tests use this very function).
//   S3_ENDPOINT=http://127.0.0.1:3900 S3_BUCKET=uploads AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… node examples/s3.js
//   curl -F title=me -F big=@big.iso http://127.0.0.1:3000/upload
const crypto = require('node:crypto')
const { PassThrough, Writable } = require('node:stream')
const { DeleteObjectCommand, PutObjectCommand, CompleteMultipartUploadCommand } = require('@aws-sdk/client-s3')
const { Upload } = require('@aws-sdk/lib-storage')

/**
 * One request's uploads: `storage` and `digest` for readMultipart (a Writable per file,
 * whose 'finish' comes once its object is stored: readMultipart resolves only then; each
 * file's CRC-32C, made by uws-body as its bytes are parsed), `stored` (per file, in the
 * order of readMultipart's `files`: { bucket, key, etag, location, crc32c }) and `remove()`
 * for a failed request: waits for every upload to end (an upload cut short aborts its
 * multipart upload) and deletes the objects already stored (it resolves with the deletions
 * that failed). `key(file)` names each object
 * (default: a random UUID, never the client's name), `params(file)` adds PutObject
 * parameters, `options` go to each Upload (queueSize, partSize: it holds up to
 * queueSize + 1 parts).
 *
 * The store verifies every byte (docs/s3.md#checksums): the SDK sends each part's CRC-32C
 * (ChecksumAlgorithm), and the request that makes the object carries the whole file's,
 * uws-body's (file.digests.crc32c): PutObject's body, or the parts joined at
 * CompleteMultipartUpload (a FULL_OBJECT checksum), must match it or no object is made.
 */
function s3Uploads ({ client, bucket, key = () => crypto.randomUUID(), params = () => ({}), options = {} }) {
  const uploads = []
  const stored = []
  const storage = (file) => {
    const Key = key(file)
    // lib-storage reads a Readable; the Writable below feeds it and holds the writer
    // (readMultipart, hence the client) while it is full.
    const body = new PassThrough()
    const upload = new Upload({
      ...options,
      client: withObjectChecksum(client, file),
      params: { Bucket: bucket, Key, Body: body, ContentType: file.mimetype, ...params(file), ChecksumAlgorithm: 'CRC32C', ChecksumType: 'FULL_OBJECT' }
    })
    const done = upload.done()
    const index = uploads.push({ Key, done }) - 1
    const sink = new Writable({
      write (chunk, encoding, cb) {
        if (body.write(chunk)) cb()
        else body.once('drain', cb)
      },
      final (cb) {
        body.end()
        done.then((r) => {
          stored[index] = { bucket, key: Key, etag: r.ETag, location: r.Location, crc32c: r.ChecksumCRC32C }
          cb()
        }, cb)
      },
      destroy (err, cb) {
        // lib-storage sees its Body fail and aborts the multipart upload; 'close' comes
        // once it has.
        body.destroy(err || new Error('upload cut short'))
        done.then(() => cb(err), () => cb(err))
      }
    })
    // The store failing mid-file fails the request now, not at the file's end.
    done.catch((err) => sink.destroy(err))
    return sink
  }
  // Resolves with the deletions that failed (as multer's storageErrors): [{ key, error }].
  const remove = async () => {
    const ended = await Promise.allSettled(uploads.map((u) => u.done))
    const deleted = await Promise.allSettled(ended.map((r, i) => r.status === 'fulfilled' && client.send(new DeleteObjectCommand({ Bucket: bucket, Key: uploads[i].Key }))))
    return deleted.flatMap((r, i) => r.status === 'rejected' ? [{ key: uploads[i].Key, error: r.reason }] : [])
  }
  return { storage, digest: ['crc32c'], stored, remove }
}

/**
 * `client` for one file's Upload: the requests that make its object (PutObject, or
 * CompleteMultipartUpload) carry the file's CRC-32C as uws-body made it. Both are sent
 * after the file's last byte, when file.digests is set; the parts carry their own (the SDK's).
 */
function withObjectChecksum (client, file) {
  const send = (command, ...rest) => {
    if (command instanceof PutObjectCommand || command instanceof CompleteMultipartUploadCommand) {
      const crc32c = file.digests?.crc32c
      if (crc32c === undefined) return Promise.reject(new TypeError('s3Uploads: the file has no CRC-32C: pass readMultipart { digest: uploads.digest }'))
      command.input.ChecksumCRC32C = crc32c.toString('base64')
    }
    return client.send(command, ...rest)
  }
  return Object.create(client, { send: { value: send } })
}

module.exports = { s3Uploads }

if (require.main === module) {
  const uWS = require('uWebSockets.js')
  const { S3Client } = require('@aws-sdk/client-s3')
  const { readMultipart, answerError } = require('..')
  // Path-style addressing: what most S3-compatible stores (garage, MinIO, Ceph) expect. A
  // timeout per request, which the SDK has not by default (docs/s3.md).
  const client = new S3Client({
    endpoint: process.env.S3_ENDPOINT,
    region: process.env.S3_REGION || 'garage',
    forcePathStyle: true,
    requestHandler: { requestTimeout: 60_000, throwOnRequestTimeout: true }
  })
  const bucket = process.env.S3_BUCKET || 'uploads'

  uWS.App().post('/upload', (res, req) => {
    const s3 = s3Uploads({ client, bucket })
    readMultipart(res, req, { storage: s3.storage, digest: s3.digest, limit: '10gb', limits: { files: 20 } }).then(
      ({ fields, files }) => {
        if (res.aborted) return
        res.cork(() => res.end(files.map((f, i) => `${f.originalname} -> s3://${bucket}/${s3.stored[i].key} (${f.size} bytes)\n`).join('')))
      },
      async (err) => {
        await s3.remove()
        // An S3 error has no `status`: the store failed, not the client (a 500).
        answerError(res, err)
      }
    )
  }).listen('127.0.0.1', Number(process.env.PORT ?? 3000), (token) => {
    if (token) console.log(`http://127.0.0.1:${uWS.us_socket_local_port(token)}/upload -> s3://${bucket} at ${process.env.S3_ENDPOINT}`)
  })
}
