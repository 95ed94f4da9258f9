'use strict'
// Finds and loads the native addon. Three places, in this order:
//   1. the file named by UWS_BODY_NATIVE_PATH, when it is set: then it is the only place
//      tried, so a wrong path is an error rather than a quiet fall back to another binary;
//   2. uws-body.<platform>.node in the package folder: what `npm install` builds from
//      source in a clone of the repository (`napi build --platform`);
//   3. the platform package uws-body-<platform>, which npm installs as an optional
//      dependency of the published package.
// If none loads, one error lists every attempt with its reason, the platform detected
// and how to build from source.
const fs = require('node:fs')
const path = require('node:path')

const ENV = 'UWS_BODY_NATIVE_PATH'
const PACKAGE_DIR = path.join(__dirname, '..', '..')

/**
 * True on a musl libc (Alpine), false on glibc. The same three probes, cheapest first,
 * as napi-rs's generated loader: ldd's text, then the process report's glibc version and
 * loaded libraries, then `ldd --version`.
 */
function isMusl () {
  try {
    return fs.readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch {}
  try {
    if (process.report) {
      // The network part of a report can take seconds (reverse DNS); none of it is needed.
      if ('excludeNetwork' in process.report) process.report.excludeNetwork = true
      let report = process.report.getReport()
      if (typeof report === 'string') report = JSON.parse(report)
      if (report.header && report.header.glibcVersionRuntime) return false
      if (Array.isArray(report.sharedObjects)) {
        return report.sharedObjects.some((f) => f.includes('libc.musl-') || f.includes('ld-musl-'))
      }
    }
  } catch {}
  try {
    return require('node:child_process').execSync('ldd --version', { encoding: 'utf8', stdio: 'pipe' }).includes('musl')
  } catch {
    return false
  }
}

/** The napi-rs platform id (`linux-x64-gnu`, `darwin-arm64`, ...), or null if none is built for it. */
function platformId (platform = process.platform, arch = process.arch, musl = isMusl) {
  if (arch !== 'x64' && arch !== 'arm64') return null
  if (platform === 'darwin') return `darwin-${arch}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  if (platform === 'linux') return `linux-${arch}-${musl() ? 'musl' : 'gnu'}`
  return null
}

/** Why a require failed, in one line. */
function reason (err, name) {
  if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`'${name}'`)) {
    return path.isAbsolute(name) ? 'not found' : 'not installed'
  }
  return String((err && err.message) || err).split('\n')[0]
}

function load () {
  const id = platformId()
  const attempts = []
  const attempt = (what, name) => {
    try {
      return require(name)
    } catch (err) {
      attempts.push(`${what}: ${reason(err, name)}`)
      return null
    }
  }

  const explicit = process.env[ENV]
  let binding = null
  if (explicit) {
    binding = attempt(`${ENV}=${explicit}`, path.resolve(explicit))
  } else if (id) {
    const local = path.join(PACKAGE_DIR, `uws-body.${id}.node`)
    binding =
      attempt(`${local} (built from source)`, local) ||
      attempt(`uws-body-${id} (platform package)`, `uws-body-${id}`)
  } else {
    attempts.push(`no prebuilt binary exists for ${process.platform}-${process.arch}`)
  }
  if (binding) return binding

  const libc = process.platform === 'linux' ? (isMusl() ? ', musl' : ', glibc') : ''
  const help = []
  if (id && !explicit) {
    help.push(
      `Install the platform package: npm installs uws-body-${id} with uws-body unless ` +
        'optional dependencies are omitted (--omit=optional); `npm install ' +
        `uws-body-${id}\` adds it.`
    )
  }
  help.push(
    'Or build from source (needs Rust, https://rustup.rs): in a clone of the uws-body ' +
      `repository, \`npm install\` builds uws-body.${id || '<platform>'}.node; set ${ENV} ` +
      'to its path.'
  )
  const err = new Error(
    `uws-body: cannot load the native addon for ${id || 'this platform'} ` +
      `(${process.platform}, ${process.arch}${libc}; Node ${process.version}).\n` +
      `Tried:\n${attempts.map((a, i) => `  ${i + 1}. ${a}`).join('\n')}\n` +
      help.join('\n')
  )
  err.code = 'ERR_UWS_BODY_NATIVE'
  throw err
}

module.exports = load()
