//! An encoded form's failures: a bomb stops at the limit, a stream that ends early or
//! holds bytes its format forbids is refused, each with the body error it is.

use std::mem::MaybeUninit;

use super::props::encode;
use super::*;
use crate::core::decode::Decoder;
use crate::core::encoding::Coding;
use crate::core::error::{BodyError, Invalid};

const B: &str = "XyZ";

fn upload(coding: Coding, limit: u64) -> Upload {
    let boundary = Boundary::new(B.as_bytes()).unwrap();
    let decoder = Decoder::new(&[coding], limit).unwrap();
    Upload::with_decoding(
        Multipart::new(&boundary, Limits::default()),
        0,
        Decoding::new(decoder),
    )
}

fn form(file: &[u8]) -> Vec<u8> {
    let mut body =
        format!("--{B}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n")
            .into_bytes();
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{B}--").as_bytes());
    body
}

/// Feeds `encoded` in `chunk`-byte pieces into rooms, then ends: the bytes streamed and
/// the outcome it stopped at.
fn run(upload: &mut Upload, encoded: &[u8], chunk: usize) -> (u64, upload::Outcome) {
    let mut room = vec![MaybeUninit::<u8>::uninit(); 16 * 1024];
    let mut streamed = 0u64;
    let mut sink = Sink::Skip;
    let pieces: Vec<&[u8]> = encoded.chunks(chunk).collect();
    for (i, piece) in pieces.iter().enumerate() {
        let mut at = 0;
        loop {
            let fed = upload.feed(&piece[at..], sink, &mut room).unwrap();
            at += fed.consumed;
            streamed += fed.written as u64;
            match fed.outcome {
                upload::Outcome::Part => sink = Sink::Room,
                upload::Outcome::Data | upload::Outcome::PartEnd => {}
                upload::Outcome::NeedInput => break,
                other => return (streamed, other),
            }
        }
        if i == pieces.len() - 1 {
            upload.end().unwrap();
            let fed = upload.feed(&[], sink, &mut room).unwrap();
            return (streamed + fed.written as u64, fed.outcome);
        }
    }
    unreachable!("a body of at least one chunk")
}

#[test]
fn a_bomb_stops_one_window_past_the_limit() {
    let encoded = encode(Coding::Gzip, &form(&vec![0; 64 << 20]));
    assert!(encoded.len() < 1 << 20);
    let mut u = upload(Coding::Gzip, 1 << 20);
    let (streamed, outcome) = run(&mut u, &encoded, 4096);
    assert_eq!(outcome, upload::Outcome::Failed);
    assert!(streamed <= 1 << 20, "{streamed} bytes let through");
    assert!(matches!(u.body_error(), Some(BodyError::TooLarge { limit, .. }) if *limit == 1 << 20));
    assert!(u.decoded().unwrap() <= (1 << 20) + 64 * 1024);
}

#[test]
fn a_form_within_the_limit_decodes_whole() {
    let data: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    for coding in [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd] {
        let encoded = encode(coding, &form(&data));
        let mut u = upload(coding, 4 << 20);
        assert_eq!(
            run(&mut u, &encoded, 1000),
            (data.len() as u64, upload::Outcome::Done),
            "{coding:?}"
        );
    }
}

#[test]
fn a_stream_that_ends_early_or_is_corrupt_is_refused() {
    let encoded = encode(Coding::Gzip, &form(b"hello"));
    // Cut before the gzip trailer: the form itself is complete, the stream is not.
    let mut u = upload(Coding::Gzip, u64::MAX);
    assert_eq!(
        run(&mut u, &encoded[..encoded.len() - 4], 7).1,
        upload::Outcome::Failed
    );
    assert_eq!(
        u.body_error(),
        Some(&BodyError::EncodingInvalid {
            encoding: "gzip",
            reason: Invalid::Truncated
        })
    );
    let mut corrupt = encoded.clone();
    let at = corrupt.len() - 6;
    corrupt[at] ^= 0x55;
    let mut u = upload(Coding::Gzip, u64::MAX);
    assert_eq!(run(&mut u, &corrupt, 7).1, upload::Outcome::Failed);
    assert!(matches!(
        u.body_error(),
        Some(BodyError::EncodingInvalid {
            encoding: "gzip",
            ..
        })
    ));
    // Not gzip at all.
    let mut u = upload(Coding::Gzip, u64::MAX);
    assert_eq!(run(&mut u, &form(b"plain"), 7).1, upload::Outcome::Failed);
    assert!(u.body_error().is_some());
}

/// A form's declared digests (`Upload::with_declared_digests`), identity or gzip, any
/// chunking: `Done` only after `end` and only when every digest matches (Content-Digest
/// over the bytes sent, Repr-Digest over the decoded form, its epilogue included); one
/// byte flipped anywhere the form still parses is `DigestMismatch`.
mod declared {
    use super::*;
    use crate::core::digest::{Algorithm, Declared, Hasher, Header};

    /// A request declaring `header: sha-256` of `over`.
    fn declared(header: Header, over: &[u8]) -> Vec<Declared> {
        let mut hasher = Hasher::new(Algorithm::Sha256);
        hasher.update(over);
        vec![Declared {
            header,
            algorithm: Algorithm::Sha256,
            expected: hasher.digest(),
        }]
    }

    /// Feeds `sent` in `step`-byte chunks, then ends: the outcome, and whether any
    /// `Done` came before `end`.
    fn outcome(mut up: Upload, sent: &[u8], step: usize) -> (upload::Outcome, bool) {
        let mut room = vec![MaybeUninit::<u8>::uninit(); 512];
        let mut chunks = sent.chunks(step);
        let mut chunk = chunks.next().unwrap_or(&[]);
        let mut ended = false;
        loop {
            let fed = up.feed(chunk, Sink::Room, &mut room).unwrap();
            chunk = &chunk[fed.consumed..];
            match fed.outcome {
                upload::Outcome::NeedInput => match chunks.next() {
                    Some(next) => chunk = next,
                    None if !ended => {
                        up.end().unwrap();
                        ended = true;
                    }
                    None => unreachable!("NeedInput after end"),
                },
                upload::Outcome::Failed => {
                    let e = up.body_error();
                    assert!(matches!(e, Some(BodyError::DigestMismatch { .. })), "{e:?}");
                    return (fed.outcome, !ended);
                }
                upload::Outcome::Done => return (fed.outcome, !ended),
                _ => {}
            }
        }
    }

    fn identity(declared: Vec<Declared>) -> Upload {
        let boundary = Boundary::new(B.as_bytes()).unwrap();
        Upload::new(Multipart::new(&boundary, Limits::default()), 0, None)
            .with_declared_digests(declared)
    }

    fn gzip(declared: Vec<Declared>) -> Upload {
        upload(Coding::Gzip, u64::MAX).with_declared_digests(declared)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn declared_digests_are_checked_whole(
            size in 0usize..5000,
            epilogue in 0usize..40,
            step in 1usize..900,
            flip in proptest::option::of(0usize..5000),
        ) {
            let file: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
            let mut body = form(&file);
            body.extend(std::iter::repeat_n(b'e', epilogue));
            // A byte of the file's data or of the epilogue: the form still parses.
            let start = body.len() - epilogue - B.len() - 6 - file.len();
            let flippable: Vec<usize> = (start..start + file.len()).chain(body.len() - epilogue..body.len()).collect();
            let flip = flip.filter(|_| !flippable.is_empty()).map(|f| flippable[f % flippable.len()]);
            let mut sent = body.clone();
            if let Some(at) = flip {
                sent[at] ^= 1;
            }
            let want = if flip.is_some() { upload::Outcome::Failed } else { upload::Outcome::Done };
            let (got, early) = outcome(identity(declared(Header::ContentDigest, &body)), &sent, step);
            proptest::prop_assert_eq!((got, early), (want, false));
            let gz = encode(Coding::Gzip, &sent);
            let (got, early) = outcome(gzip(declared(Header::ReprDigest, &body)), &gz, step);
            proptest::prop_assert_eq!((got, early), (want, false));
            let (got, early) = outcome(gzip(declared(Header::ContentDigest, &encode(Coding::Gzip, &body))), &gz, step);
            proptest::prop_assert_eq!((got, early), (want, false));
        }
    }
}
