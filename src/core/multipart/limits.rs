//! The limits of a multipart body, named as busboy and multer name them.
//!
//! Every limit is the most allowed, inclusive: `file_size: 10` accepts a file of 10 bytes
//! and refuses one of 11. busboy (so multer) differs by one on three of them, which it
//! trips on *reaching* the value: a file of exactly `fileSize` bytes is `LIMIT_FILE_SIZE`,
//! a field of exactly `fieldSize` bytes `LIMIT_FIELD_VALUE`, and a form of exactly `parts`
//! parts `LIMIT_PART_COUNT` (busboy issue 287, multer issue 1418). `files`, `fields` and
//! multer's `fieldNameSize` are already "more than". A layer that must reproduce multer
//! exactly passes `value.saturating_sub(1)` for `fileSize`, `fieldSize` and `parts`
//! (with `parts: 0`, busboy also refuses an empty form, `--boundary--`).

/// Which limit a body broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// More than `parts` parts (fields and files).
    PartCount,
    /// A file part's body over `file_size` bytes.
    FileSize,
    /// More than `files` file parts.
    FileCount,
    /// A part's `name` over `field_name_size` bytes.
    FieldKey,
    /// A field part's body over `field_size` bytes.
    FieldValue,
    /// More than `fields` field parts.
    FieldCount,
    /// More than `header_pairs` header lines in one part.
    HeaderPairs,
    /// A part's header block over `header_size` bytes.
    HeaderSize,
}

impl Limit {
    /// multer's `MulterError` code where multer has one; uws-body's own in its style
    /// for the two header limits (busboy reports those as "Malformed part header").
    pub fn code(self) -> &'static str {
        match self {
            Limit::PartCount => "LIMIT_PART_COUNT",
            Limit::FileSize => "LIMIT_FILE_SIZE",
            Limit::FileCount => "LIMIT_FILE_COUNT",
            Limit::FieldKey => "LIMIT_FIELD_KEY",
            Limit::FieldValue => "LIMIT_FIELD_VALUE",
            Limit::FieldCount => "LIMIT_FIELD_COUNT",
            Limit::HeaderPairs => "LIMIT_HEADER_PAIRS",
            Limit::HeaderSize => "LIMIT_HEADER_SIZE",
        }
    }
}

/// The limits one parser applies. `u64::MAX` is "no limit" (JS `Infinity`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of a part's `name` parameter, as sent (multer's `fieldNameSize`, which
    /// multer applies to fields and files alike, and only when given: default none).
    pub field_name_size: u64,
    /// Bytes of one field's value (busboy's default: 1 MiB).
    pub field_size: u64,
    /// Field parts (default none).
    pub fields: u64,
    /// Bytes of one file (default none).
    pub file_size: u64,
    /// File parts (default none).
    pub files: u64,
    /// Parts, fields and files together (default none).
    pub parts: u64,
    /// Header lines in one part (busboy's and Node's 2000).
    pub header_pairs: u64,
    /// Bytes of one part's header block, from after the delimiter's CRLF to the blank
    /// line's LF included (busboy's 16 KiB, Node's default header size). This is also
    /// the most the parser holds, besides a partial delimiter (at most 73 bytes).
    pub header_size: usize,
}

pub const DEFAULT_FIELD_SIZE: u64 = 1024 * 1024;
pub const DEFAULT_HEADER_PAIRS: u64 = 2000;
pub const DEFAULT_HEADER_SIZE: usize = 16 * 1024;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            field_name_size: u64::MAX,
            field_size: DEFAULT_FIELD_SIZE,
            fields: u64::MAX,
            file_size: u64::MAX,
            files: u64::MAX,
            parts: u64::MAX,
            header_pairs: DEFAULT_HEADER_PAIRS,
            header_size: DEFAULT_HEADER_SIZE,
        }
    }
}
