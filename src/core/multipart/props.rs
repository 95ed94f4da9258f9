//! Property tests: any form, serialized and cut anywhere, read with rooms of any size,
//! gives back exactly the generated parts; and any body, valid or mangled, under any
//! limits, ends the same way however it is cut.

use proptest::prelude::*;

use super::tests::{drive, Outcome, Part};
use super::upload::Outcome as Routing;
use super::*;
use crate::core::decode::Decoder;
use crate::core::encoding::Coding;
use std::mem::MaybeUninit;

/// RFC 2046 `bchars`.
const BCHARS: &[u8] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ";

fn boundary() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(BCHARS), 1..=MAX_BOUNDARY).prop_map(|mut b| {
        if b.last() == Some(&b' ') {
            *b.last_mut().unwrap() = b'x';
        }
        b
    })
}

/// Bytes that a quoted string may hold (escaped where needed): no CR, LF or other
/// control character but tab.
fn header_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            Just(b'\t'),
            0x20u8..=0x7e,
            0x80u8..=0xff,
            Just(b'"'),
            Just(b'\\'),
        ],
        0..max,
    )
}

#[derive(Debug, Clone)]
enum GenName {
    Plain(Vec<u8>),
    /// Sent as `filename*=UTF-8''...`.
    Extended(String),
}

#[derive(Debug, Clone)]
struct GenPart {
    name: Option<Vec<u8>>,
    filename: Option<GenName>,
    content_type: Option<&'static str>,
    data: Vec<u8>,
}

/// Part bodies made to look like delimiters: CRLFs, dashes, and pieces of the boundary.
fn data(boundary: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..24),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"--".to_vec()),
        Just(b"\r\n-".to_vec()),
        Just([&b"--"[..], &boundary].concat()),
        (0..boundary.len()).prop_map({
            let b = boundary.clone();
            move |k| [&b"\r\n--"[..], &b[..k]].concat()
        }),
    ];
    prop::collection::vec(piece, 0..12).prop_map(move |pieces| {
        let mut data = pieces.concat();
        // No whole delimiter: its first dash becomes a plus (fewer dashes each time).
        let delimiter = [&b"\r\n--"[..], &boundary].concat();
        while let Some(at) = memchr::memmem::find(&data, &delimiter) {
            data[at + 2] = b'+';
        }
        // Nor one the header block's closing CRLF begins (a malformed header, as busboy).
        if data.starts_with(&delimiter[2..]) {
            data[0] = b'+';
        }
        data
    })
}

fn part(boundary: Vec<u8>) -> impl Strategy<Value = GenPart> {
    let filename = prop_oneof![
        2 => Just(None),
        2 => header_bytes(12).prop_map(|n| Some(GenName::Plain(n))),
        // Tab but no other control character: one decoded from a `%XX` is refused
        // (dangerous_file_names_are_refused_or_reported_raw).
        1 => "[a-z\u{e9}\u{20ac}/. %\t-]{1,8}".prop_map(|n| Some(GenName::Extended(n))),
    ];
    let content_type = prop::option::of(prop::sample::select(vec![
        "text/plain",
        "application/octet-stream",
        "Image/PNG",
        "text/plain; charset=UTF-8",
        "application/json ; charset=\"utf-8\"",
    ]));
    (
        prop::option::of(header_bytes(10)),
        filename,
        content_type,
        data(boundary),
    )
        .prop_map(|(name, filename, content_type, data)| GenPart {
            name,
            filename,
            content_type,
            data,
        })
}

fn quoted(bytes: &[u8]) -> Vec<u8> {
    let mut q = vec![b'"'];
    for &b in bytes {
        if b == b'"' || b == b'\\' {
            q.push(b'\\');
        }
        q.push(b);
    }
    q.push(b'"');
    q
}

fn serialize(boundary: &[u8], preamble: &[u8], parts: &[GenPart], epilogue: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    if !preamble.is_empty() {
        body.extend_from_slice(preamble);
        body.extend_from_slice(b"\r\n");
    }
    for p in parts {
        body.extend_from_slice(b"--");
        body.extend_from_slice(boundary);
        body.extend_from_slice(b"\r\nContent-Disposition: form-data");
        if let Some(name) = &p.name {
            body.extend_from_slice(b"; name=");
            body.extend_from_slice(&quoted(name));
        }
        match &p.filename {
            None => {}
            Some(GenName::Plain(f)) => {
                body.extend_from_slice(b"; filename=");
                body.extend_from_slice(&quoted(f));
            }
            Some(GenName::Extended(f)) => {
                body.extend_from_slice(b"; filename*=UTF-8''");
                for &b in f.as_bytes() {
                    if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
                        body.push(b);
                    } else {
                        body.extend_from_slice(format!("%{b:02X}").as_bytes());
                    }
                }
            }
        }
        body.extend_from_slice(b"\r\n");
        if let Some(ct) = p.content_type {
            body.extend_from_slice(format!("Content-Type: {ct}\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(&p.data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"--");
    body.extend_from_slice(boundary);
    body.extend_from_slice(b"--");
    body.extend_from_slice(epilogue);
    body
}

/// The part the parser must report for a generated one.
fn expected(p: &GenPart) -> Part {
    let filename = match &p.filename {
        Some(GenName::Plain(f)) if !f.is_empty() => Some(Filename {
            bytes: f.clone(),
            encoding: NameEncoding::Raw,
        }),
        Some(GenName::Extended(f)) => Some(Filename {
            bytes: f.clone().into_bytes(),
            encoding: NameEncoding::Utf8,
        }),
        _ => None,
    };
    let (mime, charset) = match p.content_type {
        None => (None, None),
        Some(ct) => {
            let (essence, charset) = ct.split_once(';').unwrap_or((ct, ""));
            let charset = charset.contains("utf-8") || charset.contains("UTF-8");
            (
                Some(essence.trim().to_ascii_lowercase()),
                charset.then(|| b"utf-8".to_vec()),
            )
        }
    };
    let is_file = filename.is_some() || mime.as_deref() == Some("application/octet-stream");
    Part {
        head: PartHead {
            name: p.name.clone().filter(|n| !n.is_empty()),
            filename,
            mime,
            charset,
            transfer_encoding: None,
            is_file,
        },
        data: p.data.clone(),
        complete: true,
    }
}

/// Cuts `body` at these places (any order, repeats and out-of-range ones fold in).
fn cut<'a>(body: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    at.sort_unstable();
    let mut pieces = Vec::new();
    let mut from = 0;
    for a in at.into_iter().chain([body.len()]) {
        pieces.push(&body[from..a]);
        from = a;
    }
    pieces
}

fn run(boundary: &[u8], limits: &Limits, chunks: &[&[u8]], max: usize) -> Outcome {
    let boundary = Boundary::new(boundary).expect("a valid boundary");
    drive(&mut Multipart::new(&boundary, limits.clone()), chunks, max)
}

fn form() -> impl Strategy<Value = (Vec<u8>, Vec<u8>, Vec<GenPart>, Vec<u8>)> {
    boundary().prop_flat_map(|b| {
        (
            Just(b.clone()),
            prop::collection::vec(
                any::<u8>().prop_filter("no CR or dash", |&c| c != b'\r' && c != b'-'),
                0..16,
            ),
            prop::collection::vec(part(b.clone()), 0..6),
            prop_oneof![
                Just(Vec::new()),
                Just(b"\r\n".to_vec()),
                prop::collection::vec(any::<u8>(), 0..32),
                data(b),
            ],
        )
    })
}

fn rooms() -> impl Strategy<Value = usize> {
    prop_oneof![Just(usize::MAX), 1..8usize, 8..300usize]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_split_of_any_form_gives_its_parts(
        (boundary, preamble, parts, epilogue) in form(),
        cuts in prop::collection::vec(any::<usize>(), 0..24),
        max in rooms(),
    ) {
        let body = serialize(&boundary, &preamble, &parts, &epilogue);
        let limits = Limits { field_size: u64::MAX, ..Limits::default() };
        let whole = run(&boundary, &limits, &[&body], usize::MAX);
        let want: Vec<Part> = parts.iter().map(expected).collect();
        prop_assert_eq!(&whole, &(want, Ok(())));
        let split = run(&boundary, &limits, &cut(&body, &cuts), max);
        prop_assert_eq!(split, whole);
        // Byte by byte, with the smallest room.
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        prop_assert_eq!(run(&boundary, &limits, &bytes, 1), run(&boundary, &limits, &[&body], 7));
    }

    #[test]
    fn any_body_ends_the_same_however_it_is_cut(
        (boundary, preamble, parts, epilogue) in form(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), 0..3u8), 0..4),
        truncate in prop::option::of(any::<usize>()),
        limits in (0..4u64, 0..64u64, 0..4u64, 0..64u64, 0..4u64, 0..8u64, 1..6u64, 0..200usize),
        cuts in prop::collection::vec(any::<usize>(), 0..24),
        max in rooms(),
    ) {
        let mut body = serialize(&boundary, &preamble, &parts, &epilogue);
        for (at, byte, how) in edits {
            let at = at % (body.len() + 1);
            match how {
                0 if at < body.len() => body[at] = byte,
                1 => body.insert(at, byte),
                _ if at < body.len() => { body.remove(at); }
                _ => {}
            }
        }
        if let Some(t) = truncate {
            body.truncate(t % (body.len() + 1));
        }
        let (field_name_size, field_size, fields, file_size, files, parts, header_pairs, header_size) = limits;
        let limits = Limits {
            field_name_size: field_name_size * 4,
            field_size,
            fields,
            file_size,
            files,
            parts,
            header_pairs,
            header_size: header_size + 40,
        };
        let (whole, result) = run(&boundary, &limits, &[&body], usize::MAX);
        let (split, split_result) = run(&boundary, &limits, &cut(&body, &cuts), max);
        prop_assert_eq!(&split_result, &result);
        prop_assert_eq!(split.len(), whole.len());
        for (s, w) in split.iter().zip(&whole) {
            prop_assert_eq!(&s.head, &w.head);
            prop_assert_eq!(s.complete, w.complete);
            if s.complete {
                prop_assert_eq!(&s.data, &w.data);
            } else {
                // Cut short by a size limit: as much as each was handed before it.
                let n = s.data.len().min(w.data.len());
                prop_assert_eq!(&s.data[..n], &w.data[..n]);
            }
        }
    }
}

/// What an `Upload` put where, for parts routed to sinks by their index: fields' values,
/// arena ranges and bytes, the room's bytes, and how it ended.
#[derive(Debug, PartialEq, Eq)]
struct Routed {
    fields: Vec<Vec<u8>>,
    ranges: Vec<(usize, usize)>,
    arena: Vec<u8>,
    streamed: Vec<u8>,
    done: bool,
}

fn sink_for(index: usize) -> Sink {
    [Sink::Field, Sink::Arena, Sink::Room, Sink::Skip][index % 4]
}

fn route(boundary: &[u8], chunks: &[&[u8]], room: usize, expected: Option<u64>) -> Routed {
    let boundary = Boundary::new(boundary).expect("a valid boundary");
    let upload = Upload::new(Multipart::new(&boundary, unlimited_fields()), 16, expected);
    route_upload(upload, chunks, room)
}

fn unlimited_fields() -> Limits {
    Limits {
        field_size: u64::MAX,
        ..Limits::default()
    }
}

/// `route` for the form encoded in `coding` (the chunks are of the encoded body).
fn route_encoded(boundary: &[u8], coding: Coding, chunks: &[&[u8]], room: usize) -> Routed {
    let boundary = Boundary::new(boundary).expect("a valid boundary");
    let decoder = Decoder::new(&[coding], u64::MAX).expect("a coding");
    let parser = Multipart::new(&boundary, unlimited_fields());
    let upload = Upload::with_decoding(parser, 16, Decoding::new(decoder));
    route_upload(upload, chunks, room)
}

fn route_upload(mut upload: Upload, chunks: &[&[u8]], room: usize) -> Routed {
    let mut out = Routed {
        fields: Vec::new(),
        ranges: Vec::new(),
        arena: Vec::new(),
        streamed: Vec::new(),
        done: false,
    };
    let mut space = vec![MaybeUninit::new(0u8); room];
    let (mut sink, mut parts, mut start) = (Sink::Skip, 0, 0);
    let last = chunks.len() - 1;
    for (i, chunk) in chunks.iter().enumerate() {
        let mut at = 0;
        loop {
            if i == last && at == chunk.len() && !out.done {
                // Once the last chunk is consumed, end() and then drain to the outcome.
                let _ = upload.end();
            }
            let fed = upload.feed(&chunk[at..], sink, &mut space).unwrap();
            at += fed.consumed;
            for b in &space[..fed.written] {
                // SAFETY: feed initialized the first `written` bytes of the room.
                out.streamed.push(unsafe { b.assume_init() });
            }
            match fed.outcome {
                Routing::Part => {
                    sink = sink_for(parts);
                    parts += 1;
                    start = upload.arena_len();
                }
                Routing::Data => {}
                Routing::PartEnd => {
                    match sink {
                        Sink::Field => out.fields.push(upload.take_field()),
                        Sink::Arena => out.ranges.push((start, upload.arena_len())),
                        _ => {}
                    }
                    sink = Sink::Skip;
                }
                Routing::NeedInput if i == last && at == chunk.len() => {}
                Routing::NeedInput => break,
                Routing::Done => {
                    out.done = true;
                    break;
                }
                Routing::Failed => break,
            }
        }
    }
    out.arena = upload.take_arena().as_slice().to_vec();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn an_upload_puts_each_byte_of_each_part_in_its_sink(
        (boundary, preamble, parts, epilogue) in form(),
        cuts in prop::collection::vec(any::<usize>(), 0..24),
        room in 1..300usize,
        known in any::<bool>(),
    ) {
        let body = serialize(&boundary, &preamble, &parts, &epilogue);
        let expected = known.then_some(body.len() as u64);
        let got = route(&boundary, &cut(&body, &cuts), room, expected);
        let mut want = Routed { fields: Vec::new(), ranges: Vec::new(), arena: Vec::new(), streamed: Vec::new(), done: true };
        for (i, p) in parts.iter().enumerate() {
            match sink_for(i) {
                Sink::Field => want.fields.push(p.data.clone()),
                Sink::Arena => {
                    let start = want.arena.len();
                    want.arena.extend_from_slice(&p.data);
                    want.ranges.push((start, want.arena.len()));
                }
                Sink::Room | Sink::Pending => want.streamed.extend_from_slice(&p.data),
                Sink::Skip => {}
            }
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn an_encoded_form_routes_as_its_decoded_bytes(
        (boundary, preamble, parts, epilogue) in form(),
        cuts in prop::collection::vec(any::<usize>(), 0..24),
        room in 1..300usize,
        coding in prop::sample::select(vec![Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd]),
    ) {
        let body = serialize(&boundary, &preamble, &parts, &epilogue);
        let plain = route(&boundary, &[&body[..]], room, None);
        let encoded = encode(coding, &body);
        let got = route_encoded(&boundary, coding, &cut(&encoded, &cuts), room);
        prop_assert_eq!(got, plain);
    }
}

/// `data` in `coding`, as a client would send it.
pub(super) fn encode(coding: Coding, data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    match coding {
        Coding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Coding::Deflate => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Coding::Brotli => {
            let mut out = Vec::new();
            brotli::BrotliCompress(&mut &data[..], &mut out, &Default::default()).unwrap();
            out
        }
        Coding::Zstd => {
            let mut out = vec![0u8; zstd_safe::compress_bound(data.len())];
            let n = zstd_safe::compress(&mut out[..], data, 1).unwrap();
            out.truncate(n);
            out
        }
    }
}
