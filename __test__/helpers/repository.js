'use strict'
// The repository's own files (Rust sources, docs/, the crate's manifests), which the tests
// that check the repository against itself read. The package test (scripts/test-package.sh)
// runs this folder from an installed copy, which holds only what npm ships: it names the
// repository in UWS_BODY_TEST_REPO.
const path = require('node:path')

const REPO = process.env.UWS_BODY_TEST_REPO || path.join(__dirname, '..', '..')

module.exports = { REPO }
