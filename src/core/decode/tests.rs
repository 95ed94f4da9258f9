//! Decoding through `Body`, against encoders of the same libraries (and, in
//! __test__/decode.test.js, against Node's zlib).

use std::io::Write;

use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use flate2::Compression;

use crate::core::{Body, BodyError, BodyOptions, Invalid};

const MIB: u64 = 1 << 20;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn br(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
    w.write_all(data).unwrap();
    drop(w);
    out
}

fn zstd(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; zstd_safe::compress_bound(data.len())];
    let n = zstd_safe::compress(&mut out[..], data, 3).unwrap();
    out.truncate(n);
    out
}

type Encoder = (&'static str, fn(&[u8]) -> Vec<u8>);
const ENCODERS: [Encoder; 5] = [
    ("gzip", gzip),
    ("deflate", zlib),
    ("deflate", raw_deflate),
    ("br", br),
    ("zstd", zstd),
];

/// Compressible, JSON-like bytes.
fn text(len: usize) -> Vec<u8> {
    let mut seed = 7u32;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let line = format!(
            "{{\"id\":{},\"name\":\"user{}\",\"ok\":true}},",
            seed % 1000,
            seed % 97
        );
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(len);
    out
}

fn body(encoding: &str, limit: u64, length: Option<u64>) -> Body {
    Body::new(&BodyOptions {
        content_length: length,
        limit,
        max_preallocated: MIB,
        content_encoding: Some(encoding.into()),
        decode: true,
        known_minimum: 0,
        digest: Default::default(),
    })
}

/// Pushes `encoded` in chunks of the sizes `sizes` cycles through; the decoded body, or
/// the first error.
fn read(mut body: Body, encoded: &[u8], sizes: &[usize]) -> Result<Vec<u8>, BodyError> {
    let mut rest = encoded;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        rest = tail;
        if !body.push(chunk).unwrap() {
            assert_eq!(body.capacity(), 0, "memory released on error");
            return Err(body.error().cloned().unwrap());
        }
    }
    match body.finish() {
        Ok(block) => Ok(block.as_slice().to_vec()),
        Err(crate::core::FinishError::Body(e)) => {
            assert_eq!(body.capacity(), 0);
            Err(e)
        }
        Err(other) => panic!("{other:?}"),
    }
}

const CHUNKINGS: [&[usize]; 6] = [
    &[usize::MAX],
    &[1],
    &[2, 3, 5],
    &[7, 1, 4096],
    &[65483],
    &[16384, 1],
];

#[test]
fn every_coding_every_chunking() {
    for len in [0, 1, 100, 70_000, 300_000] {
        let data = text(len);
        for (name, encode) in ENCODERS {
            let encoded = encode(&data);
            for sizes in CHUNKINGS {
                let got = read(body(name, MIB, Some(encoded.len() as u64)), &encoded, sizes);
                assert_eq!(got.as_deref(), Ok(&data[..]), "{name} {len} {sizes:?}");
            }
        }
    }
}

#[test]
fn names_and_lists() {
    let data = text(5000);
    for header in ["GZIP", " x-gzip ", "gzip, identity"] {
        assert_eq!(
            read(body(header, MIB, None), &gzip(&data), &[999]),
            Ok(data.clone())
        );
    }
    // `gzip, br`: gzip was applied first, so br is decoded first.
    let nested = br(&gzip(&data));
    for sizes in CHUNKINGS {
        assert_eq!(
            read(body("gzip, br", MIB, None), &nested, sizes),
            Ok(data.clone())
        );
    }
}

#[test]
fn gzip_members_are_all_decoded() {
    let (a, b) = (text(1000), text(70_000));
    let mut encoded = gzip(&a);
    encoded.extend(gzip(&b));
    encoded.extend(gzip(b""));
    for sizes in CHUNKINGS {
        let got = read(body("gzip", MIB, None), &encoded, sizes).unwrap();
        assert_eq!(got.len(), a.len() + b.len());
        assert!(got == [&a[..], &b[..]].concat());
    }
}

fn invalid(encoding: &'static str, reason: Invalid) -> Result<Vec<u8>, BodyError> {
    Err(BodyError::EncodingInvalid { encoding, reason })
}

#[test]
fn truncated_at_every_cut_is_400() {
    let data = text(3000);
    for (name, encode) in ENCODERS {
        let encoded = encode(&data);
        for cut in 0..encoded.len() {
            let got = read(body(name, MIB, None), &encoded[..cut], &[5]);
            assert_eq!(
                got,
                invalid(Coding::from(name), Invalid::Truncated),
                "{name} cut at {cut}"
            );
        }
    }
}

/// `Coding::name` of a header token, for expected errors.
struct Coding;
impl Coding {
    fn from(name: &str) -> &'static str {
        match name {
            "gzip" => "gzip",
            "deflate" => "deflate",
            "br" => "br",
            _ => "zstd",
        }
    }
}

#[test]
fn trailing_bytes_are_400() {
    let data = text(3000);
    for (name, encode) in ENCODERS {
        let mut encoded = encode(&data);
        encoded.extend_from_slice(b"garbage");
        for sizes in CHUNKINGS {
            let got = read(body(name, MIB, None), &encoded, sizes);
            let reason = if name == "zstd" {
                Invalid::Corrupt
            } else {
                Invalid::Trailing
            };
            assert_eq!(got, invalid(Coding::from(name), reason), "{name} {sizes:?}");
        }
    }
    // After a gzip member, only another member may follow.
    let mut encoded = gzip(&data);
    encoded.extend_from_slice(&[0x1f, 0x00]);
    assert_eq!(
        read(body("gzip", MIB, None), &encoded, &[1]),
        invalid("gzip", Invalid::Trailing)
    );
}

#[test]
fn corrupt_bytes_give_400_never_a_panic() {
    let data = text(20_000);
    for (name, encode) in ENCODERS {
        let encoded = encode(&data);
        let mut failures = 0;
        for at in (0..encoded.len()).step_by(encoded.len() / 97 + 1) {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = encoded.clone();
                bad[at] ^= flip;
                match read(body(name, MIB, None), &bad, &[4096, 3]) {
                    Ok(got) => assert!(got.len() <= MIB as usize),
                    Err(e) => {
                        assert_eq!(e.status(), 400, "{name} at {at}: {e:?}");
                        failures += 1;
                    }
                }
            }
        }
        // Checksums (gzip CRC32, zlib Adler-32, zstd's frame checksum when present)
        // catch most flips; a few (e.g. in gzip's header name field) change nothing.
        assert!(failures > 0, "{name}");
    }
}

#[test]
fn bombs_stop_one_byte_past_the_limit() {
    // 64 MiB of zeros per member; gzip and zstd get several members/frames.
    let zeros = vec![0u8; 64 * MIB as usize];
    let one_member = gzip(&zeros);
    let gzip_bomb = one_member.repeat(16); // 1 GiB decoded, about 1 MiB sent
    let zstd_bomb = zstd(&zeros).repeat(16);
    let br_bomb = br(&zeros);
    let nested = gzip(&one_member);
    for (name, bomb) in [
        ("gzip", &gzip_bomb),
        ("zstd", &zstd_bomb),
        ("br", &br_bomb),
        ("gzip, gzip", &nested),
    ] {
        let mut b = body(name, MIB, None);
        let start = std::time::Instant::now();
        let mut max_len = 0;
        let mut result = true;
        for chunk in bomb.chunks(65483) {
            result = b.push(chunk).unwrap();
            max_len = max_len.max(b.length());
            if !result {
                break;
            }
        }
        assert!(!result, "{name}");
        assert!(max_len as u64 <= MIB + 1, "{name}: held {max_len}");
        assert_eq!(
            b.error(),
            Some(&BodyError::TooLarge {
                limit: MIB,
                length: None,
                received: MIB + 1
            }),
            "{name}"
        );
        assert_eq!(b.capacity(), 0);
        assert!(
            start.elapsed().as_secs_f64() < 2.0,
            "{name} took {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn the_limit_applies_to_sent_and_decoded_bytes() {
    let data = text(10_000);
    let encoded = gzip(&data);
    // Decoded bytes over the limit.
    let got = read(body("gzip", 9_999, None), &encoded, &[100]);
    assert!(
        matches!(
            got,
            Err(BodyError::TooLarge {
                received: 10_000,
                ..
            })
        ),
        "{got:?}"
    );
    assert_eq!(
        read(body("gzip", 10_000, None), &encoded, &[100]),
        Ok(data.clone())
    );
    // A declared length over the limit fails at once, encoded or not.
    let b = body("gzip", 100, Some(101));
    assert_eq!(b.error().map(BodyError::status), Some(413));
    // The declared length is the encoded size: checked, not preallocated.
    let b = body("gzip", MIB, Some(encoded.len() as u64));
    assert_eq!(b.capacity(), 0);
    let got = read(
        body("gzip", MIB, Some(encoded.len() as u64 + 1)),
        &encoded,
        &[100],
    );
    assert!(
        matches!(got, Err(BodyError::LengthMismatch { .. })),
        "{got:?}"
    );
}

#[test]
fn unsupported_and_refused() {
    for (header, decode) in [
        ("compress", true),
        ("gzip", false),
        ("gzip, gzip, gzip", true),
    ] {
        let b = Body::new(&BodyOptions {
            content_length: None,
            limit: MIB,
            max_preallocated: MIB,
            content_encoding: Some(header.into()),
            decode,
            known_minimum: 0,
            digest: Default::default(),
        });
        assert_eq!(b.error().map(BodyError::status), Some(415), "{header}");
    }
}

/// The error of a body fed to a `BodyStream` in `chunk`-byte pieces and read through a
/// room of `room` bytes, one read per piece and then to the end.
fn stream_error(name: &str, limit: u64, encoded: &[u8], chunk: usize, room: usize) -> BodyError {
    use crate::core::{BodyStream, Read};
    use std::mem::MaybeUninit;
    let mut stream = BodyStream::new(&BodyOptions {
        content_length: None,
        limit,
        max_preallocated: MIB,
        content_encoding: Some(name.into()),
        decode: true,
        known_minimum: 0,
        digest: Default::default(),
    });
    let mut out = vec![MaybeUninit::<u8>::uninit(); room];
    for piece in encoded.chunks(chunk) {
        if stream.write(piece, &mut out).unwrap() == Read::Failed {
            return stream.error().cloned().unwrap();
        }
    }
    stream.end().unwrap();
    loop {
        match stream.read(&mut out).unwrap() {
            Read::Data(_) => {}
            Read::Failed => return stream.error().cloned().unwrap(),
            other => panic!("{name}: {other:?} for a corrupt body"),
        }
    }
}

/// A decoder may decode ahead of the room it is given (brotli fills its ring buffer from
/// all the input it has), so it can find a corrupt byte before it has handed over the
/// bytes that break the limit. Which error a body gets must not depend on that room.
#[test]
fn corrupt_past_the_limit_gets_the_same_error_whatever_the_room() {
    let data = text(44_000);
    for (name, encode) in ENCODERS {
        let encoded = encode(&data);
        let limit = encoded.len() as u64;
        for at in (encoded.len() / 2..encoded.len()).step_by(encoded.len() / 41 + 1) {
            let mut bad = encoded.clone();
            bad[at] ^= 0x90;
            for (chunk, room) in [(78, 1), (1, 1), (4096, 7), (usize::MAX, 1)] {
                let Err(whole) = read(body(name, limit, None), &bad, &[chunk]) else {
                    continue;
                };
                let piecewise = stream_error(name, limit, &bad, chunk, room);
                assert_eq!(
                    piecewise, whole,
                    "{name}, byte {at}, chunks {chunk}, room {room}"
                );
            }
        }
    }
}
