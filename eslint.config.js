'use strict'
// The JS linter and formatter (`npm run lint`; `npm run lint -- --fix` formats):
// neostandard, standard's style as an ESLint flat config. TypeScript (index.d.ts and the
// type tests) is checked by tsc --strict instead (__test__/types.test.js).
const neostandard = require('neostandard')

module.exports = [
  ...neostandard({
    ignores: ['target/**', 'fuzz/**', 'npm/**', 'node_modules/**', '**/*.ts', '**/*.mts']
  }),
  {
    rules: {
      // It cannot see a loop's condition change inside the functions the loop calls
      // (a read() that moves a state machine on, an awaited callback that counts).
      'no-unmodified-loop-condition': 'off'
    }
  }
]
