'use strict'
// The N-API edge as an attacker (or a careless program) meets it: every defect found there
// has a test here, run in a child process so that a crash fails the test instead of the run.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')
const { execFileSync } = require('node:child_process')
const { BodyAccumulator, JS_TIER_MAX, setMemoryBudget } = require('..')
const { defaultBudget } = require('../lib/body/budget')
const native = require('../lib/native/native')
const { runChild, ending } = require('./helpers/child')
const { bytesInUseAfterGc } = require('./helpers/memory')

const MIB = 1024 * 1024

test('no export frees a body while Node\'s own async work (zlib, fs, sockets) still reads it', () => {
  // A program that hands a finished body to every export by mistake, then to zlib, fs and
  // a socket, while more bodies are read into recycled memory: each consumer must see
  // exactly the first body's bytes, and the process must live. (release() did free it:
  // a segfault, a Node assertion, or the next body's bytes on the wire and on disk.)
  const source = `
    const uwsBody = require(ROOT)
    const { bodyOf, sha256 } = require(ROOT + '/__test__/helpers/client')
    const zlib = require('node:zlib'), fs = require('node:fs'), net = require('node:net'), os = require('node:os'), path = require('node:path')
    const SIZE = 4 * 1024 * 1024
    const read = (seed) => {
      const acc = new uwsBody.BodyAccumulator({ contentLength: SIZE, limit: '8mb' })
      acc.push(bodyOf(SIZE, seed))
      return acc.finish()
    }
    async function main (poolLimit) {
      uwsBody.setPoolLimit(poolLimit)
      const body = read(1)
      const expected = sha256(bodyOf(SIZE, 1))
      for (const [name, fn] of Object.entries(uwsBody)) {
        if (typeof fn !== 'function' || /^[A-Z]/.test(name) || name === 'setPoolLimit') continue
        try { const r = fn(body); if (r && typeof r.catch === 'function') r.catch(() => {}) } catch {}
      }
      const file = path.join(os.tmpdir(), 'uws-body-edge-' + process.pid + '-' + poolLimit)
      const server = net.createServer((s) => { const parts = []; s.on('data', (d) => parts.push(d)); s.on('end', () => s.end(sha256(Buffer.concat(parts)))) })
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
      const results = Promise.all([
        new Promise((resolve, reject) => zlib.gzip(body, (err, out) => err ? reject(err) : resolve(sha256(zlib.gunzipSync(out))))),
        new Promise((resolve, reject) => fs.writeFile(file, body, (err) => err ? reject(err) : resolve(sha256(fs.readFileSync(file))))),
        new Promise((resolve, reject) => {
          const socket = net.connect(server.address().port, '127.0.0.1', () => { socket.end(body) })
          let answer = ''
          socket.on('data', (d) => { answer += d })
          socket.on('end', () => resolve(answer))
          socket.on('error', reject)
        })
      ])
      for (let i = 0; i < 24; i++) { read(100 + i); globalThis.gc(); await new Promise(setImmediate) }
      const [gzipped, written, sent] = await results
      server.close()
      fs.unlinkSync(file)
      if (gzipped !== expected || written !== expected || sent !== expected) throw new Error('another body reached a consumer: ' + [gzipped, written, sent].map((h) => h === expected))
    }
    main(0).then(() => main(256 * 1024 * 1024)).then(() => console.log('ok'))`
  const r = runChild(source)
  assert.equal(r.status, 0, ending(r))
  assert.equal(r.stdout.trim(), 'ok', ending(r))
})

test('a client-chosen length never aborts the process: 413, or 503 when memory runs out', () => {
  const source = `
    const { BodyAccumulator } = require(ROOT)
    const native = require(ROOT + '/lib/native/native')
    const out = {}
    // The program allowed anything; the client declares ~91 TB.
    const acc = new BodyAccumulator({ limit: Infinity, maxPreallocated: Infinity, contentLength: '99999999999999' })
    out.public = [acc.error.status, acc.error.code]
    // The same through the native functions, past the JS layer's Buffer-size cap: the
    // default memory budget refuses it first; without one, the allocator does.
    const budgeted = native.create(99999999999999, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, null, true)
    out.budgeted = native.error(budgeted).code
    require(ROOT).setMemoryBudget(Infinity)
    const body = native.create(99999999999999, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, null, true)
    out.native = native.error(body).code
    out.push = native.push(body, Buffer.alloc(10))
    console.log(JSON.stringify(out))`
  const r = runChild(source)
  assert.equal(r.status, 0, ending(r))
  const out = JSON.parse(r.stdout)
  assert.ok(
    (out.public[0] === 413 && out.public[1] === 'ERR_BODY_TOO_LARGE') || (out.public[0] === 503 && out.public[1] === 'ERR_BODY_BUDGET'),
    `${out.public}`
  )
  assert.equal(out.budgeted, 'ERR_BODY_BUDGET')
  assert.equal(out.native, 'ERR_BODY_OUT_OF_MEMORY')
  assert.equal(out.push, false)
})

test('real memory exhaustion while a body grows is a 503, and the process lives', { skip: process.platform !== 'linux' && 'needs prlimit' }, (t) => {
  // An address-space limit a little above what Node itself uses: the body's growth is
  // what fails. Every growth step is an allocation a client's bytes caused.
  let prlimit
  try {
    prlimit = execFileSync('sh', ['-c', 'command -v prlimit'], { encoding: 'utf8' }).trim()
  } catch {
    return t.skip('prlimit (util-linux) is not installed')
  }
  const source = `
    const { BodyAccumulator } = require(ROOT)
    const fs = require('node:fs')
    const vsz = Number(/VmSize:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
    const limit = vsz + 512 * 1024 * 1024
    require('node:child_process').execFileSync(${JSON.stringify(prlimit)}, ['--pid', String(process.pid), '--as=' + limit])
    const out = {}
    // The allocator's refusals, not the memory budget's.
    require(ROOT).setMemoryBudget(Infinity)
    // Known length, a preallocation the program allowed: 1 GiB at once.
    const big = new BodyAccumulator({ limit: '4gb', maxPreallocated: Infinity, contentLength: 2 ** 30 })
    out.prealloc = big.error && big.error.code
    // Unknown length: growth by doubling until the allocator says no.
    const acc = new BodyAccumulator({ limit: '4gb' })
    const chunk = Buffer.alloc(8 * 1024 * 1024, 1)
    let sent = 0
    while (acc.push(chunk)) sent += chunk.length
    out.growth = [acc.error.status, acc.error.code, acc.error.type]
    out.sentMiB = sent / 1024 / 1024
    out.capacity = acc.capacity
    console.log(JSON.stringify(out))`
  const r = runChild(source)
  assert.equal(r.status, 0, ending(r))
  const out = JSON.parse(r.stdout)
  assert.equal(out.prealloc, 'ERR_BODY_OUT_OF_MEMORY')
  assert.deepEqual(out.growth, [503, 'ERR_BODY_OUT_OF_MEMORY', 'memory.exhausted'])
  assert.ok(out.sentMiB > 0 && out.sentMiB < 512, `${out.sentMiB} MiB accepted first`)
  assert.equal(out.capacity, 0, 'its memory released at once')
})

/** Builds __test__/fixtures/foreign-external.c into a Node addon, or says why it cannot. */
function buildForeignAddon () {
  const headers = path.join(path.dirname(process.execPath), '..', 'include', 'node')
  if (!fs.existsSync(path.join(headers, 'node_api.h'))) return { skip: `no Node headers at ${headers}` }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-foreign-'))
  const out = path.join(dir, 'foreign.node')
  try {
    const flags = process.platform === 'darwin' ? ['-undefined', 'dynamic_lookup'] : []
    execFileSync('cc', ['-shared', '-fPIC', ...flags, '-I', headers, '-o', out, path.join(__dirname, 'fixtures', 'foreign-external.c')], { stdio: 'pipe' })
  } catch (err) {
    return { skip: `no C compiler: ${err.message.split('\n')[0]}` }
  }
  return { file: out }
}

test('an external from another addon is never read as a body', (t) => {
  const addon = buildForeignAddon()
  if (addon.skip) return t.skip(addon.skip)
  const source = `
    const native = require(ROOT + '/lib/native/native')
    const foreign = require(${JSON.stringify(addon.file)}).external()
    const seen = []
    for (const [name, args] of [['push', [foreign, Buffer.alloc(10)]], ['finish', [foreign]], ['finishString', [foreign, 0]], ['abort', [foreign]], ['error', [foreign]], ['sizes', [foreign]], ['digests', [foreign]], ['streamDigests', [foreign]],
      ['streamWrite', [foreign, Buffer.alloc(10), Buffer.alloc(10), 0]], ['streamRead', [foreign, Buffer.alloc(10), 0]], ['streamEnd', [foreign]], ['streamAbort', [foreign]], ['streamError', [foreign]]]) {
      try { seen.push(name + ' returned ' + JSON.stringify(native[name](...args))) } catch (err) { seen.push(name + ' ' + err.name + ': ' + err.message) }
    }
    console.log(JSON.stringify(seen))`
  const r = runChild(source)
  assert.equal(r.status, 0, ending(r))
  for (const line of JSON.parse(r.stdout)) assert.match(line, /^\w+ TypeError: \w+: not a body( stream)?$/)
})

// Chunks of every kind, for both tiers: a body of known length up to JS_TIER_MAX is read
// in JS, a larger one natively; unknown-length bodies start in JS and move to native.
const TIERS = {
  js: () => new BodyAccumulator({ limit: '1mb' }),
  native: () => new BodyAccumulator({ contentLength: JS_TIER_MAX + 10, limit: '1mb' })
}

function detachedViews () {
  const detach = (ab) => { structuredClone(ab, { transfer: [ab] }); return ab }
  const views = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array, DataView]
    .map((View) => { const ab = new ArrayBuffer(16); const view = new View(ab); detach(ab); return [View.name, view] })
  views.push(['ArrayBuffer', detach(new ArrayBuffer(16))], ['Buffer', (() => { const ab = new ArrayBuffer(16); const b = Buffer.from(ab); detach(ab); return b })()])
  return views
}

test('detached chunks of every kind: the same TypeError from both tiers, never an empty chunk', () => {
  for (const [tier, make] of Object.entries(TIERS)) {
    for (const [kind, chunk] of detachedViews()) {
      const acc = make()
      acc.push(Buffer.alloc(5))
      assert.throws(() => acc.push(chunk), (err) => err instanceof TypeError && err.code === 'ERR_BODY_CHUNK_DETACHED' && /detached/.test(err.message), `${tier} ${kind}`)
      assert.equal(acc.received, 5, `${tier} ${kind}: nothing counted`)
      acc.abort()
    }
  }
})

test('views outside a resized ArrayBuffer are refused by both tiers; views inside it are read', { skip: typeof ArrayBuffer.prototype.resize !== 'function' && 'no resizable ArrayBuffers before Node 20' }, () => {
  for (const [tier, make] of Object.entries(TIERS)) {
    const ab = new ArrayBuffer(64, { maxByteLength: 128 })
    new Uint8Array(ab).fill(9)
    const outside = [new DataView(ab, 40, 10), new Uint16Array(ab, 40, 5), new Uint8Array(ab, 40)]
    const inside = [new DataView(ab, 0, 4), new Uint8Array(ab), new Uint16Array(ab, 2, 2)]
    ab.resize(20)
    const acc = make()
    for (const view of outside) assert.throws(() => acc.push(view), (err) => err.code === 'ERR_BODY_CHUNK_DETACHED', `${tier} ${view.constructor.name}`)
    for (const view of inside) assert.equal(acc.push(view), true)
    assert.equal(acc.received, 4 + 20 + 4, tier)
    acc.abort()
  }
})

test('shared memory is refused by both tiers; ArrayBuffers from another realm are read by both', () => {
  const foreign = vm.runInNewContext('const ab = new ArrayBuffer(6); new Uint8Array(ab).fill(3); ({ ab, view: new Uint16Array(ab, 2, 2), dv: new DataView(ab, 1, 2) })')
  for (const [tier, make] of Object.entries(TIERS)) {
    const sab = new SharedArrayBuffer(8)
    const acc = make()
    for (const chunk of [sab, new Uint8Array(sab), new DataView(sab), Buffer.from(sab)]) {
      assert.throws(() => acc.push(chunk), (err) => err instanceof TypeError && err.code === 'ERR_BODY_CHUNK_SHARED', `${tier} ${chunk.constructor.name}`)
    }
    assert.equal(acc.push(foreign.ab), true)
    assert.equal(acc.push(foreign.view), true)
    assert.equal(acc.push(foreign.dv), true)
    assert.equal(acc.received, 6 + 4 + 2, tier)
    acc.push(Buffer.alloc(tier === 'native' ? JS_TIER_MAX + 10 - 12 : 0, 3))
    assert.ok(acc.finish().every((b) => b === 3), tier)
  }
})

test('not-binary chunks: one TypeError with one message from both tiers', () => {
  for (const chunk of [null, undefined, 'abc', 12, {}, [1, 2], { byteLength: 4 }, new Map()]) {
    const messages = Object.values(TIERS).map((make) => {
      try {
        make().push(chunk)
      } catch (err) {
        assert.ok(err instanceof TypeError && err.code === 'ERR_INVALID_ARG_TYPE')
        return err.message
      }
      return 'accepted'
    })
    assert.equal(messages[0], messages[1])
    assert.notEqual(messages[0], 'accepted')
  }
})

test('the native functions take any JavaScript value without crashing', () => {
  const values = [undefined, null, 0, -1, NaN, Infinity, 2 ** 64, 'x', '\u0000', {}, [], () => {}, Symbol('s'), 10n, new ArrayBuffer(4), Buffer.alloc(4), new SharedArrayBuffer(4), Promise.resolve(), new Proxy({}, {})]
  const body = native.create(-1, 1000, 1000, null, true)
  for (const name of Object.keys(native).filter((name) => typeof native[name] === 'function')) {
    for (const a of values) {
      for (const b of [undefined, a, body]) {
        try {
          native[name](a, b, a, b, a, a)
        } catch (err) {
          assert.ok(err instanceof Error, `${name} threw a non-error`)
        }
      }
    }
  }
  native.setPoolLimit(256 * MIB)
})

test('any value as create()\'s size hint: the body is its bytes, or a 503, never a crash', (t) => {
  // The allocator's answer, not the memory budget's (budget.test.js has those).
  setMemoryBudget(Infinity)
  t.after(() => setMemoryBudget(defaultBudget()))
  const chunk = Buffer.from('hinted')
  for (const hint of [undefined, null, -1, 0, NaN, 1, 6, 7, 2 ** 20, 2 ** 53, Infinity, -Infinity, 2 ** 64, '99', {}, 10n]) {
    for (const [limit, maxPreallocated] of [[1000, 1000], [Infinity, 2 ** 20], [Infinity, Infinity]]) {
      const body = native.create(-1, limit, maxPreallocated, null, true, hint)
      if (native.push(body, chunk) === true) {
        assert.equal(native.finish(body).toString(), 'hinted', `hint ${String(hint)}`)
      } else {
        assert.equal(native.error(body).code, 'ERR_BODY_OUT_OF_MEMORY', `hint ${String(hint)}`)
      }
    }
  }
})

test('after the hostile calls, nothing is held', async () => {
  assert.equal(await bytesInUseAfterGc(), 0)
})
