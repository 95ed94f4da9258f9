//! The boundary of a multipart body, from its content-type (RFC 2046 5.1.1, RFC 7578 4.1).

use super::error::{BoundaryProblem, MultipartError};
use super::params::content_type;

/// The most characters RFC 2046 allows in a boundary.
pub const MAX_BOUNDARY: usize = 70;

/// `\r\n--` and the boundary: what the parser searches for.
pub(super) const MAX_DELIMITER: usize = MAX_BOUNDARY + 4;

/// A valid boundary: 1 to 70 of RFC 2046's `bchars`, not ending in a space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary {
    /// `\r\n--boundary`.
    delimiter: Vec<u8>,
}

/// RFC 2046 `bcharsnospace` (and the space, checked apart).
fn is_bchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"'()+_,-./:=? ".contains(&b)
}

impl Boundary {
    /// Checks a boundary as given (already unquoted).
    pub fn new(boundary: &[u8]) -> Result<Boundary, MultipartError> {
        if boundary.is_empty() {
            return Err(MultipartError::Boundary(BoundaryProblem::Missing));
        }
        if boundary.len() > MAX_BOUNDARY {
            return Err(MultipartError::Boundary(BoundaryProblem::TooLong));
        }
        if !boundary.iter().all(|&b| is_bchar(b)) || boundary.ends_with(b" ") {
            return Err(MultipartError::Boundary(BoundaryProblem::Character));
        }
        let mut delimiter = Vec::with_capacity(boundary.len() + 4);
        delimiter.extend_from_slice(b"\r\n--");
        delimiter.extend_from_slice(boundary);
        Ok(Boundary { delimiter })
    }

    /// The boundary of a `multipart/form-data` content-type header value, quoted or not:
    /// `multipart/form-data; boundary=----x` or `; Boundary="a b"`. The type must be
    /// multipart/form-data (any case), as busboy requires; parameters parse as in
    /// busboy (see `params`).
    pub fn from_content_type(value: &[u8]) -> Result<Boundary, MultipartError> {
        let Some(parsed) = content_type(value) else {
            return Err(MultipartError::Boundary(BoundaryProblem::Malformed));
        };
        if parsed.essence != "multipart/form-data" {
            return Err(MultipartError::NotFormData);
        }
        match parsed.param("boundary") {
            Some(b) => Boundary::new(b),
            None => Err(MultipartError::Boundary(BoundaryProblem::Missing)),
        }
    }

    /// The boundary itself.
    pub fn as_bytes(&self) -> &[u8] {
        &self.delimiter[4..]
    }

    /// `\r\n--boundary`.
    pub(super) fn delimiter(&self) -> &[u8] {
        &self.delimiter
    }
}
