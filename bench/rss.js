'use strict'
// A server's resident memory for /stats: VmRSS now and VmHWM, its peak since the last
// resetPeak() (Linux: writing 5 to clear_refs sets the peak back to the current RSS).
// Elsewhere the figures are null and resetting does nothing.
const fs = require('node:fs')

function memory () {
  try {
    const status = fs.readFileSync('/proc/self/status', 'utf8')
    const kib = (name) => Number(new RegExp(`^${name}:\\s*(\\d+) kB`, 'm').exec(status)[1]) * 1024
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') }
  } catch {
    return { rss: null, hwm: null }
  }
}

function resetPeak () {
  try { fs.writeFileSync('/proc/self/clear_refs', '5') } catch {}
}

module.exports = { memory, resetPeak }
