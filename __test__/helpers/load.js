'use strict'
// How much load the suite's heaviest tests put on: UWS_BODY_TEST_LOAD=light runs the same
// tests, asserting the same things, on fewer tries and files. The test matrix sets it
// under CI in every cell but Node 24 with uWS 20.57, the stack users run, which runs in
// full. Unset, everything is full.
const light = process.env.UWS_BODY_TEST_LOAD === 'light'
if (!['', 'light', 'full'].includes(process.env.UWS_BODY_TEST_LOAD || '')) {
  throw new Error(`UWS_BODY_TEST_LOAD=${process.env.UWS_BODY_TEST_LOAD}: light or full`)
}

module.exports = {
  // 'light' or 'full', as checked above (scripts/run-tests.js says which in its summary).
  LOAD: light ? 'light' : 'full',
  // early-answer.test.js: refused uploads per API, client, framing and connection kind.
  EARLY_ANSWER_TRIES: light ? 5 : 20,
  // early-answer.test.js: uploads refused at their end (a wrong digest) per API, client,
  // framing and connection kind: the answer follows the last byte, no race to catch.
  EARLY_ANSWER_DIGEST_TRIES: light ? 2 : 4,
  // s3-backpressure.test.js: files of 10 MiB in the form of many files, and the single
  // file's MiB (S3_BACKPRESSURE_MIB sets that one in any load).
  S3_MANY_FILES: light ? 20 : 50,
  S3_SINGLE_MIB: Number(process.env.S3_BACKPRESSURE_MIB) || (light ? 256 : 1024)
}
