//! A part's head: what its `Content-Disposition`, `Content-Type` and
//! `Content-Transfer-Encoding` say, resolved as busboy 1.6 resolves them.

use super::error::{HeaderProblem, MultipartError};
use super::grammar::is_token;
use super::headers::Values;
use super::params::{content_type, params, Value};

/// How a name's bytes are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameEncoding {
    /// As sent in a plain parameter. busboy (and multer) read these as latin1 unless
    /// told otherwise (`defParamCharset`); browsers send UTF-8 bytes here.
    Raw,
    /// UTF-8, decoded from an RFC 8187 extended parameter (`filename*=UTF-8''...`).
    Utf8,
}

/// A part's file name, **as the client sent it**: it may hold `/`, `\`, `..` or thousands
/// of bytes (at most the header bound); never a control character but tab (a header value
/// holds none, and none may be percent-decoded into a `filename*`). The parser never uses it;
/// whoever writes to disk must sanitise it or, better, pick its own name (busboy keeps
/// only what follows the last `/` or `\` unless `preservePath`, and maps `.`/`..` to an
/// empty name: that is the JS layer's job, with `flags()` to tell the bad ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filename {
    pub bytes: Vec<u8>,
    pub encoding: NameEncoding,
}

/// What makes a name unfit to be used as a path as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NameFlags {
    /// Holds `/` or `\`, or is `.` or `..` (a path, not a bare name).
    pub path: bool,
    /// Holds a NUL byte.
    pub nul: bool,
    /// Holds another control character (0x01-0x1F, 0x7F).
    pub control: bool,
    /// Longer than 255 bytes (most file systems' limit for one name).
    pub long: bool,
}

impl NameFlags {
    pub fn any(self) -> bool {
        self.path || self.nul || self.control || self.long
    }
}

impl Filename {
    pub fn flags(&self) -> NameFlags {
        let b = &self.bytes[..];
        NameFlags {
            path: b.contains(&b'/') || b.contains(&b'\\') || b == b"." || b == b"..",
            nul: b.contains(&0),
            control: b.iter().any(|&c| (1..0x20).contains(&c) || c == 0x7f),
            long: b.len() > 255,
        }
    }
}

/// A part's head, reported when its header block is complete.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartHead {
    /// The `name` parameter as sent (quoted-string unescaped); `None` when absent or
    /// empty, as busboy (multer then refuses the part: `MISSING_FIELD_NAME`).
    pub name: Option<Vec<u8>>,
    /// `filename*` when present, non-empty and in a charset decoded here, else
    /// `filename` when non-empty, else `None` (busboy's precedence and emptiness rule).
    pub filename: Option<Filename>,
    /// `type/subtype` of the `Content-Type`, lowercased; `None` when absent or not
    /// parseable (busboy then says `text/plain`: see `mime_type()`).
    pub mime: Option<String>,
    /// The `charset` parameter of the `Content-Type`, lowercased (for decoding a field).
    pub charset: Option<Vec<u8>>,
    /// The `Content-Transfer-Encoding`, lowercased (busboy's `encoding`, `7bit` when absent).
    pub transfer_encoding: Option<Vec<u8>>,
    /// A file part: it has a file name or its type is `application/octet-stream`
    /// (busboy's rule). A file whose `filename` is `""` is a file without a name, which
    /// multer skips (browsers send one for an empty file input); it still counts
    /// towards `files` and `parts`.
    pub is_file: bool,
}

impl PartHead {
    /// busboy's `mimeType`: the content-type's essence, `text/plain` without one.
    pub fn mime_type(&self) -> &str {
        self.mime.as_deref().unwrap_or("text/plain")
    }

    /// busboy's `encoding`: the transfer encoding, `7bit` without one.
    pub fn encoding(&self) -> &[u8] {
        self.transfer_encoding.as_deref().unwrap_or(b"7bit")
    }

    pub(super) fn clear(&mut self) {
        *self = PartHead::default();
    }

    /// Fills the head from the first values of the three headers that matter.
    pub(super) fn resolve(&mut self, values: Values<'_>) -> Result<(), MultipartError> {
        self.clear();
        let Some(disposition) = values.disposition else {
            return Err(MultipartError::Header(HeaderProblem::NoDisposition));
        };
        let invalid = MultipartError::Header(HeaderProblem::Disposition);
        let mut i = 0;
        while i < disposition.len() && is_token(disposition[i]) {
            i += 1;
        }
        if !disposition[..i].eq_ignore_ascii_case(b"form-data") {
            return Err(invalid);
        }
        let mut name = None;
        let mut filename = None;
        let mut filename_ext = None;
        params(disposition, i, true, |n, v| {
            if n.eq_ignore_ascii_case(b"name") {
                name.get_or_insert(v);
            } else if n.eq_ignore_ascii_case(b"filename") {
                filename.get_or_insert(v);
            } else if n.eq_ignore_ascii_case(b"filename*") {
                // An extended value in a charset not decoded here is skipped, so a later
                // one may count.
                if let Value::Extended(Some(_)) = v {
                    filename_ext.get_or_insert(v);
                }
            }
        })
        .map_err(|()| invalid)?;
        self.name = match name {
            Some(Value::Raw(v)) if !v.is_empty() => Some(v.into_owned()),
            _ => None,
        };
        self.filename = match (filename_ext, filename) {
            (Some(Value::Extended(Some(s))), _) if !s.is_empty() => Some(Filename {
                bytes: s.into_bytes(),
                encoding: NameEncoding::Utf8,
            }),
            (_, Some(Value::Raw(v))) if !v.is_empty() => Some(Filename {
                bytes: v.into_owned(),
                encoding: NameEncoding::Raw,
            }),
            _ => None,
        };
        if let Some(parsed) = values.content_type.and_then(content_type) {
            self.charset = parsed.param("charset").map(|c| c.to_ascii_lowercase());
            self.mime = Some(parsed.essence);
        }
        self.transfer_encoding = values.transfer_encoding.map(|t| t.to_ascii_lowercase());
        self.is_file =
            self.filename.is_some() || self.mime.as_deref() == Some("application/octet-stream");
        Ok(())
    }
}
