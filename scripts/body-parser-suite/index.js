'use strict'
// body-parser's export as its own tests require it (`require('..')` from test/): uws-body's
// four parsers in its place, from the copy __test__/body-parser-suite.test.js names (this
// repository, or the installed one in the package test).
const { json, raw, text, urlencoded } = require(process.env.UWS_BODY_UNDER_TEST)

module.exports = { json, raw, text, urlencoded }
