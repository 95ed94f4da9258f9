//! The digest headers a client may send, parsed. Anything this does not understand (an
//! algorithm not made here, a malformed field, a digest of the wrong length) is ignored,
//! as RFC 9530 section 2 and 3 allow: the body is then read as if it had not been sent.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use sfv::{BareItem, Dictionary, ListEntry, Parser};

use super::{Algorithm, Declared, Header};

/// `Content-Digest` or `Repr-Digest` (an RFC 8941 dictionary of byte sequences keyed by
/// algorithm): the members naming sha-256 or sha-512 with a digest of their length.
/// RFC 9530's other registered keys (md5, sha, unixsum...) are deprecated there and
/// ignored here.
pub fn dictionary(header: Header, value: &str) -> Vec<Declared> {
    let Ok(dict) = Parser::new(value).parse::<Dictionary>() else {
        return Vec::new();
    };
    let mut declared = Vec::new();
    for (key, entry) in &dict {
        let algorithm = match key.as_str() {
            "sha-256" => Algorithm::Sha256,
            "sha-512" => Algorithm::Sha512,
            _ => continue,
        };
        let ListEntry::Item(item) = entry else {
            continue;
        };
        let BareItem::ByteSequence(bytes) = &item.bare_item else {
            continue;
        };
        if bytes.len() == algorithm.size() {
            declared.push(Declared {
                header,
                algorithm,
                expected: bytes.clone(),
            });
        }
    }
    declared
}

/// Padding optional, as RFC 8941 asks of byte sequences, and accepted here alike.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// `Content-MD5`: the base64 of the 16 bytes of the MD5 digest (RFC 1864), surrounding
/// whitespace allowed.
pub fn content_md5(value: &str) -> Option<Declared> {
    let bytes = BASE64.decode(value.trim_matches([' ', '\t'])).ok()?;
    (bytes.len() == Algorithm::Md5.size()).then_some(Declared {
        header: Header::ContentMd5,
        algorithm: Algorithm::Md5,
        expected: bytes,
    })
}
