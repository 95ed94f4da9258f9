// require('uws-body') itself, not a second instance: the names Node finds in index.js's
// module.exports, and module.exports as the default. Nothing to keep in step by hand.
export * from './index.js'
export { default } from './index.js'
