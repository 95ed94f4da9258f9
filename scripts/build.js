'use strict'
// Builds the addon from source with cargo and puts it where index.js loads it.
// There are no prebuilt binaries: `npm install` needs Rust (https://rustup.rs).
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const profile = process.argv.includes('--debug') ? 'debug' : 'release'
const args = ['build', '--lib', '--message-format=short']
if (profile === 'release') args.push('--release')

try {
  execFileSync('cargo', args, { cwd: root, stdio: 'inherit' })
} catch (err) {
  console.error(
    err.code === 'ENOENT'
      ? 'uws-body: cargo was not found. Install Rust (https://rustup.rs) and run npm install again.'
      : 'uws-body: cargo build failed (see above).'
  )
  process.exit(1)
}

const names = { linux: 'libuws_body.so', darwin: 'libuws_body.dylib', win32: 'uws_body.dll' }
const built = path.join(
  process.env.CARGO_TARGET_DIR || path.join(root, 'target'),
  profile,
  names[process.platform] || names.linux
)
fs.copyFileSync(built, path.join(root, 'uws-body.node'))
