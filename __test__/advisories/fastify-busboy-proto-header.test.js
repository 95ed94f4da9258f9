'use strict'
// @fastify/busboy 3.2.1-3.2.6: a part header named __proto__, which must stay a header
// (never a prototype, never what a Content-Type is read from). Trigger: a header line
// `__proto__: …` on a field and on a file, before and after Content-Type; the neighbours:
// headers named constructor, hasOwnProperty, toString, and __proto__ as a
// Content-Disposition or Content-Type parameter. Each: the part read as sent, no key
// added to Object.prototype.
const { advisory, form } = require('../helpers/advisory')
const { multipart } = require('../..')

const part = (head, value = 'v') => form([{ head: head.map((l) => l + '\r\n').join(''), value }])
const FIELD = 'Content-Disposition: form-data; name="a"'
const FILE = 'Content-Disposition: form-data; name="f"; filename="a.txt"'
const field = { status: 200, body: { a: 'v' } }
const fileAs = (mimetype) => ({ status: 200, body: {}, files: [{ fieldname: 'f', originalname: 'a.txt', mimetype, size: 1 }] })

advisory(__filename, {
  routes: { form: { middleware: () => multipart().any(), read: () => ({}) } },
  cases: [
    { name: 'a field with a header named __proto__', route: 'form', body: part([FIELD, '__proto__: x']), want: field },
    { name: 'a field with a __proto__ header holding JSON', route: 'form', body: part([FIELD, '__proto__: {"polluted":"yes"}']), want: field },
    { name: 'a file with __proto__ after Content-Type', route: 'form', body: part([FILE, 'Content-Type: text/plain', '__proto__: {"content-type":"text/html"}']), want: fileAs('text/plain') },
    { name: 'a file with __proto__ before Content-Type', route: 'form', body: part([FILE, '__proto__: x', 'Content-Type: image/png']), want: fileAs('image/png') },
    { name: 'a file with __proto__ and no Content-Type', route: 'form', body: part([FILE, '__PROTO__: x']), want: fileAs('text/plain') },
    { name: 'headers named constructor, hasOwnProperty, toString', route: 'form', body: part([FIELD, 'constructor: x', 'hasOwnProperty: y', 'toString: z', 'valueOf: w']), want: field },
    { name: '__proto__ and constructor as Content-Disposition parameters', route: 'form', body: part([FIELD + '; __proto__=x; constructor=y']), want: field },
    { name: '__proto__ as a Content-Type parameter', route: 'form', body: part([FILE, 'Content-Type: text/plain; __proto__=x; charset=utf-8']), want: fileAs('text/plain') }
  ]
})
