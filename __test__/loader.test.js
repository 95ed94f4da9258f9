'use strict'
// lib/native/native.js: where it looks for the addon, in which order, and the one error it throws
// when nothing loads. Each case requires a fresh copy of the loader from a temporary
// folder, so its package folder and node_modules are whatever the case lays out. Copies
// of the binary are symlinks: require resolves them to the binary already loaded, so the
// addon is never loaded twice into this process.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ENV = 'UWS_BODY_NATIVE_PATH'
const LOADER = path.join(__dirname, '..', 'lib', 'native', 'native.js')
const native = require(LOADER)
const binary = Object.keys(require.cache).find((f) => f.endsWith('.node') && require.cache[f].exports === native)
const id = path.basename(binary).replace(/^uws-body\.(.+)\.node$/, '$1')
const made = []
test.after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }) })

/** A package folder holding a copy of the loader; `files` maps relative paths to a binary's path (symlinked) or text. */
function layout (files = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-body-loader-'))
  made.push(root)
  const pkg = path.join(root, 'uws-body')
  fs.mkdirSync(path.join(pkg, 'lib', 'native'), { recursive: true })
  fs.copyFileSync(LOADER, path.join(pkg, 'lib', 'native', 'native.js'))
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    if (content.binary) fs.symlinkSync(content.binary, file)
    else fs.writeFileSync(file, content)
  }
  return { root, loader: path.join(pkg, 'lib', 'native', 'native.js') }
}

/** Requires a loader with ENV set (or unset: undefined), giving back what it exported or threw. */
function load (loader, envValue) {
  const saved = process.env[ENV]
  if (envValue === undefined) delete process.env[ENV]
  else process.env[ENV] = envValue
  try {
    return { binding: require(loader) }
  } catch (error) {
    return { error }
  } finally {
    if (saved === undefined) delete process.env[ENV]
    else process.env[ENV] = saved
  }
}

const platformPackage = (target) => ({
  [`node_modules/uws-body-${id}/package.json`]: JSON.stringify({ name: `uws-body-${id}`, main: `uws-body.${id}.node` }),
  [`node_modules/uws-body-${id}/uws-body.${id}.node`]: target
})

test('the platform id names this machine (napi-rs ids, glibc vs musl detected)', () => {
  const report = process.report.getReport()
  const libc = report.header.glibcVersionRuntime ? 'gnu' : 'musl'
  const expected = { linux: `linux-${process.arch}-${libc}`, darwin: `darwin-${process.arch}`, win32: `win32-${process.arch}-msvc` }[process.platform]
  assert.equal(id, expected)
})

test('nothing to load: one error listing each place tried, the platform, and how to build', () => {
  const { root, loader } = layout()
  const { error } = load(loader, undefined)
  assert.equal(error.code, 'ERR_UWS_BODY_NATIVE')
  const lines = error.message.split('\n')
  assert.match(lines[0], new RegExp(`^uws-body: cannot load the native addon for ${id} \\(${process.platform}, ${process.arch}`))
  assert.equal(lines[1], 'Tried:')
  assert.equal(lines[2], `  1. ${path.join(root, 'uws-body', `uws-body.${id}.node`)} (built from source): not found`)
  assert.equal(lines[3], `  2. uws-body-${id} (platform package): not installed`)
  assert.match(error.message, new RegExp(`npm install uws-body-${id}`))
  assert.match(error.message, /build from source \(needs Rust/)
})

test('the environment variable, when set, is the only place tried', () => {
  // A working platform package is there, and must not be used instead of the named file.
  const { loader } = layout(platformPackage({ binary }))
  const missing = path.join(os.tmpdir(), 'no-such-dir', 'uws-body.node')
  const { error } = load(loader, missing)
  assert.equal(error.code, 'ERR_UWS_BODY_NATIVE')
  assert.match(error.message, new RegExp(`Tried:\\n  1\\. ${ENV}=${missing.replace(/[.\\]/g, '\\$&')}: not found\\n[^ ]`))
  assert.doesNotMatch(error.message, /platform package/)
})

test('the environment variable loads the file it names', () => {
  const { loader } = layout()
  assert.equal(load(loader, binary).binding, native)
})

test('a file that is not a loadable addon: the reason is the dynamic loader\'s', () => {
  const { root, loader } = layout({ 'broken.node': 'not an ELF, Mach-O or PE file' })
  const { error } = load(loader, path.join(root, 'broken.node'))
  assert.equal(error.code, 'ERR_UWS_BODY_NATIVE')
  const line = error.message.split('\n')[2]
  assert.match(line, /broken\.node: /)
  assert.doesNotMatch(line, /not found|not installed/)
})

test('the platform package is used when there is no build in the package folder', () => {
  const { loader } = layout(platformPackage({ binary }))
  assert.equal(load(loader, undefined).binding, native)
})

test('a build in the package folder comes before the platform package', () => {
  const { loader } = layout({
    [`uws-body/uws-body.${id}.node`]: { binary },
    [`node_modules/uws-body-${id}/package.json`]: JSON.stringify({ name: `uws-body-${id}`, main: 'index.js' }),
    [`node_modules/uws-body-${id}/index.js`]: "module.exports = 'the platform package'"
  })
  assert.equal(load(loader, undefined).binding, native)
})
