//! What a client can get wrong in a multipart body, in the style of `BodyError`: each
//! error has a stable `code()` and the HTTP `status()` to answer with (400 for a malformed
//! body, 413 for a broken limit, 415 for a content-type that is not multipart/form-data).
//! The limit codes are multer's (`LIMIT_FILE_SIZE`, ...), so the JS layer can build
//! `MulterError`s from them unchanged; the others are uws-body's own.

use super::limits::Limit;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultipartError {
    /// The content-type is not `multipart/form-data`. 415.
    NotFormData,
    /// No usable boundary in the content-type. 400.
    Boundary(BoundaryProblem),
    /// A part's header block is not valid. 400.
    Header(HeaderProblem),
    /// The body ended before the final delimiter (`--boundary--`). 400.
    Truncated(Where),
    /// A limit was exceeded: `max` is the limit's value (the most it allows). 413.
    Limit { limit: Limit, max: u64 },
}

/// Why the content-type gives no boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundaryProblem {
    /// No `boundary` parameter, or an empty one.
    Missing,
    /// More than 70 characters (RFC 2046).
    TooLong,
    /// A character RFC 2046 does not allow in a boundary (or a space at its end).
    Character,
    /// The content-type itself does not parse (a parameter without a value, an unclosed
    /// quoted string, ...).
    Malformed,
}

/// Why a part's header block was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderProblem {
    /// Not `name: value` lines ending in CRLF, a blank line after them (a part with no
    /// header at all included), with a token for a name and no control character in a value.
    Syntax,
    /// A line starting with a space or tab (obsolete line folding, RFC 7230 3.2.4).
    Folding,
    /// No `Content-Disposition` header (RFC 7578 4.2 requires one).
    NoDisposition,
    /// A `Content-Disposition` that does not parse, or whose type is not `form-data`.
    Disposition,
}

/// Where the body was when it ended too early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// Before the first delimiter (no part at all: not a multipart body, or the wrong boundary).
    Preamble,
    /// In a part's header block.
    Headers,
    /// In a part's body (the part is incomplete: its data must be discarded).
    Body,
    /// Just after a delimiter, before `--` or CRLF, or in bytes ignored up to the next one.
    Delimiter,
}

impl BoundaryProblem {
    pub fn name(self) -> &'static str {
        match self {
            BoundaryProblem::Missing => "missing",
            BoundaryProblem::TooLong => "too long",
            BoundaryProblem::Character => "character",
            BoundaryProblem::Malformed => "malformed",
        }
    }
}

impl HeaderProblem {
    pub fn name(self) -> &'static str {
        match self {
            HeaderProblem::Syntax => "syntax",
            HeaderProblem::Folding => "folding",
            HeaderProblem::NoDisposition => "no disposition",
            HeaderProblem::Disposition => "disposition",
        }
    }
}

impl Where {
    pub fn name(self) -> &'static str {
        match self {
            Where::Preamble => "preamble",
            Where::Headers => "headers",
            Where::Body => "body",
            Where::Delimiter => "delimiter",
        }
    }
}

impl MultipartError {
    pub fn status(&self) -> u16 {
        match self {
            MultipartError::NotFormData => 415,
            MultipartError::Boundary(_)
            | MultipartError::Header(_)
            | MultipartError::Truncated(_) => 400,
            MultipartError::Limit { .. } => 413,
        }
    }

    /// The stable `code` of the JS error: multer's for its limits.
    pub fn code(&self) -> &'static str {
        match self {
            MultipartError::NotFormData => "ERR_MULTIPART_CONTENT_TYPE",
            MultipartError::Boundary(_) => "ERR_MULTIPART_BOUNDARY",
            MultipartError::Header(_) => "ERR_MULTIPART_HEADER",
            MultipartError::Truncated(_) => "ERR_MULTIPART_TRUNCATED",
            MultipartError::Limit { limit, .. } => limit.code(),
        }
    }

    /// The `reason` of a 400 (the problem's name), for messages.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            MultipartError::Boundary(p) => Some(p.name()),
            MultipartError::Header(p) => Some(p.name()),
            MultipartError::Truncated(w) => Some(w.name()),
            MultipartError::NotFormData | MultipartError::Limit { .. } => None,
        }
    }
}
