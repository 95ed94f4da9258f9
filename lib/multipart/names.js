'use strict'
// What readMultipart and multipart() both do to the names and values the native parser
// hands over: names come as latin1 strings (one char per byte as sent), busboy's way.

/** busboy's basename: what follows the last / or \, and '' for . and .. */
function basename (name) {
  for (let i = name.length - 1; i >= 0; --i) {
    const c = name.charCodeAt(i)
    if (c === 0x2f || c === 0x5c) {
      name = name.slice(i + 1)
      break
    }
  }
  return name === '..' || name === '.' ? '' : name
}

// Browsers escape LF, CR and " in names as %0A, %0D and %22 (HTML's multipart/form-data
// serialisation); busboy leaves them so, multer 2.5 turns exactly these three back
// (a literal `50%.pdf` stays).
const ESCAPED = /%0A|%0D|%22/gi
const unescapeName = (s) => s.indexOf('%') === -1 ? s : s.replace(ESCAPED, (m) => m[2] === 'A' || m[2] === 'a' ? '\n' : m[2] === '2' ? '"' : '\r')

/** A field in a charset the native side does not decode: TextDecoder's, else UTF-8 (busboy). */
function decodeField (buffer, charset) {
  try {
    return new TextDecoder(charset).decode(buffer)
  } catch {
    return buffer.toString('utf8')
  }
}

module.exports = { basename, unescapeName, decodeField }
