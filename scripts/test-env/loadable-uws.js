'use strict'
// The uWS build a Node process here can load, for the scripts that start uWS servers
// outside the test runner (soak/, bench/): `uWebSockets.js` (20.57) where its binary
// loads (glibc 2.38, Node 20-25), else the 20.30 fork on Node <= 20, swapped in by
// test-env/uws.js. The env it returns is what the processes those scripts fork inherit.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const REPO = path.join(__dirname, '..', '..')

/** True when a Node process with `env` loads uWS: its native binary, not the fork's JS fallback. */
function loads (env, root) {
  const probe = "const u = require('uWebSockets.js'); if (typeof u.App !== 'function' || !Object.keys(require.cache).some((f) => f.endsWith('.node'))) process.exit(1)"
  return spawnSync(process.execPath, ['-e', probe], { env, stdio: 'ignore', cwd: root }).status === 0
}

/** { env, build } for the first build that loads from `root` (a folder whose node_modules holds them), or { why }. */
function loadableUws (env = process.env, root = REPO) {
  if (loads(env, root)) {
    let version = '(version unknown)'
    try { version = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'uWebSockets.js', 'package.json'), 'utf8')).version } catch {}
    return { env, build: `uWS ${version}` }
  }
  const major = Number(process.versions.node.split('.')[0])
  const fork = path.join(root, 'node_modules', 'uws-fork-20.30')
  if (major <= 20 && fs.existsSync(fork)) {
    const forked = {
      ...env,
      UWS_BODY_UWS_DIR: fork,
      NODE_OPTIONS: `${env.NODE_OPTIONS || ''} --require=${path.join(__dirname, 'uws.js')}`.trim()
    }
    if (loads(forked, root)) return { env: forked, build: 'the uWS 20.30 fork' }
  }
  return { why: `no uWS build loads on Node ${process.version} here (20.57 needs glibc 2.38; the 20.30 fork, Node <= 20: npm install)` }
}

/**
 * Makes this process, and the processes it starts (they inherit process.env), load the
 * build that loads from `root`; returns its name, throws if none does.
 */
function useLoadableUws (root = REPO) {
  const found = loadableUws(process.env, root)
  if (!found.env) throw new Error(found.why)
  if (found.env !== process.env) {
    Object.assign(process.env, found.env)
    require('./uws.js')
  }
  return found.build
}

module.exports = { loadableUws, useLoadableUws }
