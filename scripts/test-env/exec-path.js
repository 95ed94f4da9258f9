'use strict'
// Preloaded (NODE_OPTIONS=--require) under qemu-user: process.execPath is the arm64 node,
// which this x64 host cannot exec without binfmt_misc (not mounted in this sandbox), so
// node --test's child processes, and tests that spawn Node, would fail with ENOEXEC.
// UWS_BODY_EXEC_PATH names a script that starts that node through qemu instead.
if (process.env.UWS_BODY_EXEC_PATH) process.execPath = process.env.UWS_BODY_EXEC_PATH
