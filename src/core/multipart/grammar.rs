//! The byte classes of RFC 7230's header grammar, which the header block (`headers`) and
//! the parameters inside its values (`params`, `disposition`) are both read by.

/// RFC 7230 `tchar`.
pub(super) fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A byte a header value may hold: tab, visible ASCII and bytes from 0x80.
pub(super) fn is_value(b: u8) -> bool {
    b == b'\t' || b >= b' ' && b != 0x7f
}
