//! Digests against published vectors, header parsing, and `Body` checking what a request
//! declared, for any chunking (the property test) and for encoded bodies, where
//! `Content-Digest` is over the bytes sent and `Repr-Digest` over the decoded ones.

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;
use proptest::prelude::*;

use super::*;
use crate::core::{Body, BodyOptions, FinishError};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest_of(algorithm: Algorithm, data: &[u8]) -> Vec<u8> {
    let mut h = Hasher::new(algorithm);
    h.update(data);
    h.digest()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// RFC 9530 appendix B's body and its digests.
const HELLO: &[u8] = br#"{"hello": "world"}"#;
const HELLO_SHA256: &str = "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:";
const HELLO_SHA512: &str = "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:";

#[test]
fn known_vectors() {
    // FIPS 180-2 and RFC 1321 "abc"; CRC-32C's check value over "123456789".
    assert_eq!(
        hex(&digest_of(Algorithm::Sha256, b"abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        hex(&digest_of(Algorithm::Sha512, b"abc")),
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
    );
    assert_eq!(
        hex(&digest_of(Algorithm::Md5, b"abc")),
        "900150983cd24fb0d6963f7d28e17f72"
    );
    assert_eq!(hex(&digest_of(Algorithm::Crc32c, b"123456789")), "e3069283");
    assert_eq!(
        hex(&digest_of(Algorithm::Sha256, b"")),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    for a in Algorithm::ALL {
        assert_eq!(digest_of(a, b"x").len(), a.size(), "{a:?}");
    }
}

#[test]
fn dictionaries_keep_the_members_they_can_check() {
    let d = dictionary(Header::ContentDigest, HELLO_SHA256);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].expected, digest_of(Algorithm::Sha256, HELLO));
    let both = format!("{HELLO_SHA512}, {HELLO_SHA256}");
    let d = dictionary(Header::ReprDigest, &both);
    assert_eq!(
        d.iter().map(|d| d.algorithm).collect::<Vec<_>>(),
        [Algorithm::Sha512, Algorithm::Sha256]
    );
    assert!(d.iter().all(|d| d.header == Header::ReprDigest));
    // Unsupported algorithms are skipped, the rest kept.
    let d = dictionary(
        Header::ContentDigest,
        &format!("md5=:rL0Y20zC+Fzt72VPzMSk2A==:, unixsum=:AAAA:, {HELLO_SHA256}"),
    );
    assert_eq!(d.len(), 1);
}

#[test]
fn malformed_or_unsupported_headers_are_ignored() {
    for value in [
        "",
        "sha-256",
        "sha-256=?1",
        "sha-256=:not base64!:",
        "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDU:", // truncated digest: the wrong length
        "sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
        "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
        "sha-256=(:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:)",
        "SHA-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
        "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:,,",
        "crc32c=:AAAAAA==:",
    ] {
        assert!(
            dictionary(Header::ContentDigest, value).is_empty(),
            "{value:?}"
        );
    }
    assert!(content_md5("").is_none());
    assert!(content_md5("kAFQmDzST7DWlj99KOF/cg").is_some()); // padding optional
    assert!(content_md5("kAFQmDzST7DWlj99KOF/").is_none()); // truncated
    assert!(content_md5("900150983cd24fb0d6963f7d28e17f72").is_none()); // hex, not base64
    assert_eq!(
        content_md5(" kAFQmDzST7DWlj99KOF/cg== ").map(|d| d.expected),
        Some(digest_of(Algorithm::Md5, b"abc"))
    );
}

fn body_with(
    encoding: Option<&str>,
    length: Option<u64>,
    declared: Vec<Declared>,
    requested: Vec<Algorithm>,
) -> Body {
    Body::new(&BodyOptions {
        content_length: length,
        limit: 64 << 20,
        max_preallocated: 1 << 20,
        content_encoding: encoding.map(str::to_owned),
        decode: true,
        known_minimum: 0,
        digest: DigestOptions {
            declared,
            requested,
        },
    })
}

fn read(mut body: Body, bytes: &[u8], step: usize) -> Result<(Vec<u8>, Vec<Digest>), FinishError> {
    for chunk in bytes.chunks(step.max(1)) {
        body.push(chunk).unwrap();
    }
    let block = body.finish()?;
    Ok((block.as_slice().to_vec(), body.digests().to_vec()))
}

fn declared(header: Header, algorithm: Algorithm, of: &[u8]) -> Declared {
    Declared {
        header,
        algorithm,
        expected: digest_of(algorithm, of),
    }
}

#[test]
fn a_declared_digest_is_checked_at_the_end() {
    let body = body_with(
        None,
        Some(HELLO.len() as u64),
        dictionary(Header::ContentDigest, HELLO_SHA256),
        vec![],
    );
    assert_eq!(read(body, HELLO, 3).unwrap().0, HELLO);
    let mut wrong = HELLO.to_vec();
    wrong[0] ^= 1;
    let body = body_with(
        None,
        Some(HELLO.len() as u64),
        dictionary(Header::ContentDigest, HELLO_SHA256),
        vec![],
    );
    let mut b = body;
    b.push(&wrong).unwrap();
    assert_eq!(
        b.finish().err(),
        Some(FinishError::Body(BodyError::DigestMismatch {
            header: "content-digest",
            algorithm: "sha256"
        }))
    );
    // The body failed: its memory is gone, and it stays failed.
    assert_eq!(b.length(), 0);
    assert!(b.error().is_some());
    for header in [Header::ReprDigest, Header::ContentMd5] {
        let body = body_with(
            None,
            None,
            vec![declared(header, Algorithm::Md5, b"other")],
            vec![],
        );
        assert!(read(body, HELLO, 7).is_err(), "{header:?}");
    }
}

#[test]
fn encoded_bodies_content_digest_is_over_the_sent_bytes_repr_digest_over_the_decoded() {
    let plain: Vec<u8> = (0..200_000u32)
        .map(|i| (i % 251) as u8 ^ (i >> 9) as u8)
        .collect();
    let sent = gzip(&plain);
    let cases = [
        (
            declared(Header::ContentDigest, Algorithm::Sha256, &sent),
            true,
        ),
        (
            declared(Header::ContentDigest, Algorithm::Sha256, &plain),
            false,
        ),
        (
            declared(Header::ReprDigest, Algorithm::Sha512, &plain),
            true,
        ),
        (
            declared(Header::ReprDigest, Algorithm::Sha512, &sent),
            false,
        ),
        (declared(Header::ContentMd5, Algorithm::Md5, &sent), true),
        (declared(Header::ContentMd5, Algorithm::Md5, &plain), false),
    ];
    for (d, ok) in cases {
        let what = format!("{:?} {:?}", d.header, d.algorithm);
        let body = body_with(
            Some("gzip"),
            Some(sent.len() as u64),
            vec![d],
            vec![Algorithm::Crc32c],
        );
        match read(body, &sent, 4096) {
            Ok((bytes, digests)) => {
                assert!(ok, "{what} passed");
                assert_eq!(bytes, plain);
                // Requested digests are over what the program gets: the decoded bytes.
                assert_eq!(
                    digests,
                    [Digest {
                        algorithm: Algorithm::Crc32c,
                        bytes: digest_of(Algorithm::Crc32c, &plain)
                    }]
                );
            }
            Err(e) => assert!(!ok, "{what} failed: {e:?}"),
        }
    }
}

#[test]
fn requested_digests_come_after_finish_only() {
    let mut body = body_with(None, None, vec![], vec![Algorithm::Sha256, Algorithm::Md5]);
    body.push(b"abc").unwrap();
    assert!(body.digests().is_empty());
    body.finish().unwrap();
    let got: Vec<_> = body
        .digests()
        .iter()
        .map(|d| (d.algorithm, d.bytes.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (Algorithm::Sha256, digest_of(Algorithm::Sha256, b"abc")),
            (Algorithm::Md5, digest_of(Algorithm::Md5, b"abc"))
        ]
    );
}

proptest! {
    /// Any chunking gives every algorithm's digest of the whole, for identity and gzip
    /// bodies, with and without a declared length.
    #[test]
    fn any_chunking_gives_the_same_digests(
        plain in proptest::collection::vec(any::<u8>(), 0..20_000),
        cuts in proptest::collection::vec(0usize..20_000, 0..12),
        encoded in any::<bool>(),
        known in any::<bool>(),
    ) {
        let sent = if encoded { gzip(&plain) } else { plain.clone() };
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (sent.len() + 1)).collect();
        cuts.push(0);
        cuts.push(sent.len());
        cuts.sort_unstable();
        let declared_all = vec![
            declared(Header::ContentDigest, Algorithm::Sha256, &sent),
            declared(Header::ContentDigest, Algorithm::Sha512, &sent),
            declared(Header::ContentMd5, Algorithm::Md5, &sent),
            declared(Header::ReprDigest, Algorithm::Sha256, &plain),
        ];
        let mut body = body_with(
            encoded.then_some("gzip"),
            known.then_some(sent.len() as u64),
            declared_all,
            Algorithm::ALL.to_vec(),
        );
        for pair in cuts.windows(2) {
            body.push(&sent[pair[0]..pair[1]]).unwrap();
        }
        let block = body.finish().unwrap();
        prop_assert_eq!(block.as_slice(), plain.as_slice());
        for d in body.digests() {
            prop_assert_eq!(&d.bytes, &digest_of(d.algorithm, &plain));
        }
        prop_assert_eq!(body.digests().len(), 4);
    }
}

proptest! {
    /// `BodyStream` makes the same digests as `Body`, whatever the chunking and the room
    /// the reader offers, and a wrong declared digest fails it at the end, never before.
    #[test]
    fn a_stream_makes_the_same_digests_at_any_room(
        plain in proptest::collection::vec(any::<u8>(), 0..20_000),
        step in 1usize..5000,
        room in 1usize..3000,
        encoded in any::<bool>(),
        wrong in any::<bool>(),
    ) {
        use std::mem::MaybeUninit;
        use crate::core::{BodyStream, Read};
        let sent = if encoded { gzip(&plain) } else { plain.clone() };
        let mut repr = declared(Header::ReprDigest, Algorithm::Sha512, &plain);
        if wrong {
            repr.expected[0] ^= 1;
        }
        let mut stream = BodyStream::new(&BodyOptions {
            content_length: Some(sent.len() as u64),
            limit: 1 << 20,
            max_preallocated: 0,
            content_encoding: encoded.then(|| "gzip".to_owned()),
            decode: true,
            known_minimum: 0,
            digest: DigestOptions {
                declared: vec![declared(Header::ContentDigest, Algorithm::Sha256, &sent), repr],
                requested: vec![Algorithm::Md5, Algorithm::Crc32c],
            },
        });
        let mut out = vec![MaybeUninit::<u8>::uninit(); room];
        let mut got = Vec::new();
        let take = |read: Read, out: &[MaybeUninit<u8>], got: &mut Vec<u8>| {
            if let Read::Data(n) = read {
                // SAFETY: the stream initialized the first `n` bytes.
                got.extend_from_slice(unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), n) });
            }
            read
        };
        for chunk in sent.chunks(step) {
            let r = stream.write(chunk, &mut out).unwrap();
            if encoded {
                take(r, &out, &mut got);
            } else {
                got.extend_from_slice(chunk);
            }
            loop {
                match take(stream.read(&mut out).unwrap(), &out, &mut got) {
                    Read::Data(_) => {}
                    other => { prop_assert_eq!(other, Read::NeedInput); break }
                }
            }
        }
        stream.end().unwrap();
        let last = loop {
            match take(stream.read(&mut out).unwrap(), &out, &mut got) {
                Read::Data(_) => {}
                other => break other,
            }
        };
        prop_assert_eq!(&got, &plain);
        if wrong {
            prop_assert_eq!(last, Read::Failed);
            prop_assert_eq!(stream.error(), Some(&BodyError::DigestMismatch { header: "repr-digest", algorithm: "sha512" }));
        } else {
            prop_assert_eq!(last, Read::Done);
            prop_assert_eq!(stream.digests().iter().map(|d| d.bytes.clone()).collect::<Vec<_>>(),
                vec![digest_of(Algorithm::Md5, &plain), digest_of(Algorithm::Crc32c, &plain)]);
        }
    }
}

proptest! {
    /// Any header value a client sends parses to digests of the right lengths, or none,
    /// never a panic.
    #[test]
    fn any_header_value_parses_or_is_ignored(value in ".{0,200}", bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
        let lossy = String::from_utf8_lossy(&bytes);
        for v in [value.as_str(), &lossy] {
            for header in [Header::ContentDigest, Header::ReprDigest] {
                for d in dictionary(header, v) {
                    prop_assert_eq!(d.expected.len(), d.algorithm.size());
                }
            }
            if let Some(d) = content_md5(v) {
                prop_assert_eq!(d.expected.len(), 16);
            }
        }
    }
}
