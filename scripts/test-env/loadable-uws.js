'use strict'
// Which uWS build a Node process here loads: the one rule for the test runner
// (scripts/run-tests.js) and the scripts that start uWS servers outside it (soak/, bench/,
// scripts/test-package.sh). Both builds are devDependencies: `uWebSockets.js` is 20.57
// (its binaries need glibc 2.38 and Node 20-25), the 20.30 fork (Node <= 20, any glibc) is
// installed under another name and swapped in by ./uws.js, so that every require of
// 'uWebSockets.js' (ultimate-express's and hyper-express's too) loads it.
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const REPO = path.join(__dirname, '..', '..')

// build -> the package name it is installed under (package.json devDependencies), in the
// order they are tried.
const BUILDS = { 20.57: 'uWebSockets.js', '20.30': 'uws-fork-20.30' }

/** The folder of package `name` as code in `from` finds it, or null. */
function packageDir (name, from) {
  try {
    // Not `name/package.json`: a package's `exports` may hide it (20.57's does).
    let at = path.dirname(require.resolve(name, { paths: [from] }))
    while (!fs.existsSync(path.join(at, 'package.json'))) {
      const up = path.dirname(at)
      if (up === at) return null
      at = up
    }
    return at
  } catch {
    return null
  }
}

/** { dir, version } if `build`'s native binary loads on this Node from `from`, else { why }. */
function probe (build, from = REPO) {
  const pkg = packageDir(BUILDS[build], from)
  if (pkg === null) return { why: `${BUILDS[build]} is not installed (npm install)` }
  // A native binary of this package must be what loaded: the fork falls back to a JS
  // imitation of uWS where its binary does not load (on Node 24, say), and a server run
  // against that proves nothing. That imitation loads other packages' binaries (ws's
  // bufferutil), so any .node in the cache is not enough.
  const check = `const uws = require(${JSON.stringify(pkg)});
    const own = ${JSON.stringify(pkg + path.sep)};
    if (!Object.keys(require.cache).some((f) => f.startsWith(own) && f.endsWith('.node'))) throw new Error('no native binary of ' + own + ' loaded');
    if (typeof uws.App !== 'function') throw new Error('no App()')`
  const r = spawnSync(process.execPath, ['-e', check], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  if (r.status !== 0) {
    const lines = r.stderr.split('\n').map((l) => l.trim())
    const line = lines.find((l) => /GLIBC_[0-9.]+' not found/.test(l)) || lines.find((l) => /^(\w*Error)[: ]/.test(l)) || r.stderr.trim()
    return { why: line.replace(/^Error: /, '').slice(0, 300) }
  }
  const version = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version
  return { dir: pkg, version }
}

/** `env` made to load `build` (found at `dir` by probe()) wherever 'uWebSockets.js' is required. */
function envFor (build, dir, env = process.env) {
  if (BUILDS[build] === 'uWebSockets.js') return env
  return {
    ...env,
    UWS_BODY_UWS_DIR: dir,
    NODE_OPTIONS: `${env.NODE_OPTIONS || ''} --require=${path.join(__dirname, 'uws.js')}`.trim()
  }
}

/** { env, build } for the first build that loads from `root` (a folder whose node_modules holds them), or { why }. */
function loadableUws (env = process.env, root = REPO) {
  const tried = []
  for (const build of Object.keys(BUILDS)) {
    const found = probe(build, root)
    if (found.dir) return { env: envFor(build, found.dir, env), build: `uWS ${found.version}` }
    tried.push(`${build}: ${found.why}`)
  }
  return { why: `no uWS build loads on Node ${process.version} here (${tried.join('; ')})` }
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

module.exports = { BUILDS, probe, envFor, loadableUws, useLoadableUws }
