//! Property tests: for any body, chunking, limit and declared length the core returns
//! exactly the bytes or exactly the error the rules specify; every decoder agrees with a
//! one-shot reference decoder on any input, corrupt or not.

use std::io::{Read, Write};

use proptest::prelude::*;

use super::stream::Read as Piece;
use super::*;

const KIB: usize = 1024;

/// Cuts `data` into chunks whose sizes cycle through `sizes` (each at least 1).
fn chunks<'a>(data: &'a [u8], sizes: &'a [usize]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut at = 0;
    let mut i = 0;
    std::iter::from_fn(move || {
        if at >= data.len() {
            return None;
        }
        let n = sizes[i % sizes.len()].max(1).min(data.len() - at);
        i += 1;
        at += n;
        Some(&data[at - n..at])
    })
}

/// What the rules say a body must end as: its bytes, or the one error.
fn model(
    data: &[u8],
    sizes: &[usize],
    declared: Option<u64>,
    limit: u64,
) -> Result<Vec<u8>, BodyError> {
    if let Some(d) = declared.filter(|&d| d > limit) {
        return Err(BodyError::TooLarge {
            limit,
            length: Some(d),
            received: 0,
        });
    }
    let mut received = 0u64;
    for chunk in chunks(data, sizes) {
        received += chunk.len() as u64;
        if let Some(d) = declared.filter(|&d| received > d) {
            return Err(BodyError::LengthMismatch {
                expected: d,
                received,
            });
        }
        if received > limit {
            return Err(BodyError::TooLarge {
                limit,
                length: declared,
                received,
            });
        }
    }
    match declared {
        Some(d) if d != received => Err(BodyError::LengthMismatch {
            expected: d,
            received,
        }),
        _ => Ok(data.to_vec()),
    }
}

fn run(mut body: Body, data: &[u8], sizes: &[usize]) -> Result<Vec<u8>, BodyError> {
    for chunk in chunks(data, sizes) {
        if !body.push(chunk).expect("no misuse") {
            assert_eq!(body.capacity(), 0, "memory released on error");
            return Err(body.error().cloned().expect("error set"));
        }
    }
    match body.finish() {
        Ok(block) => Ok(block.as_slice().to_vec()),
        Err(FinishError::Body(e)) => {
            assert_eq!(body.capacity(), 0);
            Err(e)
        }
        Err(FinishError::Misuse(m)) => panic!("{m:?}"),
    }
}

fn declared_strategy(len: usize) -> impl Strategy<Value = Option<u64>> {
    let len = len as u64;
    prop_oneof![Just(None), Just(Some(len)), (0..=len + 10).prop_map(Some),]
}

/// Limits around the body's length (where off-by-one errors live), anywhere, or none.
fn limit_strategy(len: usize) -> impl Strategy<Value = u64> {
    let len = len as u64;
    prop_oneof![
        Just(len),
        Just(len.saturating_sub(1)),
        Just(len + 1),
        0..50 * KIB as u64,
        Just(u64::MAX >> 11),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_body_any_chunking_gives_the_bytes_or_the_specified_error(
        (data, declared, limit) in prop::collection::vec(any::<u8>(), 0..40 * KIB)
            .prop_flat_map(|d| { let n = d.len(); (Just(d), declared_strategy(n), limit_strategy(n)) }),
        sizes in prop::collection::vec(1usize..20 * KIB, 1..8),
        max_preallocated in prop_oneof![Just(0u64), 1u64..64 * KIB as u64, Just(1u64 << 20)],
        // A hint changes where the bytes go, never which bytes or which error.
        known_minimum in prop_oneof![Just(0u64), 1u64..64 * KIB as u64, Just(u64::MAX)],
    ) {
        let body = Body::new(&BodyOptions {
            content_length: declared,
            limit,
            max_preallocated,
            content_encoding: None,
            decode: true,
            known_minimum,
            digest: Default::default(),
        });
        // Preallocation never passes the cap (rounded to the pool's class) or the declared length.
        let bound = declared.unwrap_or(0).min(max_preallocated) as usize;
        prop_assert!(body.capacity() <= bound + bound / 4 || body.capacity() as u64 >= declared.unwrap_or(0),
            "capacity {} for declared {:?}, cap {}", body.capacity(), declared, max_preallocated);
        prop_assert_eq!(run(body, &data, &sizes), model(&data, &sizes, declared, limit));
    }
}

/// Compressible bytes, or not, from a seed.
fn sample(len: usize, seed: u64, compressible: bool) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if compressible {
                const TEXT: &[u8] = b"{\"id\":1,\"name\":\"abc\"},";
                TEXT[(i + (x % 3) as usize) % TEXT.len()]
            } else {
                x as u8
            }
        })
        .collect()
}

#[derive(Debug, Clone, Copy)]
enum Format {
    Gzip,
    Zlib,
    RawDeflate,
    Brotli,
    Zstd,
}

impl Format {
    fn header(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Zlib | Format::RawDeflate => "deflate",
            Format::Brotli => "br",
            Format::Zstd => "zstd",
        }
    }

    fn encode(self, data: &[u8]) -> Vec<u8> {
        use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
        let level = flate2::Compression::fast();
        match self {
            Format::Gzip => {
                let mut e = GzEncoder::new(Vec::new(), level);
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Format::Zlib => {
                let mut e = ZlibEncoder::new(Vec::new(), level);
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Format::RawDeflate => {
                let mut e = DeflateEncoder::new(Vec::new(), level);
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Format::Brotli => {
                let mut out = Vec::new();
                let mut w = brotli::CompressorWriter::new(&mut out, 4096, 3, 20);
                w.write_all(data).unwrap();
                drop(w);
                out
            }
            Format::Zstd => {
                let mut out = vec![0u8; zstd_safe::compress_bound(data.len())];
                let n = zstd_safe::compress(&mut out[..], data, 1).unwrap();
                out.truncate(n);
                out
            }
        }
    }

    /// A one-shot decode by a different code path: `None` if the reference rejects it.
    fn reference(self, encoded: &[u8], cap: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let read =
            |r: &mut dyn Read, out: &mut Vec<u8>| r.take(cap as u64 + 1).read_to_end(out).ok();
        match self {
            Format::Gzip => read(&mut flate2::read::MultiGzDecoder::new(encoded), &mut out)?,
            Format::Zlib => read(&mut flate2::read::ZlibDecoder::new(encoded), &mut out)?,
            Format::RawDeflate => read(&mut flate2::read::DeflateDecoder::new(encoded), &mut out)?,
            Format::Brotli => read(&mut brotli::Decompressor::new(encoded, 4096), &mut out)?,
            Format::Zstd => {
                out = Vec::with_capacity(cap + 1);
                zstd_safe::decompress(&mut out, encoded).ok()?;
                0
            }
        };
        Some(out)
    }
}

fn format() -> impl Strategy<Value = Format> {
    prop_oneof![
        Just(Format::Gzip),
        Just(Format::Zlib),
        Just(Format::RawDeflate),
        Just(Format::Brotli),
        Just(Format::Zstd),
    ]
}

fn decode(
    format: Format,
    encoded: &[u8],
    sizes: &[usize],
    limit: u64,
) -> Result<Vec<u8>, BodyError> {
    let body = Body::new(&BodyOptions {
        content_length: None,
        limit,
        max_preallocated: 1 << 20,
        content_encoding: Some(format.header().into()),
        decode: true,
        known_minimum: 0,
        digest: Default::default(),
    });
    run(body, encoded, sizes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_decoder_round_trips_under_any_chunking_and_limit(
        format in format(),
        (len, limit) in (0usize..100 * KIB).prop_flat_map(|n| (Just(n), limit_strategy(n))),
        seed in any::<u64>(),
        compressible in any::<bool>(),
        sizes in prop::collection::vec(1usize..20 * KIB, 1..6),
    ) {
        let data = sample(len, seed, compressible);
        let encoded = format.encode(&data);
        let got = decode(format, &encoded, &sizes, limit);
        if encoded.len() as u64 > limit {
            // Over the limit as sent (or first as decoded): 413.
            prop_assert!(matches!(got, Err(BodyError::TooLarge { .. })), "{:?}", got.map(|v| v.len()));
        } else if data.len() as u64 > limit {
            // Over the limit as decoded: seen one byte past it, never later.
            prop_assert_eq!(got, Err(BodyError::TooLarge { limit, length: None, received: limit + 1 }));
        } else {
            prop_assert!(got.as_deref() == Ok(&data[..]), "{:?}", got.map(|v| v.len()));
        }
    }

    #[test]
    fn every_decoder_agrees_with_the_reference_on_corrupt_input(
        format in format(),
        len in 0usize..20 * KIB,
        seed in any::<u64>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 0..4),
        cut in prop::option::of(any::<prop::sample::Index>()),
        sizes in prop::collection::vec(1usize..5 * KIB, 1..6),
    ) {
        let data = sample(len, seed, true);
        let mut encoded = format.encode(&data);
        for (at, x) in &flips {
            if !encoded.is_empty() {
                let i = at.index(encoded.len());
                encoded[i] ^= x;
            }
        }
        if let Some(cut) = cut {
            let n = cut.index(encoded.len() + 1);
            encoded.truncate(n);
        }
        let limit = 1u64 << 20;
        match decode(format, &encoded, &sizes, limit) {
            // Whatever uws-body accepts, the reference decodes to the same bytes.
            Ok(ours) => prop_assert_eq!(Some(ours), format.reference(&encoded, limit as usize)),
            Err(e) => prop_assert!(
                matches!(e.status(), 400 | 413),
                "{:?}", e
            ),
        }
    }
}

/// Reads a body through `BodyStream`: chunks cut by `sizes`, the reader's room cycling
/// through `rooms`, and after each chunk as many reads as `reads` says (0 leaves decoded
/// bytes waiting while the next chunk arrives, as a paused stream does). The bytes handed
/// out, or the error.
fn stream_run(
    options: &BodyOptions,
    data: &[u8],
    sizes: &[usize],
    rooms: &[usize],
    reads: &[u8],
) -> Result<Vec<u8>, BodyError> {
    use std::mem::MaybeUninit;
    let mut stream = BodyStream::new(options);
    let mut out = Vec::new();
    let mut room = vec![MaybeUninit::<u8>::uninit(); 70 * KIB];
    let mut turn = 0usize;
    let mut next_room = || {
        turn += 1;
        rooms[turn % rooms.len()]
    };
    let failed = |stream: &BodyStream| {
        assert_eq!(stream.held(), 0, "memory released on error");
        Err(stream.error().cloned().expect("error set"))
    };
    // Called only with the n of `Piece::Data(n)`: the stream initialized those bytes.
    let bytes = |room: &[MaybeUninit<u8>], n: usize| {
        // SAFETY: the first n bytes of `room` were initialized (see above).
        unsafe { std::slice::from_raw_parts(room.as_ptr().cast::<u8>(), n).to_vec() }
    };
    for (i, chunk) in chunks(data, sizes).enumerate() {
        let r = next_room();
        match stream.write(chunk, &mut room[..r]).expect("no misuse") {
            Piece::Data(n) => out.extend(bytes(&room, n)),
            Piece::NeedInput if stream.is_identity() => out.extend_from_slice(chunk),
            Piece::NeedInput => {}
            Piece::Failed => return failed(&stream),
            Piece::Done => panic!("done before the end"),
        }
        for _ in 0..reads[i % reads.len()] {
            let r = next_room();
            match stream.read(&mut room[..r]).expect("no misuse") {
                Piece::Data(n) => out.extend(bytes(&room, n)),
                Piece::NeedInput => break,
                Piece::Failed => return failed(&stream),
                Piece::Done => panic!("done before the end"),
            }
        }
    }
    stream.end().expect("no misuse");
    loop {
        let r = next_room();
        match stream.read(&mut room[..r]).expect("no misuse") {
            Piece::Data(n) => out.extend(bytes(&room, n)),
            Piece::NeedInput => panic!("needs input after the end"),
            Piece::Failed => return failed(&stream),
            Piece::Done => return Ok(out),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// BodyStream is Body handed out piece by piece: for any body (unencoded, encoded,
    /// corrupt or cut), declared length, limit, chunking, reader room and pace of reading,
    /// it hands out exactly Body's bytes, or fails with exactly Body's error.
    #[test]
    fn a_stream_gives_bodys_bytes_and_bodys_error_under_any_chunking_and_pace(
        format in prop::option::of(format()),
        len in 0usize..60 * KIB,
        seed in any::<u64>(),
        compressible in any::<bool>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 0..3),
        cut in prop::option::of(any::<prop::sample::Index>()),
        declared_pick in 0u8..4,
        limit_pick in 0u8..7,
        sizes in prop::collection::vec(1usize..20 * KIB, 1..6),
        rooms in prop::collection::vec(prop_oneof![1usize..64, 1usize..70 * KIB], 1..6),
        reads in prop::collection::vec(0u8..4, 1..6),
    ) {
        let data = sample(len, seed, compressible);
        let mut sent = match format {
            Some(f) => f.encode(&data),
            None => data.clone(),
        };
        for (at, x) in &flips {
            if !sent.is_empty() && format.is_some() {
                let i = at.index(sent.len());
                sent[i] ^= x;
            }
        }
        if let Some(cut) = cut.filter(|_| format.is_some()) {
            let n = cut.index(sent.len() + 1);
            sent.truncate(n);
        }
        let n = sent.len() as u64;
        let declared = match declared_pick {
            0 => None,
            1 => Some(n),
            2 => Some(n.saturating_sub(1)),
            _ => Some(n + 1),
        };
        let d = data.len() as u64;
        let limit = match limit_pick {
            0 => n,
            1 => n.saturating_sub(1),
            2 => d,
            3 => d.saturating_sub(1),
            4 => seed % (64 * KIB as u64),
            5 => u64::MAX,
            _ => u64::MAX >> 11,
        };
        let options = BodyOptions {
            content_length: declared,
            limit,
            max_preallocated: 1 << 20,
            content_encoding: format.map(|f| f.header().into()),
            decode: true,
            known_minimum: 0,
            digest: Default::default(),
        };
        let expected = run(Body::new(&options), &sent, &sizes);
        prop_assert_eq!(stream_run(&options, &sent, &sizes, &rooms, &reads), expected);
    }
}
