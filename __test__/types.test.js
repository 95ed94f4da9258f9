'use strict'
// The types agree with the documentation and reject misuse: tsc --noEmit --strict over
// __test__/types (usage.ts: every export as the docs use it, plus @ts-expect-error lines
// for misuse; esm.mts: the ESM entry) and over every js/ts code block of README.md and
// docs/*.md, extracted here on each run so that they and this test cannot drift apart.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const TYPES = path.join(__dirname, 'types')
const EXTENSIONS = { js: '.js', javascript: '.js', cjs: '.cjs', mjs: '.mjs', ts: '.ts', typescript: '.ts', mts: '.mts' }
const FENCE = /^```([a-z]*)[^\n]*\n([\s\S]*?)^```[ \t]*$/gm
const { REPO } = require('./helpers/repository')

const DOCUMENTS = ['README.md', ...fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]

/** The documents' code blocks that are JavaScript or TypeScript, with the line each starts on. */
function readmeBlocks () {
  const blocks = []
  for (const file of DOCUMENTS) {
    const text = fs.readFileSync(path.join(REPO, file), 'utf8')
    for (const match of text.matchAll(FENCE)) {
      const ext = EXTENSIONS[match[1]]
      if (ext === undefined) continue
      // A block marked `not run` (docs.test.js) is a fragment, or needs a service the
      // suite runs elsewhere (S3): it is not type-checked alone either.
      const before = text.slice(Math.max(0, match.index - 300), match.index).trimEnd()
      if (/<!-- not run: [^>]*-->$/.test(before)) continue
      const line = text.slice(0, match.index).split('\n').length + 1
      blocks.push({ file, ext, line, code: match[2] })
    }
  }
  return blocks
}

function tsc (project) {
  const bin = require.resolve('typescript/bin/tsc')
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, '-p', project, '--pretty', 'false'], { timeout: 120000 }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, output: stdout + stderr })
    })
  })
}

test('the documents\' js blocks exist and are all found', () => {
  const blocks = readmeBlocks()
  assert.ok(blocks.length >= 3, `only ${blocks.length} blocks found`)
  assert.ok(blocks.some((b) => b.code.includes('BodyAccumulator(')), 'the BodyAccumulator snippet')
  assert.ok(blocks.some((b) => b.code.includes('ultimate-express')), 'the ultimate-express snippet')
})

test('tsc --strict: usage.ts, esm.mts and every code block of the documents type-check', async () => {
  // A directory inside the package, so that 'uws-body' resolves to this package itself
  // (through package.json "exports", as it does for users). Git ignores it.
  const dir = fs.mkdtempSync(path.join(TYPES, '.readme-'))
  try {
    const blocks = readmeBlocks()
    const files = blocks.map((block, i) => {
      const name = `readme-${i}-${block.file.replace(/\W/g, '_')}-line-${block.line}${block.ext}`
      fs.writeFileSync(path.join(dir, name), block.code)
      return name
    })
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      extends: '../tsconfig.json',
      files: ['../usage.ts', '../esm.mts', ...files]
    }))
    const { code, output } = await tsc(dir)
    // readme-<i>-line-<n>.js(3,5): error … names README line n + 3 - 1.
    const readable = output.replace(/\S*readme-\d+-(\w+)-line-(\d+)\.\w+\((\d+),(\d+)\)/g, (_, file, start, line, col) => `${file.replace(/_md$/, '.md').replace(/^docs_/, 'docs/')}:${Number(start) + Number(line) - 1}:${col}`)
    assert.equal(code, 0, readable)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// Each API's options interface in index.d.ts against the names the API takes: an unknown
// name is a TypeError listing the known ones (lib/plan/check.js checkNames), read from here.
const apiOptions = () => {
  const uwsBody = require('..')
  const res = () => ({ onData () {}, onAborted () {}, pause () {}, resume () {}, writeStatus () { return this }, writeHeader () { return this }, end () {}, cork (f) { f() } })
  const headers = { 'content-type': 'multipart/form-data; boundary=b', 'content-length': '10' }
  return {
    ReadBodyOptions: (o) => uwsBody.readBody(res(), headers, o),
    ReadTextOptions: (o) => uwsBody.readText(res(), headers, o),
    BodyStreamOptions: (o) => uwsBody.bodyStream(res(), headers, o),
    ReadMultipartOptions: (o) => uwsBody.readMultipart(res(), headers, o),
    ParserOptions: (o) => uwsBody.raw(o),
    JsonOptions: (o) => uwsBody.json(o),
    TextOptions: (o) => uwsBody.text(o),
    UrlencodedOptions: (o) => uwsBody.urlencoded(o),
    MultipartOptions: (o) => uwsBody.multipart(o),
    MultipartLimits: (o) => uwsBody.multipart({ limits: o }),
    DiskStorageOptions: (o) => uwsBody.multipart.diskStorage(o),
    LingerOptions: (o) => uwsBody.json({ linger: o }),
    AnswerErrorOptions: (o) => uwsBody.answerError(res(), new Error('x'), o)
  }
}

test('each options interface of index.d.ts names exactly the options its API takes', () => {
  const ts = require('typescript')
  const file = path.join(__dirname, '..', 'index.d.ts')
  const program = ts.createProgram([file], { strict: true, noEmit: true, types: [], noResolve: true, noLib: true })
  const checker = program.getTypeChecker()
  const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)))
  for (const [name, use] of Object.entries(apiOptions())) {
    const symbol = exports.find((s) => s.name === name)
    assert.ok(symbol, `index.d.ts exports ${name}`)
    // Inherited members included (ReadTextOptions extends ReadBodyOptions...).
    const typed = checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol)).map((p) => p.name).sort()
    let taken
    assert.throws(() => use({ zzzzzzzzzz: 1 }), (err) => {
      taken = /; known: (.*)$/.exec(err.message)?.[1].split(', ').sort()
      return err instanceof TypeError && taken !== undefined
    }, name)
    assert.deepEqual(typed, taken, `${name}: the types' names (actual) and the code's (expected)`)
  }
})
