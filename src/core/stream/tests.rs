use std::io::Write;
use std::mem::MaybeUninit;

use super::*;
use crate::core::error::Invalid;

const MIB: u64 = 1 << 20;

fn stream(encoding: Option<&str>, limit: u64, length: Option<u64>) -> BodyStream {
    BodyStream::new(&BodyOptions {
        content_length: length,
        limit,
        max_preallocated: 0,
        content_encoding: encoding.map(Into::into),
        decode: true,
        known_minimum: 0,
        digest: Default::default(),
    })
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn room(n: usize) -> Vec<MaybeUninit<u8>> {
    vec![MaybeUninit::uninit(); n]
}

#[test]
fn an_unencoded_chunk_passes_through_under_the_rules() {
    let mut s = stream(None, 10, Some(8));
    assert!(s.is_identity());
    assert_eq!(s.write(b"abcd", &mut []), Ok(Read::NeedInput));
    assert_eq!(s.received(), 4);
    assert_eq!(s.write(b"efghi", &mut []), Ok(Read::Failed));
    assert_eq!(
        s.error(),
        Some(&BodyError::LengthMismatch {
            expected: 8,
            received: 9
        })
    );
    // A failed stream does no more work, and reports the same.
    assert_eq!(s.write(b"x", &mut []), Ok(Read::Failed));
    assert_eq!(s.read(&mut []), Ok(Read::Failed));

    let mut s = stream(None, 10, None);
    assert_eq!(s.write(b"0123456789", &mut []), Ok(Read::NeedInput));
    assert_eq!(s.write(b"a", &mut []), Ok(Read::Failed));
    assert!(matches!(
        s.error(),
        Some(BodyError::TooLarge { received: 11, .. })
    ));
}

#[test]
fn the_end_reveals_a_short_body_and_is_done_once() {
    let mut s = stream(None, 10, Some(5));
    assert_eq!(s.write(b"abc", &mut []), Ok(Read::NeedInput));
    s.end().unwrap();
    assert_eq!(s.read(&mut []), Ok(Read::Failed));
    assert_eq!(
        s.error(),
        Some(&BodyError::LengthMismatch {
            expected: 5,
            received: 3
        })
    );

    let mut s = stream(None, 10, Some(3));
    assert_eq!(s.write(b"abc", &mut []), Ok(Read::NeedInput));
    assert_eq!(s.read(&mut []), Ok(Read::NeedInput));
    s.end().unwrap();
    assert_eq!(s.read(&mut []), Ok(Read::Done));
    assert_eq!(s.read(&mut []), Ok(Read::Done));
    assert_eq!(s.write(b"", &mut []), Err(Misuse::AfterFinish));
    assert_eq!(s.end(), Err(Misuse::AfterFinish));
    s.abort(); // a no-op once done
    assert_eq!(s.error(), None);
}

#[test]
fn refusals_come_before_any_byte() {
    let mut s = stream(Some("compress"), 10, None);
    assert_eq!(s.write(b"abc", &mut []), Ok(Read::Failed));
    assert!(matches!(
        s.error(),
        Some(BodyError::EncodingUnsupported { .. })
    ));
    let s = stream(Some("gzip"), 10, Some(11));
    assert!(matches!(
        s.error(),
        Some(BodyError::TooLarge {
            length: Some(11),
            received: 0,
            ..
        })
    ));
}

#[test]
fn decoded_bytes_come_out_no_larger_than_the_room() {
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let encoded = gzip(&data);
    let mut s = stream(Some("gzip"), MIB, Some(encoded.len() as u64));
    let mut out = Vec::new();
    let mut buf = room(4096);
    let mut pieces = 0;
    let take = |r: Read, buf: &[MaybeUninit<u8>], out: &mut Vec<u8>| match r {
        Read::Data(n) => {
            assert!(n <= 4096);
            // SAFETY: the stream initialized the first n bytes.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), n) });
            true
        }
        _ => false,
    };
    for chunk in encoded.chunks(10_000) {
        let mut more = take(s.write(chunk, &mut buf).unwrap(), &buf, &mut out);
        while more {
            pieces += 1;
            more = take(s.read(&mut buf).unwrap(), &buf, &mut out);
        }
        assert_eq!(s.held(), 0);
    }
    s.end().unwrap();
    loop {
        match s.read(&mut buf).unwrap() {
            Read::Done => break,
            r => assert!(take(r, &buf, &mut out), "{r:?}"),
        }
    }
    assert_eq!(out, data);
    assert!(pieces >= 300_000 / 4096);
}

#[test]
fn a_chunk_that_arrives_while_earlier_bytes_wait_is_held_behind_them() {
    let data = vec![b'z'; 200_000];
    let encoded = gzip(&data);
    let (a, b) = encoded.split_at(encoded.len() / 2);
    let mut s = stream(Some("gzip"), MIB, None);
    let mut buf = room(1000);
    assert_eq!(s.write(a, &mut buf), Ok(Read::Data(1000)));
    assert!(s.held() > 0);
    // No room offered: the chunk is held, nothing decoded.
    assert_eq!(s.write(b, &mut []), Ok(Read::Data(0)));
    let held = s.held();
    assert!(held > b.len(), "{held}");
    let mut total = 1000;
    s.end().unwrap();
    loop {
        match s.read(&mut buf).unwrap() {
            Read::Data(n) => total += n,
            Read::Done => break,
            r => panic!("{r:?}"),
        }
    }
    assert_eq!(total, data.len());
    assert_eq!(s.held(), 0);
}

#[test]
fn a_rule_broken_while_bytes_wait_is_raised_after_them() {
    // A corrupt first chunk still waiting when the second breaks the length: Body would
    // have found the corruption first, and so does the stream.
    let mut encoded = gzip(&vec![b'q'; 100_000]);
    let at = encoded.len() - 6;
    encoded[at] ^= 0xff; // the CRC
    let length = encoded.len() as u64;
    let mut s = stream(Some("gzip"), MIB, Some(length));
    let mut buf = room(512);
    assert_eq!(s.write(&encoded, &mut buf), Ok(Read::Data(512)));
    assert_eq!(s.write(b"extra", &mut []), Ok(Read::Data(0)));
    let mut r = s.read(&mut buf).unwrap();
    while let Read::Data(_) = r {
        r = s.read(&mut buf).unwrap();
    }
    assert_eq!(r, Read::Failed);
    assert_eq!(
        s.error(),
        Some(&BodyError::EncodingInvalid {
            encoding: "gzip",
            reason: Invalid::Corrupt
        })
    );
    assert_eq!(s.held(), 0);
}

#[test]
fn a_bomb_stops_one_byte_past_the_limit_whatever_the_room() {
    let bomb = gzip(&vec![0u8; 64 << 20]);
    for size in [1, 4096, 65536] {
        let mut s = stream(Some("gzip"), MIB, None);
        let mut buf = room(size);
        let mut handed = 0u64;
        let mut r = s.write(&bomb, &mut buf).unwrap();
        while let Read::Data(n) = r {
            handed += n as u64;
            r = s.read(&mut buf).unwrap();
        }
        assert_eq!(r, Read::Failed);
        assert_eq!(
            s.error(),
            Some(&BodyError::TooLarge {
                limit: MIB,
                length: None,
                received: MIB + 1
            })
        );
        // The piece that crosses the limit is never handed out.
        assert!(
            handed <= MIB && handed + size as u64 > MIB,
            "room {size}: {handed}"
        );
        assert_eq!(s.held(), 0);
    }
}

#[test]
fn abort_releases_everything_and_reports_an_abort() {
    let encoded = gzip(&vec![b'a'; 100_000]);
    let mut s = stream(Some("gzip"), MIB, None);
    let mut buf = room(100);
    assert_eq!(s.write(&encoded, &mut buf), Ok(Read::Data(100)));
    assert!(s.held() > 0);
    s.abort();
    assert_eq!(s.held(), 0);
    assert_eq!(
        s.error(),
        Some(&BodyError::Aborted {
            expected: None,
            received: encoded.len() as u64
        })
    );
    assert_eq!(s.read(&mut buf), Err(Misuse::AfterAbort));
    assert_eq!(s.write(b"", &mut buf), Err(Misuse::AfterAbort));
    s.abort();
}

#[test]
fn nested_codings_stream_too() {
    let data: Vec<u8> = (0..500_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let encoded = gzip(&gzip(&data));
    let mut s = stream(Some("gzip, gzip"), 10 * MIB, None);
    let mut buf = room(3000);
    let mut out = 0usize;
    for chunk in encoded.chunks(777) {
        let mut r = s.write(chunk, &mut buf).unwrap();
        while let Read::Data(n) = r {
            out += n;
            r = s.read(&mut buf).unwrap();
        }
        assert_eq!(r, Read::NeedInput);
    }
    s.end().unwrap();
    assert_eq!(s.read(&mut buf), Ok(Read::Done));
    assert_eq!(out, data.len());
}
