//! Errors a client can cause. Each carries the HTTP status a server should answer with,
//! and the fields raw-body exposes, so frameworks can map them without special cases.
//! (An invalid content-length header is caught where headers are parsed, in
//! lib/body/headers.js: the core only ever sees a parsed length.)
//!
//! Messages are not made here: lib/native/errors.js builds every error, of both tiers, from its
//! one table keyed by `code()`, so the texts cannot drift apart.

use super::budget::OverBudget;
use super::memory::AllocError;

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
    /// The allocator could not provide memory the body needed (a huge preallocation the
    /// program allowed, or real exhaustion). 503 `memory.exhausted`: try again later.
    OutOfMemory { requested: u64 },
    /// The body's digest differs from the one a request header declared (`header`, e.g.
    /// `content-digest`; `algorithm`, e.g. `sha256`). 400 `request.digest.mismatch`.
    DigestMismatch {
        header: &'static str,
        algorithm: &'static str,
    },
    /// The process's memory budget (`setMemoryBudget`, core/budget.rs) has no room for
    /// `requested` more bytes. 503 `memory.budget`, with a Retry-After: bodies being read
    /// will end and return theirs.
    OverBudget { requested: u64 },
}

impl From<AllocError> for BodyError {
    fn from(error: AllocError) -> BodyError {
        let requested = error.bytes as u64;
        if error.over_budget {
            BodyError::OverBudget { requested }
        } else {
            BodyError::OutOfMemory { requested }
        }
    }
}

impl From<OverBudget> for BodyError {
    fn from(over: OverBudget) -> BodyError {
        BodyError::OverBudget {
            requested: over.requested,
        }
    }
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
            | BodyError::Aborted { .. }
            | BodyError::DigestMismatch { .. } => 400,
            BodyError::OutOfMemory { .. } | BodyError::OverBudget { .. } => 503,
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
            BodyError::OutOfMemory { .. } => "ERR_BODY_OUT_OF_MEMORY",
            BodyError::DigestMismatch { .. } => "ERR_BODY_DIGEST_MISMATCH",
            BodyError::OverBudget { .. } => "ERR_BODY_BUDGET",
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
            BodyError::OutOfMemory { .. } => "memory.exhausted",
            BodyError::DigestMismatch { .. } => "request.digest.mismatch",
            BodyError::OverBudget { .. } => "memory.budget",
        }
    }
}
