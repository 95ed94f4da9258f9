//! Errors a client can cause. Each carries the HTTP status a server should answer with,
//! and the fields raw-body exposes, so frameworks can map them without special cases.
//! (An invalid content-length header is caught where headers are parsed, in
//! lib/options.js: the core only ever sees a parsed length.)

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// More bytes than `limit`, declared (`length`) or received. 413 `entity.too.large`.
    TooLarge {
        limit: u64,
        length: Option<u64>,
        received: u64,
    },
    /// Received bytes disagree with the declared content-length. 400 `request.size.invalid`.
    LengthMismatch { expected: u64, received: u64 },
    /// A content-encoding this build does not decode. 415 `encoding.unsupported`.
    EncodingUnsupported { encoding: String },
    /// The body is not valid in its content-encoding. 400 `encoding.invalid`.
    EncodingInvalid {
        encoding: &'static str,
        reason: Invalid,
    },
    /// The client went away (or the application gave up) before the body ended.
    /// 400 `request.aborted`.
    Aborted {
        expected: Option<u64>,
        received: u64,
    },
}

/// Why an encoded body could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// Bytes the coding's format does not allow (including a failed checksum).
    Corrupt,
    /// The stream had not ended when the body did.
    Truncated,
    /// Bytes after the end of the stream (for gzip: that are not another member).
    Trailing,
}

impl Invalid {
    pub fn name(self) -> &'static str {
        match self {
            Invalid::Corrupt => "corrupt",
            Invalid::Truncated => "truncated",
            Invalid::Trailing => "trailing",
        }
    }
}

impl BodyError {
    pub fn status(&self) -> u16 {
        match self {
            BodyError::TooLarge { .. } => 413,
            BodyError::EncodingUnsupported { .. } => 415,
            BodyError::LengthMismatch { .. }
            | BodyError::EncodingInvalid { .. }
            | BodyError::Aborted { .. } => 400,
        }
    }

    /// The stable `code` of the JS error (`ECONNABORTED` is raw-body's for an abort).
    pub fn code(&self) -> &'static str {
        match self {
            BodyError::TooLarge { .. } => "ERR_BODY_TOO_LARGE",
            BodyError::LengthMismatch { .. } => "ERR_BODY_LENGTH_MISMATCH",
            BodyError::EncodingUnsupported { .. } => "ERR_BODY_ENCODING_UNSUPPORTED",
            BodyError::EncodingInvalid { .. } => "ERR_BODY_ENCODING_INVALID",
            BodyError::Aborted { .. } => "ECONNABORTED",
        }
    }

    /// raw-body's `type` string for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            BodyError::TooLarge { .. } => "entity.too.large",
            BodyError::LengthMismatch { .. } => "request.size.invalid",
            BodyError::EncodingUnsupported { .. } => "encoding.unsupported",
            BodyError::EncodingInvalid { .. } => "encoding.invalid",
            BodyError::Aborted { .. } => "request.aborted",
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::TooLarge { .. } => f.write_str("request entity too large"),
            BodyError::LengthMismatch { .. } => {
                f.write_str("request size did not match content length")
            }
            BodyError::EncodingUnsupported { encoding } => {
                write!(f, "unsupported content encoding \"{encoding}\"")
            }
            BodyError::EncodingInvalid { encoding, reason } => {
                write!(f, "invalid {encoding} body ({})", reason.name())
            }
            BodyError::Aborted { .. } => f.write_str("request aborted"),
        }
    }
}

impl std::error::Error for BodyError {}
