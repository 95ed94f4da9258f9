//! Header values with parameters, as busboy 1.6 parses them (lib/utils.js), over bytes:
//! `type/subtype; name=value` for `Content-Type`, `type; name=value` for
//! `Content-Disposition`. Header bytes are latin1 in busboy, one character a byte, so the
//! rules carry over byte for byte:
//! - parameters are `;`, optional spaces or tabs, a token name, `=`, and a token or a
//!   quoted string, with spaces or tabs allowed before each `;` and at the end; anything
//!   else (`a = b`, a trailing `;`, an unclosed quote) makes the whole value malformed;
//! - names are case-insensitive and the first of a name wins;
//! - in a quoted string only `\"` and `\\` are escapes: any other backslash is kept
//!   (Internet Explorer sends `filename="C:\dir\a.txt"` unescaped), and control
//!   characters other than tab are refused;
//! - in a `Content-Disposition` a name ending in `*` is an RFC 8187 extended value,
//!   `charset'language'percent-encoded`, decoded to UTF-8 here; a control character
//!   other than tab that its escapes decode to is refused as the raw byte is (busboy
//!   passes `%00` through as a NUL).

use std::borrow::Cow;

use super::grammar::{is_token, is_value};

/// `qdtext` and what may follow a backslash: tab, visible ASCII but `"` and `\`, and
/// every byte from 0x80 (obs-text).
fn is_qdtext(b: u8) -> bool {
    b == b'\t' || (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\' || b >= 0x80
}

/// RFC 2978 `mime-charset` characters, less `'` (busboy's table).
fn is_charset(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&+-^_`{}~".contains(&b)
}

/// RFC 8187 `attr-char`.
fn is_attr_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b)
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// A parameter's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value<'a> {
    /// A token or a quoted string (unescaped), as sent.
    Raw(Cow<'a, [u8]>),
    /// An extended value decoded to UTF-8; `None` for a charset other than UTF-8 and
    /// ISO-8859-1 (busboy decodes more through `TextDecoder`; such a parameter is ignored
    /// here, so `filename` is used instead of `filename*`).
    Extended(Option<String>),
}

/// Parses the parameters from `s[i..]`, calling `each(name, value)` in order (the caller
/// keeps the first of a name). `Err(())` for a malformed value.
pub(super) fn params<'a>(
    s: &'a [u8],
    mut i: usize,
    extended: bool,
    mut each: impl FnMut(&'a [u8], Value<'a>),
) -> Result<(), ()> {
    let len = s.len();
    while i < len {
        while i < len && is_space(s[i]) {
            i += 1;
        }
        if i == len {
            break;
        }
        if s[i] != b';' {
            return Err(());
        }
        i += 1;
        while i < len && is_space(s[i]) {
            i += 1;
        }
        if i == len {
            return Err(());
        }
        let name_start = i;
        while i < len && is_token(s[i]) {
            i += 1;
        }
        if i == len || s[i] != b'=' {
            return Err(());
        }
        let name = &s[name_start..i];
        i += 1; // '='
        if extended && name.last() == Some(&b'*') {
            let (value, next) = extended_value(s, i)?;
            each(name, Value::Extended(value));
            i = next;
            continue;
        }
        if i == len {
            return Err(());
        }
        if s[i] == b'"' {
            let (value, next) = quoted(s, i + 1)?;
            each(name, Value::Raw(value));
            i = next;
        } else {
            let start = i;
            while i < len && is_token(s[i]) {
                i += 1;
            }
            if i == start {
                return Err(());
            }
            each(name, Value::Raw(Cow::Borrowed(&s[start..i])));
        }
    }
    Ok(())
}

/// The quoted string opening before `s[i]`: its value and the index after the closing
/// quote.
fn quoted(s: &[u8], mut i: usize) -> Result<(Cow<'_, [u8]>, usize), ()> {
    let mut value: Option<Vec<u8>> = None;
    let mut start = i;
    let mut escaping = false;
    while i < s.len() {
        let b = s[i];
        if b == b'\\' {
            if escaping {
                // `\\`: the second backslash starts the next run.
                start = i;
                escaping = false;
            } else {
                value
                    .get_or_insert_with(Vec::new)
                    .extend_from_slice(&s[start..i]);
                escaping = true;
            }
        } else if b == b'"' {
            if escaping {
                // `\"`: the quote starts the next run.
                start = i;
                escaping = false;
            } else {
                let value = match value {
                    None => Cow::Borrowed(&s[start..i]),
                    Some(mut v) => {
                        v.extend_from_slice(&s[start..i]);
                        Cow::Owned(v)
                    }
                };
                return Ok((value, i + 1));
            }
        } else {
            if escaping {
                // Not an escape: the backslash stays.
                start = i - 1;
                escaping = false;
            }
            if !is_qdtext(b) {
                return Err(());
            }
        }
        i += 1;
    }
    Err(()) // no closing quote
}

/// `charset'language'value` from `s[i]` on (RFC 8187), to the first byte that is not an
/// `attr-char` or a `%XX`: the decoded value and where it stopped.
fn extended_value(s: &[u8], mut i: usize) -> Result<(Option<String>, usize), ()> {
    let len = s.len();
    let charset_start = i;
    while i < len && is_charset(s[i]) {
        i += 1;
    }
    if i == len || s[i] != b'\'' {
        return Err(());
    }
    let charset = &s[charset_start..i];
    i += 1;
    while i < len && s[i] != b'\'' {
        i += 1; // the language, unused
    }
    if i == len {
        return Err(());
    }
    i += 1;
    if i == len {
        return Err(());
    }
    let mut bytes = Vec::new();
    while i < len {
        let b = s[i];
        if is_attr_char(b) {
            bytes.push(b);
            i += 1;
        } else if b == b'%' {
            match (
                s.get(i + 1).and_then(|&h| hex(h)),
                s.get(i + 2).and_then(|&l| hex(l)),
            ) {
                // A control character decoded is refused as the raw byte would be in a
                // header value (tab aside): a NUL in a file name reaches file systems.
                (Some(h), Some(l)) if is_value(h << 4 | l) => {
                    bytes.push(h << 4 | l);
                    i += 3;
                }
                _ => return Err(()),
            }
        } else {
            break;
        }
    }
    Ok((decode_charset(charset, bytes), i))
}

/// busboy's decoders for the charsets of extended values: UTF-8 (invalid sequences
/// replaced, as `Buffer#utf8Slice` does) and the latin1 family.
fn decode_charset(charset: &[u8], bytes: Vec<u8>) -> Option<String> {
    const LATIN1: [&str; 11] = [
        "latin1",
        "ascii",
        "us-ascii",
        "iso-8859-1",
        "iso8859-1",
        "iso88591",
        "iso_8859-1",
        "windows-1252",
        "iso_8859-1:1987",
        "cp1252",
        "x-cp1252",
    ];
    if charset.eq_ignore_ascii_case(b"utf-8") || charset.eq_ignore_ascii_case(b"utf8") {
        return Some(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        });
    }
    if LATIN1
        .iter()
        .any(|l| charset.eq_ignore_ascii_case(l.as_bytes()))
    {
        return Some(bytes.iter().map(|&b| b as char).collect());
    }
    None
}

/// A parsed `type/subtype; params` (busboy's `parseContentType`), type and subtype
/// lowercased.
pub(super) struct ContentType<'a> {
    pub essence: String,
    pub params: Vec<(&'a [u8], Value<'a>)>,
}

impl<'a> ContentType<'a> {
    /// The first parameter of this (case-insensitive) name.
    pub fn param(&self, name: &str) -> Option<&[u8]> {
        self.params.iter().find_map(|(n, v)| match v {
            Value::Raw(v) if n.eq_ignore_ascii_case(name.as_bytes()) => Some(&v[..]),
            _ => None,
        })
    }
}

pub(super) fn content_type(s: &[u8]) -> Option<ContentType<'_>> {
    let len = s.len();
    let mut i = 0;
    while i < len && is_token(s[i]) {
        i += 1;
    }
    if i == 0 || i == len || s[i] != b'/' {
        return None;
    }
    let slash = i;
    i += 1;
    while i < len && is_token(s[i]) {
        i += 1;
    }
    if i == slash + 1 {
        return None;
    }
    let mut params = Vec::new();
    self::params(s, i, false, |n, v| params.push((n, v))).ok()?;
    let essence = String::from_utf8_lossy(&s[..i]).to_ascii_lowercase();
    Some(ContentType { essence, params })
}
