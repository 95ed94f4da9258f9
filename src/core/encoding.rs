//! The content-encoding header, parsed into the codings a body must be decoded with.

use super::error::BodyError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Identity,
}

/// Parses a content-encoding header value. Codings are case-insensitive and may carry
/// surrounding whitespace; an absent or empty header means identity.
pub fn parse(header: Option<&str>) -> Result<Vec<Coding>, BodyError> {
    let Some(header) = header else {
        return Ok(Vec::new());
    };
    let codings = Vec::new();
    // Empty list elements are allowed by HTTP's list syntax and mean nothing.
    for token in header.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if token.eq_ignore_ascii_case("identity") {
            continue;
        }
        return Err(BodyError::EncodingUnsupported {
            encoding: token.to_ascii_lowercase(),
        });
    }
    Ok(codings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_forms() {
        for h in [
            None,
            Some(""),
            Some(" "),
            Some("identity"),
            Some(" IDENTITY "),
        ] {
            assert_eq!(parse(h), Ok(vec![]), "{h:?}");
        }
    }

    #[test]
    fn anything_else_is_unsupported() {
        assert_eq!(
            parse(Some("x-Custom")),
            Err(BodyError::EncodingUnsupported {
                encoding: "x-custom".into()
            })
        );
        assert_eq!(parse(Some("identity, ,identity")), Ok(vec![]));
        assert!(parse(Some("identity, br")).is_err());
    }
}
