'use strict'
// The drop-ins' errors under ultimate-express answered as Express answers them.

/**
 * Before next(err) under ultimate-express: its default error answer uses res.statusCode
 * (500 unless changed) and sends none of the error's `headers`, where Express's
 * (finalhandler) takes both from the error. Set on `res`, they make the same answer under
 * either: a 503 ERR_BODY_BUDGET keeps its Retry-After. A header the response refuses is
 * left out.
 */
function asExpressAnswers (res, err) {
  if (res.statusCode !== 200 || err === null || typeof err !== 'object' || typeof err.status !== 'number') return
  res.statusCode = err.status
  const headers = err.headers
  if (headers === null || typeof headers !== 'object') return
  for (const name of Object.keys(headers)) {
    try {
      res.setHeader(name, headers[name])
    } catch {}
  }
}

module.exports = { asExpressAnswers }
