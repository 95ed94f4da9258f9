//! The content-encoding header, parsed into the codings a body must be decoded with.

use super::error::BodyError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    /// RFC 9110's deflate is zlib-wrapped; clients also send raw deflate (see decode).
    Deflate,
    Brotli,
    Zstd,
}

impl Coding {
    pub fn name(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }
}

/// At most this many codings are decoded (`gzip, br` is two). Each one holds a decoder
/// state (up to 16 MiB for br, 8 MiB for zstd), and real clients send one; two lets a
/// proxy add a layer. More gets 415.
pub const MAX_CODINGS: usize = 2;

/// Parses a content-encoding header value into the codings in the order they must be
/// *decoded* (the reverse of the header's order). Codings are case-insensitive and may
/// carry surrounding whitespace; an absent or empty header, and `identity`, mean none.
/// With `decode` false every coding but identity is refused (body-parser's
/// `inflate: false`).
pub fn parse(header: Option<&str>, decode: bool) -> Result<Vec<Coding>, BodyError> {
    let Some(header) = header else {
        return Ok(Vec::new());
    };
    let mut codings = Vec::new();
    // Empty list elements are allowed by HTTP's list syntax and mean nothing.
    for token in header.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let coding = match token.to_ascii_lowercase().as_str() {
            "identity" => continue,
            "gzip" | "x-gzip" if decode => Coding::Gzip,
            "deflate" if decode => Coding::Deflate,
            "br" if decode => Coding::Brotli,
            "zstd" if decode => Coding::Zstd,
            _ => {
                return Err(BodyError::EncodingUnsupported {
                    encoding: token.to_ascii_lowercase(),
                })
            }
        };
        if codings.len() == MAX_CODINGS {
            return Err(BodyError::EncodingUnsupported {
                encoding: header.trim().to_ascii_lowercase(),
            });
        }
        codings.push(coding);
    }
    codings.reverse();
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
            Some("identity, ,identity"),
        ] {
            assert_eq!(parse(h, true), Ok(vec![]), "{h:?}");
            assert_eq!(parse(h, false), Ok(vec![]), "{h:?}");
        }
    }

    #[test]
    fn codings_in_decoding_order() {
        assert_eq!(parse(Some(" GZip "), true), Ok(vec![Coding::Gzip]));
        assert_eq!(parse(Some("x-gzip"), true), Ok(vec![Coding::Gzip]));
        assert_eq!(
            parse(Some("gzip, identity,BR"), true),
            Ok(vec![Coding::Brotli, Coding::Gzip])
        );
        assert_eq!(
            parse(Some("deflate,zstd"), true),
            Ok(vec![Coding::Zstd, Coding::Deflate])
        );
    }

    #[test]
    fn anything_else_is_unsupported() {
        let unsupported = |e: &str| Err(BodyError::EncodingUnsupported { encoding: e.into() });
        assert_eq!(parse(Some("x-Custom"), true), unsupported("x-custom"));
        assert_eq!(
            parse(Some("identity, compress"), true),
            unsupported("compress")
        );
        assert_eq!(parse(Some("gzip"), false), unsupported("gzip"));
        assert_eq!(
            parse(Some("gzip, gzip, gzip"), true),
            unsupported("gzip, gzip, gzip")
        );
    }
}
