import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const uwsBody = require('./index.js')

export const { BodyAccumulator, BodyError, bodyStream, bodyTimeout, readBody, readMultipart, readText, setMemoryBudget, setPoolLimit, stats, tuneGc, JS_TIER_MAX, FIRST_CHUNK_MAX, json, raw, text, urlencoded, multipart, MulterError, answerError } = uwsBody
export default uwsBody
