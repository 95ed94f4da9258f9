'use strict'
// Builds (once, into target/bench) and loads the kept-Buffer floor's addon
// (kept-floor.c): cc and Node's N-API headers, from this Node's own include/node or the
// one next to its binary (npm's node-linux-* packages ship them). N-API is stable across
// Node versions, so one build serves Node 20 and 24.
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..', '..')
const SOURCE = path.join(__dirname, 'kept-floor.c')
const OUT = path.join(ROOT, 'target', 'bench', 'kept-floor.node')

function headers () {
  const candidates = [path.join(path.dirname(process.execPath), '..', 'include', 'node'), '/usr/include/node', '/usr/local/include/node']
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'node_api.h')))
  if (!found) throw new Error(`bench: the kept-Buffer floor needs Node's N-API headers (node_api.h), looked in ${candidates.join(', ')}`)
  return found
}

function load () {
  if (!fs.existsSync(OUT) || fs.statSync(OUT).mtimeMs < fs.statSync(SOURCE).mtimeMs) {
    fs.mkdirSync(path.dirname(OUT), { recursive: true })
    const cc = spawnSync('cc', ['-O2', '-shared', '-fPIC', '-I', headers(), '-o', OUT, SOURCE], { encoding: 'utf8' })
    if (cc.status !== 0) throw new Error(`bench: building the kept-Buffer floor failed: ${cc.error || cc.stderr}`)
  }
  return require(OUT)
}

module.exports = { load }
