'use strict'
// Required first by every benchmark process: with UWS_BODY_BENCH_TUNE_GC=1 (npm run bench
// -- --tune-gc) it calls tuneGc(), the application's opt-in, before anything is measured.
if (process.env.UWS_BODY_BENCH_TUNE_GC === '1') require('..').tuneGc()
