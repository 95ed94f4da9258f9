// The ESM entry (index.mjs) has the same types: named and default imports.
import uwsBody, { readBody, json, BodyError, type ReadBodyOptions } from 'uws-body'

const options: ReadBodyOptions = { limit: '1mb' }
const same: typeof readBody = uwsBody.readBody
console.log(options, same, json(), BodyError)
