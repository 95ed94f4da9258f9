'use strict'
// The addon built with `--features fault-injection` (src/node/buffer.rs `fault`): it has
// one more export, injectFault(kind), which makes the next N-API call of that kind fail as
// if an exception were pending. Only tests load it, through UWS_BODY_NATIVE_PATH.
const { spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { REPO: ROOT } = require('./repository')

// Built in the repository's own target directory, whose dependencies `cargo test` has
// compiled already (a directory of its own rebuilt them all: about a minute in CI); kept
// in target/fault, where a plain build does not overwrite it.
const BUILT = path.join(ROOT, 'target', 'debug', 'libuws_body.so')
const TARGET = path.join(ROOT, 'target', 'fault')
const ADDON = path.join(TARGET, 'uws-body-fault.node')
const DIGEST = `${ADDON}.sources`
// Far above the build's time: about 15 s on the dependencies cargo test built, 57-85 s from nothing.
const BUILD_TIMEOUT_MS = 15 * 60 * 1000

/** A digest of the sources the addon is built from. */
function sourceDigest () {
  const hash = crypto.createHash('sha256')
  const visit = (at) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const file = path.join(at, entry.name)
      if (entry.isDirectory()) visit(file)
      else hash.update(file).update(fs.readFileSync(file))
    }
  }
  visit(path.join(ROOT, 'src'))
  for (const file of ['Cargo.toml', 'Cargo.lock', 'build.rs']) hash.update(file).update(fs.readFileSync(path.join(ROOT, file)))
  return hash.digest('hex')
}

/** { file } of the fault-injection addon, built (or rebuilt) with cargo; or { skip: why }. */
function faultAddon () {
  if (process.platform !== 'linux') return { skip: 'the fault-injection build is set up for Linux only' }
  // Without the ASan run's preloaded runtime (asan/run.sh): rustc hangs at start with it.
  const env = { ...process.env }
  delete env.LD_PRELOAD
  delete env.ASAN_OPTIONS
  const cargo = spawnSync('cargo', ['build', '--lib', '--features', 'fault-injection'], { cwd: ROOT, encoding: 'utf8', env, timeout: BUILD_TIMEOUT_MS })
  const digest = sourceDigest()
  if (cargo.error && cargo.error.code !== 'ENOENT') {
    // A build that hangs (rustc did, under the ASan run's LD_PRELOAD) fails the test here
    // instead of holding CI until its own limit.
    throw new Error(`cargo build --features fault-injection: ${cargo.error.code === 'ETIMEDOUT' ? `not done in ${BUILD_TIMEOUT_MS / 60000} minutes` : cargo.error.message}\n${(cargo.stderr || '').slice(-3000)}`)
  }
  if (cargo.error) {
    // No cargo here (the Debian 13 root of scripts/test-matrix.sh): a build the host made
    // from these very sources will do.
    const built = fs.existsSync(DIGEST) ? fs.readFileSync(DIGEST, 'utf8') : null
    if (!fs.existsSync(ADDON) || built !== digest) {
      return { skip: `no cargo (${cargo.error.code}) and no fault-injection build of these sources in ${TARGET}: run the tests once where cargo is` }
    }
    return { file: ADDON }
  }
  if (cargo.status !== 0) throw new Error(`cargo build --features fault-injection failed:\n${cargo.stderr.slice(-3000)}`)
  // Copied aside and renamed over: a process that still has the old file loaded keeps it.
  fs.mkdirSync(TARGET, { recursive: true })
  fs.copyFileSync(BUILT, `${ADDON}.${process.pid}`)
  fs.renameSync(`${ADDON}.${process.pid}`, ADDON)
  fs.writeFileSync(DIGEST, digest)
  return { file: ADDON }
}

module.exports = { faultAddon }
