'use strict'
// npm's `prepare`: builds the addon from source for `npm install` in a clone of the
// repository, and nothing for `npm pack` / `npm publish`, whose packages hold prebuilt
// binaries (npm/<platform>) and must not need Rust.
const { spawnSync } = require('node:child_process')

const command = process.env.npm_command
if (command === 'pack' || command === 'publish') {
  // stderr: `npm pack --json` prints its JSON on stdout, which must stay JSON alone.
  console.error(`uws-body: no build for npm ${command} (the packages hold prebuilt binaries)`)
  process.exit(0)
}
const npm = process.env.npm_execpath
const args = npm ? [npm, 'run', 'build'] : null
const r = args ? spawnSync(process.execPath, args, { stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' })
process.exit(r.status === null ? 1 : r.status)
