//! Any boundary (from a list or from a content-type line), any limits, any bytes, any
//! chunking and room size: no panic; bounded memory; events in order (data only inside a
//! part, nothing after the end or an error, no data over its limit); a client error with
//! its memory released; and the same outcome read in one piece with `next` as cut in
//! chunks with `read`; and, through an `Upload` routing parts to every sink, each
//! complete part's bytes in its sink, and nothing held after a failure; with the form's
//! digest declared, the same outcome when it matches and a mismatch when it does not.
#![no_main]

use std::mem::MaybeUninit;

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;
use libfuzzer_sys::fuzz_target;
use uws_body::core::decode::Decoder;
use uws_body::core::digest::{Algorithm, Declared, Hasher, Header};
use uws_body::core::encoding::Coding;
use uws_body::core::multipart::{
    Boundary, Decoding, Event, Limits, Multipart, Outcome, Piece, Sink, Step, Upload, MAX_BOUNDARY,
};

const BOUNDARIES: [&str; 6] = [
    "b",
    "----WebKitFormBoundary7MA4YWxkTrZu0gW",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "--",
    "a b",
    "'()+_,-./:=?",
];

/// What a body gave: each part's head (debug form) and data, whether it ended, and the
/// outcome's code.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    parts: Vec<(String, Vec<u8>, bool)>,
    end: Result<(), &'static str>,
}

fn scale(b: u8, unit: u64) -> u64 {
    if b == 0xff {
        u64::MAX
    } else {
        u64::from(b) * unit
    }
}

fn nibble(b: u8) -> u64 {
    if b == 0xf {
        u64::MAX
    } else {
        u64::from(b)
    }
}

struct Checker {
    limits: Limits,
    seen: Seen,
    open: bool,
    max: usize,
}

impl Checker {
    fn data(&mut self, data: &[u8]) {
        assert!(self.open, "data outside a part");
        assert!(!data.is_empty() && data.len() <= self.max);
        let part = self.seen.parts.last_mut().unwrap();
        part.1.extend_from_slice(data);
        let limit = if part.0.contains("is_file: true") {
            self.limits.file_size
        } else {
            self.limits.field_size
        };
        assert!(part.1.len() as u64 <= limit, "data over its limit");
    }

    fn part(&mut self, head: String) {
        assert!(!self.open, "a part inside a part");
        self.open = true;
        self.seen.parts.push((head, Vec::new(), false));
        assert!(self.seen.parts.len() as u64 <= self.limits.parts);
    }

    fn part_end(&mut self) {
        assert!(self.open, "the end of no part");
        self.open = false;
        self.seen.parts.last_mut().unwrap().2 = true;
    }

    fn finish(&mut self, m: &mut Multipart, failed: bool) {
        assert_eq!(m.held(), 0, "memory kept at the end");
        if failed {
            let error = m.error().expect("an error");
            assert!(matches!(error.status(), 400 | 413), "{error:?}");
            self.seen.end = Err(error.code());
        } else {
            assert!(!self.open, "done inside a part");
            self.seen.end = Ok(());
        }
        // Finished for good: later bytes are all taken, and change nothing.
        let again = m.next(b"\r\n--b\r\n", 1).expect("no misuse");
        assert_eq!(again.consumed, 7);
        assert_eq!(
            again.event,
            if failed { Event::Failed } else { Event::Done }
        );
    }
}

fn bound(limits: &Limits) -> usize {
    MAX_BOUNDARY + 4 + limits.header_size.max(256)
}

/// All of `body` in one piece, through `next`.
fn whole(boundary: &Boundary, limits: &Limits, body: &[u8]) -> Seen {
    let mut m = Multipart::new(boundary, limits.clone());
    let mut c = Checker {
        limits: limits.clone(),
        seen: Seen {
            parts: Vec::new(),
            end: Ok(()),
        },
        open: false,
        max: usize::MAX,
    };
    let mut input = body;
    let mut ended = false;
    loop {
        let Step { consumed, event } = m.next(input, usize::MAX).expect("no misuse");
        input = &input[consumed..];
        match event {
            Event::Part(head) => c.part(format!("{head:?}")),
            Event::Data(data) => c.data(data),
            Event::PartEnd => c.part_end(),
            Event::NeedInput => {
                assert!(input.is_empty() && !ended);
                assert!(m.held() <= bound(limits));
                m.end().expect("no misuse");
                ended = true;
            }
            Event::Done | Event::Failed => {
                assert!(input.is_empty());
                let failed = event == Event::Failed;
                c.finish(&mut m, failed);
                return c.seen;
            }
        }
    }
}

/// `body` in chunks of `step` bytes, through `read` into a room of `max` bytes.
fn chunked(boundary: &Boundary, limits: &Limits, body: &[u8], step: usize, max: usize) -> Seen {
    let mut m = Multipart::new(boundary, limits.clone());
    let mut c = Checker {
        limits: limits.clone(),
        seen: Seen {
            parts: Vec::new(),
            end: Ok(()),
        },
        open: false,
        max,
    };
    let mut room = vec![MaybeUninit::<u8>::uninit(); max];
    let mut chunks = body.chunks(step);
    let mut input: &[u8] = chunks.next().unwrap_or(&[]);
    let mut ended = false;
    loop {
        let (consumed, piece) = m.read(input, &mut room).expect("no misuse");
        assert!(consumed <= input.len());
        input = &input[consumed..];
        match piece {
            Piece::Part => c.part(format!("{:?}", m.head())),
            Piece::Data(n) => {
                // SAFETY: `read` wrote the room's first `n` bytes.
                let data = unsafe { std::slice::from_raw_parts(room.as_ptr().cast::<u8>(), n) };
                c.data(data);
            }
            Piece::PartEnd => c.part_end(),
            Piece::NeedInput => {
                assert!(input.is_empty() && !ended);
                assert!(m.held() <= bound(limits), "{} bytes held", m.held());
                match chunks.next() {
                    Some(chunk) => input = chunk,
                    None => {
                        m.end().expect("no misuse");
                        ended = true;
                    }
                }
            }
            Piece::Done | Piece::Failed => {
                c.finish(&mut m, piece == Piece::Failed);
                return c.seen;
            }
        }
    }
}

/// Each complete part's data by sink (parts routed by index), and how the body ended.
#[derive(Debug, PartialEq, Eq)]
struct Routed {
    fields: Vec<Vec<u8>>,
    arena: Vec<u8>,
    streamed: Vec<u8>,
    end: Result<(), &'static str>,
}

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

fn sink_for(index: usize) -> Sink {
    [Sink::Field, Sink::Arena, Sink::Room, Sink::Skip][index % 4]
}

/// `body` in chunks of `step` bytes through `upload` with a room of `max` bytes.
fn routed(mut upload: Upload, body: &[u8], step: usize, max: usize) -> Routed {
    let mut r = Routed {
        fields: Vec::new(),
        arena: Vec::new(),
        streamed: Vec::new(),
        end: Ok(()),
    };
    let mut room = vec![MaybeUninit::<u8>::uninit(); max];
    let mut part_streamed = Vec::new();
    let (mut sink, mut parts, mut start) = (Sink::Skip, 0, 0);
    let mut chunks = body.chunks(step);
    let mut input: &[u8] = chunks.next().unwrap_or(&[]);
    loop {
        let fed = upload.feed(input, sink, &mut room).expect("no misuse");
        input = &input[fed.consumed..];
        // SAFETY: `feed` wrote the room's first `written` bytes.
        let data = unsafe { std::slice::from_raw_parts(room.as_ptr().cast::<u8>(), fed.written) };
        part_streamed.extend_from_slice(data);
        match fed.outcome {
            Outcome::Part => {
                sink = sink_for(parts);
                parts += 1;
                start = upload.arena_len();
                part_streamed.clear();
            }
            Outcome::Data => {}
            Outcome::PartEnd => {
                match sink {
                    Sink::Field => r.fields.push(upload.take_field()),
                    Sink::Arena => assert!(upload.arena_len() >= start),
                    Sink::Room | Sink::Pending => r.streamed.append(&mut part_streamed),
                    Sink::Skip => {}
                }
                sink = Sink::Skip;
            }
            Outcome::NeedInput => match chunks.next() {
                Some(chunk) => input = chunk,
                None => upload.end().expect("no misuse"),
            },
            Outcome::Done => {
                r.arena = upload.take_arena().as_slice().to_vec();
                return r;
            }
            Outcome::Failed => {
                assert_eq!(upload.arena_len(), 0, "arena kept after a failure");
                assert_eq!(upload.parser().held(), 0, "memory kept after a failure");
                r.end = Err(upload
                    .error()
                    .map(|e| e.code())
                    .or(upload.body_error().map(|e| e.code()))
                    .unwrap_or("none"));
                return r;
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((h, mut body)) = data.split_first_chunk::<8>() else {
        return;
    };
    let boundary = if h[0] < 0x80 {
        Boundary::new(BOUNDARIES[usize::from(h[0]) % BOUNDARIES.len()].as_bytes()).unwrap()
    } else {
        // A content-type line first.
        let line = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
        let parsed = Boundary::from_content_type(&body[..line]);
        body = &body[(line + 1).min(body.len())..];
        match parsed {
            Ok(b) => {
                assert!((1..=MAX_BOUNDARY).contains(&b.as_bytes().len()));
                b
            }
            Err(error) => {
                assert!(matches!(error.status(), 400 | 415), "{error:?}");
                return;
            }
        }
    };
    let limits = Limits {
        field_name_size: nibble(h[5] >> 4).saturating_mul(4),
        field_size: scale(h[1], 16),
        fields: nibble(h[3] & 0xf),
        file_size: scale(h[1], 64),
        files: nibble(h[3] >> 4),
        parts: scale(h[2], 1),
        header_pairs: 1 + u64::from(h[5] & 0xf),
        header_size: 40 + usize::from(h[4]) * 64,
    };
    let step = 1 + usize::from(h[6]) * 37;
    let max = if h[7] == 0 {
        1 << 16
    } else {
        usize::from(h[7]) * usize::from(h[7]) / 16 + 1
    };
    let one = whole(&boundary, &limits, body);
    let cut = chunked(&boundary, &limits, body, step, max);
    assert_eq!(one.end, cut.end, "the outcome depends on the chunking");
    assert_eq!(one.parts.len(), cut.parts.len());
    for (a, b) in one.parts.iter().zip(&cut.parts) {
        assert_eq!(a.0, b.0);
        assert_eq!(a.2, b.2);
        if a.2 {
            assert!(a.1 == b.1, "a part's data depends on the chunking");
        }
    }
    let expected = match h[6] & 3 {
        0 => None,
        1 => Some(body.len() as u64),
        2 => Some(u64::from(h[7])), // a declared length the body does not keep
        _ => Some(u64::MAX),
    };
    let parser = || Multipart::new(&boundary, limits.clone());
    let r = routed(Upload::new(parser(), 64, expected), body, step, max);
    if h[6] & 4 != 0 {
        // The same form gzipped: decoding is transparent, whatever the cutting.
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(body).unwrap();
        let gz = e.finish().unwrap();
        let decoding = Decoding::new(Decoder::new(&[Coding::Gzip], u64::MAX).unwrap());
        let decoded = routed(
            Upload::with_decoding(parser(), 64, decoding),
            &gz,
            step,
            max,
        );
        assert!(
            decoded == r,
            "a gzipped form routes differently: {:?} / {:?}",
            decoded.end,
            r.end
        );
    }
    if h[6] & 8 != 0 {
        // The form's own declared digest (over the bytes sent, or of other bytes): a match
        // routes every byte as without it; a mismatch fails a form that would have parsed,
        // holding nothing, and leaves a form's own error as it was.
        let wrong = h[7] & 1 != 0;
        let mut over = body.to_vec();
        if wrong {
            over.push(0);
        }
        let upload = Upload::new(parser(), 64, expected)
            .with_declared_digests(declared(Header::ContentDigest, &over));
        let checked = routed(upload, body, step, max);
        if wrong && r.end.is_ok() {
            assert_eq!(checked.end, Err("ERR_BODY_DIGEST_MISMATCH"));
        } else {
            assert!(
                checked == r,
                "a declared digest changed the form: {:?} / {:?}",
                checked.end,
                r.end
            );
        }
    }
    // A skipped part is held to no size limit (nobody keeps its bytes): only a size
    // limit may end the body differently.
    let size_limit =
        |e: &Result<(), &str>| matches!(e, Err("LIMIT_FILE_SIZE" | "LIMIT_FIELD_VALUE"));
    assert!(
        r.end == one.end || size_limit(&one.end),
        "the outcome depends on the sinks: {:?} / {:?}",
        r.end,
        one.end
    );
    if one.end.is_ok() {
        let mut want = Routed {
            fields: Vec::new(),
            arena: Vec::new(),
            streamed: Vec::new(),
            end: Ok(()),
        };
        for (i, part) in one.parts.iter().enumerate() {
            match sink_for(i) {
                Sink::Field => want.fields.push(part.1.clone()),
                Sink::Arena => want.arena.extend_from_slice(&part.1),
                Sink::Room | Sink::Pending => want.streamed.extend_from_slice(&part.1),
                Sink::Skip => {}
            }
        }
        assert!(r == want, "a sink lost or changed bytes");
    }
});
