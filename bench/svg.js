'use strict'
// bench/results-node<major>.svg: time per body against body size, log-log, one line per contender.

const COLORS = { a: '#d62728', b: '#1f77b4', c: '#2ca02c', d: '#7f7f7f' }
const LABELS = { a: '(a) copy+concat', b: '(b) JS prealloc', c: '(c) uws-body', d: '(d) warm memcpy floor' }

function chart (rows, title) {
  const W = 720; const H = 440; const L = 70; const R = 200; const T = 40; const B = 50
  const sizes = rows.map((r) => Math.max(r.size, 1))
  const times = rows.flatMap((r) => ['a', 'b', 'c', 'd'].map((k) => r[k] * 1e6))
  const lx0 = Math.log10(Math.min(...sizes)); const lx1 = Math.log10(Math.max(...sizes))
  const ly0 = Math.floor(Math.log10(Math.min(...times))); const ly1 = Math.ceil(Math.log10(Math.max(...times)))
  const x = (s) => L + (Math.log10(Math.max(s, 1)) - lx0) / (lx1 - lx0) * (W - L - R)
  const y = (us) => T + (1 - (Math.log10(us) - ly0) / (ly1 - ly0)) * (H - T - B)
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="22" font-size="14">${title}</text>`]
  for (let e = ly0; e <= ly1; e++) {
    const label = e >= 3 ? `${10 ** (e - 3)} ms` : `${10 ** e} us`
    out.push(`<line x1="${L}" x2="${W - R}" y1="${y(10 ** e)}" y2="${y(10 ** e)}" stroke="#ddd"/>`,
      `<text x="${L - 6}" y="${y(10 ** e) + 4}" text-anchor="end">${label}</text>`)
  }
  for (const r of rows) {
    const s = Math.max(r.size, 1)
    const label = r.size >= 1 << 20 ? `${r.size / (1 << 20)} MiB` : r.size >= 1024 ? `${r.size / 1024} KiB` : `${r.size} B`
    out.push(`<line x1="${x(s)}" x2="${x(s)}" y1="${T}" y2="${H - B}" stroke="#eee"/>`,
      `<text x="${x(s)}" y="${H - B + 16}" text-anchor="middle">${label}</text>`)
  }
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">body size (log)</text>`,
    `<text x="16" y="${(T + H - B) / 2}" transform="rotate(-90 16 ${(T + H - B) / 2})" text-anchor="middle">time per body (log)</text>`)
  let ly = T + 10
  for (const k of ['a', 'b', 'c', 'd']) {
    const pts = rows.map((r) => `${x(Math.max(r.size, 1)).toFixed(1)},${y(r[k] * 1e6).toFixed(1)}`).join(' ')
    out.push(`<polyline fill="none" stroke="${COLORS[k]}" stroke-width="2" points="${pts}"/>`)
    for (const r of rows) out.push(`<circle cx="${x(Math.max(r.size, 1)).toFixed(1)}" cy="${y(r[k] * 1e6).toFixed(1)}" r="3" fill="${COLORS[k]}"/>`)
    out.push(`<line x1="${W - R + 15}" x2="${W - R + 40}" y1="${ly}" y2="${ly}" stroke="${COLORS[k]}" stroke-width="2"/>`,
      `<text x="${W - R + 46}" y="${ly + 4}">${LABELS[k]}</text>`)
    ly += 20
  }
  out.push('</svg>')
  return out.join('\n')
}

module.exports = { chart }
