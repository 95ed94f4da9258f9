//! Digest headers and a body's running digests. Any header value parses to digests of
//! their algorithm's length, or none, never a panic. Any bytes, cut in any chunks (sent
//! and decoded ones interleaved) through a `Digests`: with the digests of the same bytes
//! hashed in one piece declared (written as headers and parsed back), it finishes Ok with
//! the requested digests of the whole; with one byte flipped (of the bytes, or of a
//! declared digest) it fails with `DigestMismatch` naming the first declared digest over
//! the flipped bytes, or the flipped digest, and keeps no results.
#![no_main]

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use uws_body::core::digest::{
    content_md5, dictionary, Algorithm, Declared, DigestOptions, Digests, Hasher, Header,
};
use uws_body::core::BodyError;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<6>() else {
        return;
    };
    any_header_value(rest);
    running_digests(head, rest);
});

fn any_header_value(bytes: &[u8]) {
    let value = String::from_utf8_lossy(bytes);
    for header in [Header::ContentDigest, Header::ReprDigest] {
        for d in dictionary(header, &value) {
            assert_eq!(d.header, header);
            assert!(matches!(d.algorithm, Algorithm::Sha256 | Algorithm::Sha512));
            assert_eq!(d.expected.len(), d.algorithm.size(), "{value:?}");
        }
    }
    if let Some(d) = content_md5(&value) {
        assert_eq!(
            (d.header, d.algorithm),
            (Header::ContentMd5, Algorithm::Md5)
        );
        assert_eq!(d.expected.len(), d.algorithm.size(), "{value:?}");
    }
}

fn one_piece(algorithm: Algorithm, bytes: &[u8]) -> Vec<u8> {
    let mut h = Hasher::new(algorithm);
    h.update(bytes);
    h.digest()
}

/// head: [flags, requested | flip | header style, split, step, seed, flip position].
fn running_digests(head: &[u8; 6], rest: &[u8]) {
    let [flags, more, split, step, seed, position] = *head;
    let identity = flags & 1 != 0;
    // An encoded body's decoded bytes differ from its sent ones: any two byte strings do.
    let (sent, decoded) = if identity {
        (rest, &rest[..0])
    } else {
        rest.split_at(rest.len() * usize::from(split) / 255)
    };
    let requested: Vec<Algorithm> = Algorithm::ALL
        .into_iter()
        .enumerate()
        .filter(|(i, _)| more >> i & 1 != 0)
        .map(|(_, a)| a)
        .collect();
    let declared = declare(flags, more & 0x40 != 0, more & 0x80 != 0, sent, decoded);
    let options = DigestOptions {
        declared: declared.clone(),
        requested: requested.clone(),
    };
    let chunking = Chunking { step, seed };

    // The bytes as declared: every digest matches.
    assert_eq!(
        chunking.run(&options, identity, sent, decoded),
        Outcome::Ok(made(&requested, if identity { sent } else { decoded })),
    );

    // One byte flipped: of the sent bytes, of the decoded ones, or of a declared digest.
    let (mut sent, mut decoded) = (sent.to_vec(), decoded.to_vec());
    let mut options = options;
    let over = |h: Header| identity || h != Header::ReprDigest;
    let wrong = match (more >> 4 & 3, sent.is_empty(), decoded.is_empty()) {
        (0 | 3, false, _) => {
            let i = usize::from(position) % sent.len();
            sent[i] ^= 1 << (seed % 8);
            declared.iter().find(|d| over(d.header))
        }
        (1, _, false) => {
            let i = usize::from(position) % decoded.len();
            decoded[i] ^= 1 << (seed % 8);
            declared.iter().find(|d| !over(d.header))
        }
        _ if !declared.is_empty() => {
            let d = &mut options.declared[usize::from(position) % declared.len()];
            d.expected[usize::from(seed) % d.algorithm.size()] ^= 0x80;
            Some(&*d)
        }
        _ => return,
    }
    .map(|d| (d.header.name(), d.algorithm.name()));
    let expected = match wrong {
        Some((header, algorithm)) => Outcome::Err(BodyError::DigestMismatch { header, algorithm }),
        None => Outcome::Ok(made(&requested, if identity { &sent } else { &decoded })),
    };
    assert_eq!(chunking.run(&options, identity, &sent, &decoded), expected);
}

/// The declared digests of the bytes, each written as its header and parsed back: what
/// the parser reads must be what was written. Content-Digest and Content-MD5 are over the
/// sent bytes, Repr-Digest over the decoded ones (the same bytes for an identity body).
fn declare(flags: u8, others: bool, spaced: bool, sent: &[u8], decoded: &[u8]) -> Vec<Declared> {
    let identity = flags & 1 != 0;
    let mut declared = Vec::new();
    let mut dictionary_of = |header: Header, algorithms: &[Algorithm], bytes: &[u8]| {
        let made: Vec<Declared> = algorithms
            .iter()
            .map(|&algorithm| Declared {
                header,
                algorithm,
                expected: one_piece(algorithm, bytes),
            })
            .collect();
        let mut members: Vec<String> = made
            .iter()
            .map(|d| {
                let key = match d.algorithm {
                    Algorithm::Sha256 => "sha-256",
                    _ => "sha-512",
                };
                format!("{key}=:{}:", STANDARD.encode(&d.expected))
            })
            .collect();
        if others {
            // RFC 9530's deprecated or unknown keys, and a member that is not a byte
            // sequence: each ignored.
            let md5 = STANDARD.encode(one_piece(Algorithm::Md5, bytes));
            members.splice(0..0, ["unixsum=:AAAA:".to_owned(), format!("md5=:{md5}:")]);
            members.push("sha=?1;q=1".to_owned());
        }
        let value = if spaced {
            format!("  {} ", members.join(" ,\t"))
        } else {
            members.join(",")
        };
        assert_eq!(dictionary(header, &value), made, "{value:?}");
        declared.extend(made);
    };
    if flags & 2 != 0 {
        let algorithms: &[Algorithm] = match flags >> 2 & 3 {
            0 => &[Algorithm::Sha256],
            1 => &[Algorithm::Sha512],
            _ => &[Algorithm::Sha256, Algorithm::Sha512],
        };
        dictionary_of(Header::ContentDigest, algorithms, sent);
    }
    if flags & 16 != 0 {
        let algorithm = if flags & 32 != 0 {
            Algorithm::Sha512
        } else {
            Algorithm::Sha256
        };
        let repr = if identity { sent } else { decoded };
        dictionary_of(Header::ReprDigest, &[algorithm], repr);
    }
    if flags & 64 != 0 {
        let md5 = one_piece(Algorithm::Md5, sent);
        let value = if flags & 128 != 0 {
            format!(" {}\t", STANDARD_NO_PAD.encode(&md5))
        } else {
            STANDARD.encode(&md5)
        };
        let d = content_md5(&value).expect("a Content-MD5 of 16 bytes");
        assert_eq!(d.expected, md5, "{value:?}");
        declared.push(d);
    }
    declared
}

fn made(requested: &[Algorithm], bytes: &[u8]) -> Vec<(Algorithm, Vec<u8>)> {
    requested
        .iter()
        .map(|&a| (a, one_piece(a, bytes)))
        .collect()
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Ok(Vec<(Algorithm, Vec<u8>)>),
    Err(BodyError),
}

/// The same cuts each run: chunks of 0 to `step * 3 + 1` bytes, sent and decoded ones
/// interleaved, from a generator seeded by the input.
struct Chunking {
    step: u8,
    seed: u8,
}

impl Chunking {
    fn run(&self, options: &DigestOptions, identity: bool, sent: &[u8], decoded: &[u8]) -> Outcome {
        let Some(mut digests) = Digests::new(options, identity) else {
            assert!(options.declared.is_empty() && options.requested.is_empty());
            return Outcome::Ok(Vec::new());
        };
        let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ (u64::from(self.seed) << 8) ^ u64::from(self.step);
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let max = usize::from(self.step) * 3 + 1;
        let (mut s, mut d) = (sent, decoded);
        while !s.is_empty() || !d.is_empty() {
            let r = next();
            let n = (r >> 1) as usize % (max + 1);
            if d.is_empty() || (!s.is_empty() && r & 1 == 0) {
                let (chunk, tail) = s.split_at(n.min(s.len()));
                digests.sent(chunk);
                s = tail;
            } else {
                let (chunk, tail) = d.split_at(n.min(d.len()));
                digests.decoded(chunk);
                d = tail;
            }
        }
        match digests.finish() {
            Ok(()) => Outcome::Ok(
                digests
                    .results()
                    .iter()
                    .map(|d| (d.algorithm, d.bytes.clone()))
                    .collect(),
            ),
            Err(e) => {
                assert_eq!((e.status(), e.code()), (400, "ERR_BODY_DIGEST_MISMATCH"));
                assert!(digests.results().is_empty(), "results after a mismatch");
                Outcome::Err(e)
            }
        }
    }
}
