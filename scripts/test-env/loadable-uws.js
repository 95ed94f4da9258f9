'use strict'
// The uWS build a Node process here can load, for the scripts that start uWS servers
// outside the test runner (soak/, bench/): `uWebSockets.js` (20.57) where its binary
// loads (glibc 2.38, Node 20-25), else the 20.30 fork on Node <= 20, swapped in by
// test-env/uws.js. The env it returns is what the processes those scripts fork inherit.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const FORK = path.join(ROOT, 'node_modules', 'uws-fork-20.30')

/** True when a Node process with `env` loads uWS: its native binary, not the fork's JS fallback. */
function loads (env) {
  const probe = "const u = require('uWebSockets.js'); if (typeof u.App !== 'function' || !Object.keys(require.cache).some((f) => f.endsWith('.node'))) process.exit(1)"
  return spawnSync(process.execPath, ['-e', probe], { env, stdio: 'ignore', cwd: ROOT }).status === 0
}

/** { env, build } for the first build that loads here, or { why }. */
function loadableUws (env = process.env) {
  if (loads(env)) {
    let version = '(version unknown)'
    try { version = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'uWebSockets.js', 'package.json'), 'utf8')).version } catch {}
    return { env, build: `uWS ${version}` }
  }
  const major = Number(process.versions.node.split('.')[0])
  if (major <= 20 && fs.existsSync(FORK)) {
    const forked = {
      ...env,
      UWS_BODY_UWS_DIR: FORK,
      NODE_OPTIONS: `${env.NODE_OPTIONS || ''} --require=${path.join(__dirname, 'uws.js')}`.trim()
    }
    if (loads(forked)) return { env: forked, build: 'the uWS 20.30 fork' }
  }
  return { why: `no uWS build loads on Node ${process.version} here (20.57 needs glibc 2.38; the 20.30 fork, Node <= 20: npm install)` }
}

/** Sets process.env to the build that loads, so forked servers load it; throws if none. */
function useLoadableUws () {
  const found = loadableUws()
  if (!found.env) throw new Error(found.why)
  if (found.env !== process.env) Object.assign(process.env, found.env)
  return found.build
}

module.exports = { loadableUws, useLoadableUws }
