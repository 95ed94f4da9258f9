'use strict'
// Runs a script in a child Node process, for tests whose failure would be a crash
// (SIGSEGV, SIGABRT): the test sees the signal instead of dying with the child.
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')

/**
 * Runs `source` (CommonJS; `ROOT` is the package folder) with --expose-gc (unless `gc` is
 * false) and returns { status, signal, stdout, stderr }. The child inherits LD_PRELOAD and
 * ASAN_OPTIONS, so under asan/run.sh it is checked too.
 */
function runChild (source, { timeout = 60000, env = {}, gc = true } = {}) {
  const script = `const ROOT = ${JSON.stringify(ROOT)};\n${source}`
  return spawnSync(process.execPath, [...(gc ? ['--expose-gc'] : []), '-e', script], {
    encoding: 'utf8',
    timeout,
    env: { ...process.env, ...env },
    maxBuffer: 16 * 1024 * 1024
  })
}

/** What a child's end looked like, for assertion messages. */
const ending = (r) => `status ${r.status} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr.slice(-3000)}`

module.exports = { runChild, ending, ROOT }
