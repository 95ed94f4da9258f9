'use strict'
// A real S3 server for the tests: garage (crates.io `garage`, 2.x), started on 127.0.0.1
// with fresh metadata and data directories in a temporary directory, one bucket and one
// key, and stopped (by pid) and removed at the end. One node, or three on loopback that
// replicate every object (for the test that writes through one node and reads through
// another).
//
// Each garage process runs under a small shell that holds a pipe from the test process:
// when the test process goes, however it goes (SIGKILL included), the pipe closes and the
// shell ends garage. So no test run leaves a garage running.
//
// Where the binary is (findGarage): UWS_BODY_GARAGE, then target/tools/garage/bin/garage
// (what scripts/garage.sh installs: inside the repository, so the Debian 13 root of
// scripts/trixie.sh sees it too), then ~/.cache/uws-body/garage/bin/garage, then PATH.
const assert = require('node:assert/strict')
const { spawn, spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const test = require('node:test')

// The SDK warns once per process that its 2027 releases need Node 22; the tests run on 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

const ROOT = path.join(__dirname, '..', '..')
const REGION = 'garage'
// The SDK's per-request timeout in the tests (ms): far above any request's time here.
const REQUEST_TIMEOUT = 60000
const BUCKET = 'uws-body-test'

/**
 * garage's environment: the test process's without what is meant for Node and the addon
 * (asan/run.sh preloads the ASan runtime into every child; garage is not under test).
 */
function garageEnv (extra = {}) {
  const env = { ...process.env, RUST_LOG: 'warn', ...extra }
  for (const name of ['LD_PRELOAD', 'ASAN_OPTIONS', 'NODE_OPTIONS']) delete env[name]
  return env
}

/** { bin, version } of a garage 2.x that runs here, or { why } it was not found. */
function findGarage () {
  const candidates = []
  if (process.env.UWS_BODY_GARAGE) candidates.push(process.env.UWS_BODY_GARAGE)
  candidates.push(path.join(ROOT, 'target', 'tools', 'garage', 'bin', 'garage'))
  candidates.push(path.join(os.homedir(), '.cache', 'uws-body', 'garage', 'bin', 'garage'))
  for (const dir of (process.env.PATH || '').split(path.delimiter)) if (dir) candidates.push(path.join(dir, 'garage'))
  const tried = []
  for (const bin of candidates) {
    if (!fs.existsSync(bin)) continue
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10000, env: garageEnv() })
    const version = r.status === 0 ? (r.stdout.match(/\d+\.\d+\.\d+/) || [])[0] : undefined
    if (version !== undefined && Number(version.split('.')[0]) >= 2) return { bin, version }
    tried.push(`${bin}: ${r.error ? r.error.message : version ? `version ${version}, need 2.x` : (r.stderr || '').trim().split('\n')[0]}`)
  }
  const where = tried.length ? tried.join('; ') : 'not in UWS_BODY_GARAGE, target/tools/garage, ~/.cache/uws-body/garage or PATH'
  return { why: `garage 2.x not found (${where}); bash scripts/garage.sh installs it` }
}

/**
 * The test's gate: { skip: reason } where garage is missing, so the test prints why;
 * under CI (process.env.CI) a missing garage fails the test instead of skipping it.
 */
function garageGate () {
  const found = findGarage()
  if (found.bin) return { found, skip: false }
  if (process.env.CI) return { found, skip: false, fail: found.why }
  return { found, skip: found.why }
}

/** node:test's test() behind the gate: skipped with its reason, or failed under CI. */
function gatedTest (gate) {
  return (name, fn) => test(name, { skip: gate.skip, timeout: 10 * 60000 }, async (t) => {
    if (gate.fail) assert.fail(`CI: ${gate.fail}`)
    await fn(t)
  })
}

function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function config ({ dir, secret, rpcPort, s3Port, replication }) {
  return [
    `metadata_dir = "${dir}/meta"`,
    `data_dir = "${dir}/data"`,
    // LMDB, garage's default: under sqlite, garage 2.5 left an UploadPart unanswered here
    // (its body received, no response, for minutes) while its workers logged "database is
    // locked", once in a few GiB of 10 MiB files.
    'db_engine = "lmdb"',
    `replication_factor = ${replication}`,
    // The bodies in the tests are random bytes: compressing them is only CPU spent.
    'compression_level = "none"',
    // The data is thrown away at the end: no fsync.
    'metadata_fsync = false',
    'data_fsync = false',
    `rpc_bind_addr = "127.0.0.1:${rpcPort}"`,
    `rpc_public_addr = "127.0.0.1:${rpcPort}"`,
    `rpc_secret = "${secret}"`,
    '',
    '[s3_api]',
    `s3_region = "${REGION}"`,
    `api_bind_addr = "127.0.0.1:${s3Port}"`,
    'root_domain = ".s3.garage.localhost"',
    ''
  ].join('\n')
}

/** One garage process: started, stopped (SIGTERM), killed, stopped for a while (SIGSTOP). */
class Node {
  /** `root`: the directory its shell removes if the test process dies without stopping it. */
  constructor (bin, dir, root, settings) {
    this.bin = bin
    this.dir = dir
    this.root = root
    this.settings = settings
    this.configFile = path.join(dir, 'garage.toml')
    this.logFile = path.join(dir, 'garage.log')
    this.shell = null
    this.pid = null
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(this.configFile, config({ dir, ...settings }), { mode: 0o600 })
  }

  get endpoint () { return `http://127.0.0.1:${this.settings.s3Port}` }

  /** Starts `garage server` (args: its flags), resolves once its S3 port accepts connections. */
  async start (args = [], env = {}) {
    if (this.shell !== null) throw new Error('garage node already running')
    this.args = args
    this.env = env
    const script = [
      'exec 2>>"$LOG"',
      // A signal to the whole process group (Ctrl-C, timeout(1)) must not end this shell
      // before it has removed the files: it ends when its input does.
      "trap '' INT TERM HUP",
      'bin=$0 cfg=$1',
      'shift',
      '"$bin" -c "$cfg" server "$@" >>"$LOG" 2>&1 &',
      'g=$!',
      'echo "$g"',
      // The test process holds stdin: end of input (its end, or its death) ends garage.
      'read -r why || why=gone',
      // SIGCONT too: a stopped garage (freeze()) acts on SIGTERM only once continued.
      'kill "$g" 2>/dev/null',
      'kill -CONT "$g" 2>/dev/null',
      'wait "$g"',
      // Not stopped by the test process (it died): nothing else will remove the files.
      '[ "$why" = stop ] || rm -rf "$ROOT"'
    ].join('\n')
    const shell = spawn('/bin/sh', ['-c', script, this.bin, this.configFile, ...args], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: garageEnv({ LOG: this.logFile, ROOT: this.root, ...env })
    })
    this.shell = shell
    this.exited = new Promise((resolve) => shell.once('exit', resolve))
    this.pid = await new Promise((resolve, reject) => {
      let out = ''
      shell.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(Number(out.trim()))
      })
      shell.once('exit', () => reject(new Error(`garage did not start: ${this.log()}`)))
    })
    // The pipe must not keep the test process alive on its own.
    shell.unref()
    shell.stdin.unref?.()
    shell.stdout.unref?.()
    await this.waitPort(this.settings.s3Port)
  }

  async waitPort (port, timeout = 30000) {
    const until = Date.now() + timeout
    for (;;) {
      const ok = await new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1')
        s.once('connect', () => { s.destroy(); resolve(true) })
        s.once('error', () => resolve(false))
      })
      if (ok) return
      if (!this.alive()) throw new Error(`garage exited: ${this.log()}`)
      if (Date.now() > until) throw new Error(`garage did not listen on ${port} in ${timeout} ms: ${this.log()}`)
      await sleep(50)
    }
  }

  /** Whether garage runs (a zombie, which its shell has not reaped yet, does not). */
  alive () {
    if (this.pid === null) return false
    try {
      const stat = fs.readFileSync(`/proc/${this.pid}/stat`, 'utf8')
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
    } catch {
      return false
    }
  }

  log () {
    try {
      return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-15).join('\n')
    } catch {
      return '(no log)'
    }
  }

  /** Runs the garage CLI against this node; its stdout. */
  cli (...args) {
    const r = spawnSync(this.bin, ['-c', this.configFile, ...args], { encoding: 'utf8', timeout: 30000, env: garageEnv() })
    if (r.status !== 0) throw new Error(`garage ${args.join(' ')}: ${r.error ? r.error.message : r.stderr.trim()}`)
    return r.stdout
  }

  /**
   * Ends garage: `signal` (SIGTERM: garage shuts down, but waits up to its exit deadline
   * for open client connections), SIGKILL after `grace` ms, then waits for it and its
   * shell to exit. Its files stay (startGarage's stop() removes them).
   */
  async stop (signal = 'SIGTERM', grace = 1000) {
    if (this.shell === null) return
    const { pid, shell } = this
    // Until it has exited, the shell keeps the test process alive.
    shell.ref()
    if (this.alive()) {
      try { process.kill(pid, 'SIGCONT') } catch {}
      try { process.kill(pid, signal) } catch {}
    }
    shell.stdin.end('stop\n')
    const killed = setTimeout(() => { try { process.kill(pid, 'SIGKILL') } catch {} }, grace)
    await this.exited
    clearTimeout(killed)
    if (this.alive()) throw new Error(`garage ${pid} still runs after its shell exited`)
    this.shell = null
    this.pid = null
  }

  /** Starts it again as it was started, on the same directories and ports. */
  restart () { return this.start(this.args, this.env) }

  /** The store stops answering (SIGSTOP) / answers again (SIGCONT). */
  freeze () { process.kill(this.pid, 'SIGSTOP') }
  thaw () { process.kill(this.pid, 'SIGCONT') }
}

const hex = (bytes) => crypto.randomBytes(bytes).toString('hex')
// garage's key format: GK and 24 hex digits; a 64-hex-digit secret.
const newKey = () => ({ accessKeyId: 'GK' + hex(12), secretAccessKey: hex(32) })

/**
 * Starts garage: { nodes, endpoint, endpoints, region, bucket, credentials, dir,
 * client(options), addKey(permissions), stop() }. `nodes: 3` makes a cluster of three on
 * loopback with replication factor 3 (every node holds every object).
 */
async function startGarage ({ nodes: count = 1 } = {}) {
  const found = findGarage()
  if (!found.bin) throw new Error(found.why)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-garage-'))
  const secret = hex(32)
  const credentials = newKey()
  const nodes = []
  const garage = {
    nodes,
    dir,
    region: REGION,
    bucket: BUCKET,
    credentials,
    version: found.version,
    get endpoint () { return nodes[0].endpoint },
    get endpoints () { return nodes.map((n) => n.endpoint) },
    client: (options = {}) => s3Client({ endpoint: garage.endpoint, region: REGION, credentials, ...options }),
    /** A new key with `read` / `write` on the bucket (either may be false): its credentials. */
    addKey ({ read = true, write = true } = {}) {
      const key = newKey()
      nodes[0].cli('key', 'import', '--yes', '-n', 'extra', key.accessKeyId, key.secretAccessKey)
      const flags = [read && '--read', write && '--write'].filter(Boolean)
      if (flags.length) nodes[0].cli('bucket', 'allow', ...flags, BUCKET, '--key', key.accessKeyId)
      return key
    },
    /** Starts node `i` again (same directories and ports) and waits until the bucket answers everywhere. */
    async restartNode (i) {
      await nodes[i].restart()
      // Without this, the others find it again after their reconnection backoff (~30 s).
      for (const other of nodes) if (other !== nodes[i]) nodes[i].cli('node', 'connect', other.id)
      await waitReady(garage)
    },
    /** The bucket's size quota (garage's --max-size: '16MiB', or 'none'). */
    setQuota (maxSize) {
      nodes[0].cli('bucket', 'set-quotas', '--max-size', maxSize, BUCKET)
    },
    async stop () {
      for (const n of nodes) await n.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  try {
    for (let i = 0; i < count; i++) {
      const [rpcPort, s3Port] = [await freePort(), await freePort()]
      nodes.push(new Node(found.bin, path.join(dir, `node${i}`), dir, { secret, rpcPort, s3Port, replication: count === 1 ? 1 : 3 }))
    }
    if (count === 1) {
      // garage 2's one-command single node: its layout, the bucket and the key.
      await nodes[0].start(['--single-node', '--default-bucket'], {
        GARAGE_DEFAULT_ACCESS_KEY: credentials.accessKeyId,
        GARAGE_DEFAULT_SECRET_KEY: credentials.secretAccessKey,
        GARAGE_DEFAULT_BUCKET: BUCKET
      })
    } else {
      for (const n of nodes) await n.start()
      for (const n of nodes) n.id = n.cli('node', 'id', '-q').trim()
      const ids = nodes.map((n) => n.id)
      for (const id of ids.slice(1)) nodes[0].cli('node', 'connect', id)
      for (const id of ids) nodes[0].cli('layout', 'assign', '-z', 'dc1', '-c', '1G', id.split('@')[0])
      nodes[0].cli('layout', 'apply', '--version', '1')
      nodes[0].cli('bucket', 'create', BUCKET)
      nodes[0].cli('key', 'import', '--yes', '-n', 'test', credentials.accessKeyId, credentials.secretAccessKey)
      nodes[0].cli('bucket', 'allow', '--read', '--write', '--owner', BUCKET, '--key', credentials.accessKeyId)
    }
    await waitReady(garage)
    return garage
  } catch (err) {
    await garage.stop()
    throw err
  }
}

/**
 * Until the bucket answers on every node, listings included: those read a quorum, and the
 * nodes of a new cluster take a moment to connect to each other.
 */
async function waitReady (garage, timeout = 30000) {
  const until = Date.now() + timeout
  for (const endpoint of garage.endpoints) {
    const client = garage.client({ endpoint, maxAttempts: 1 })
    for (;;) {
      try {
        await listKeys(client, garage.bucket)
        await listUploads(client, garage.bucket)
        break
      } catch (err) {
        if (Date.now() > until) throw new Error(`garage at ${endpoint} not ready: ${err.name} ${err.message}\n${garage.nodes[0].log()}`)
        await sleep(100)
      }
    }
    client.destroy()
  }
}

/**
 * An S3 client of the AWS SDK v3 for garage: path-style addressing, its region, and a
 * timeout on each request (the SDK has none by default: a store that never answers would
 * hang a test for ever).
 */
function s3Client ({ endpoint, region = REGION, credentials, ...rest }) {
  const { S3Client } = require('@aws-sdk/client-s3')
  return new S3Client({ endpoint, region, credentials, forcePathStyle: true, requestHandler: { requestTimeout: REQUEST_TIMEOUT, throwOnRequestTimeout: true }, ...rest })
}

// ---- what is in the bucket ----

/** Every object's key in the bucket (all pages), or those that start with `prefix`. */
async function listKeys (client, bucket, prefix) {
  const { ListObjectsV2Command } = require('@aws-sdk/client-s3')
  const keys = []
  let token
  do {
    const r = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }))
    for (const o of r.Contents || []) keys.push(o.Key)
    token = r.IsTruncated ? r.NextContinuationToken : undefined
  } while (token)
  return keys
}

/** The bucket's multipart uploads in progress ([{ key, uploadId }]), or those under `prefix`. */
async function listUploads (client, bucket, prefix) {
  const { ListMultipartUploadsCommand } = require('@aws-sdk/client-s3')
  const uploads = []
  let keyMarker
  let uploadIdMarker
  for (;;) {
    const r = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }))
    for (const u of r.Uploads || []) uploads.push({ key: u.Key, uploadId: u.UploadId })
    if (!r.IsTruncated) return uploads
    keyMarker = r.NextKeyMarker
    uploadIdMarker = r.NextUploadIdMarker
  }
}

/** sha256 (hex) and length of an object, read as a stream. */
async function objectDigest (client, bucket, key) {
  const { GetObjectCommand } = require('@aws-sdk/client-s3')
  const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
  const hash = crypto.createHash('sha256')
  let size = 0
  for await (const chunk of r.Body) {
    hash.update(chunk)
    size += chunk.length
  }
  return { sha256: hash.digest('hex'), size, etag: r.ETag, contentType: r.ContentType }
}

/** Removes every object and aborts every multipart upload in the bucket. */
async function emptyBucket (client, bucket) {
  const { DeleteObjectCommand, AbortMultipartUploadCommand } = require('@aws-sdk/client-s3')
  for (const key of await listKeys(client, bucket)) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }))
  for (const u of await listUploads(client, bucket)) {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.key, UploadId: u.uploadId }))
  }
}

module.exports = { findGarage, garageGate, gatedTest, startGarage, s3Client, REQUEST_TIMEOUT, listKeys, listUploads, objectDigest, emptyBucket, freePort }
