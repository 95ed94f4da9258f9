'use strict'
// Preloaded for the suite's second run: the test files choose their zstd tests by
// `'createZstdDecompress' in zlib` (Node >= 22.15). uws-body decodes zstd itself on every
// Node, so the other branch is run too, and every test runs on any Node.
const zlib = require('node:zlib')

if ('createZstdDecompress' in zlib) delete zlib.createZstdDecompress
else zlib.createZstdDecompress = () => { throw new Error('Node has no zstd here: only the test files ask for this') }
