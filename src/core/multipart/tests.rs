use std::mem::MaybeUninit;

use super::*;

/// A part as the caller sees it: its head and its body, put together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Part {
    pub head: PartHead,
    pub data: Vec<u8>,
    /// `PartEnd` was seen.
    pub complete: bool,
}

pub(super) type Outcome = (Vec<Part>, Result<(), MultipartError>);

/// Feeds `chunks` (then the end) with at most `max` bytes of data a call, checking that
/// the events make sense, and returns the parts and how the body ended.
pub(super) fn drive(m: &mut Multipart, chunks: &[&[u8]], max: usize) -> Outcome {
    let bound = MAX_DELIMITER + m.limits.header_size.max(256);
    let mut parts: Vec<Part> = Vec::new();
    let mut open = false;
    let mut finished = None;
    let mut feed = |m: &mut Multipart, mut input: &[u8], parts: &mut Vec<Part>| loop {
        let Step { consumed, event } = m.next(input, max).expect("no misuse");
        assert!(consumed <= input.len());
        input = &input[consumed..];
        match event {
            Event::Part(head) => {
                assert!(!open, "a part began inside another");
                open = true;
                parts.push(Part {
                    head: head.clone(),
                    data: Vec::new(),
                    complete: false,
                });
            }
            Event::Data(data) => {
                assert!(open, "data outside a part");
                assert!(!data.is_empty() && data.len() <= max.max(1));
                parts.last_mut().unwrap().data.extend_from_slice(data);
            }
            Event::PartEnd => {
                assert!(open, "the end of no part");
                open = false;
                parts.last_mut().unwrap().complete = true;
            }
            Event::NeedInput => {
                assert!(input.is_empty(), "more input wanted with input left");
                assert!(m.held() <= bound, "{} bytes held", m.held());
                return None;
            }
            Event::Done => {
                assert!(!open, "done inside a part");
                assert!(input.is_empty());
                assert_eq!(m.held(), 0);
                return Some(Ok(()));
            }
            Event::Failed => {
                assert!(input.is_empty());
                assert_eq!(m.held(), 0, "memory kept after an error");
                return Some(Err(m.error().expect("an error").clone()));
            }
        }
    };
    for chunk in chunks {
        if let Some(result) = feed(m, chunk, &mut parts) {
            finished = Some(result);
            break;
        }
    }
    let result = match finished {
        Some(result) => result,
        None => {
            m.end().expect("no misuse");
            feed(m, &[], &mut parts).expect("an end")
        }
    };
    // Once finished, it stays so and takes everything.
    let again = m.next(b"more", max).unwrap();
    assert_eq!(again.consumed, 4);
    assert_eq!(
        again.event,
        if result.is_ok() {
            Event::Done
        } else {
            Event::Failed
        }
    );
    (parts, result)
}

const B: &str = "----WebKitFormBoundary7MA4YWxkTrZu0gW";

fn parser(limits: Limits) -> Multipart {
    Multipart::new(&Boundary::new(B.as_bytes()).unwrap(), limits)
}

fn parse(body: &[u8]) -> Outcome {
    drive(&mut parser(Limits::default()), &[body], usize::MAX)
}

fn parse_with(body: &[u8], limits: Limits) -> Outcome {
    drive(&mut parser(limits), &[body], usize::MAX)
}

/// `body` in every split in two, byte by byte, and in rooms of 1 and 3 bytes: all the
/// same as in one piece.
fn parse_every_way(body: &[u8]) -> Outcome {
    let whole = parse(body);
    for cut in 0..=body.len() {
        let (a, b) = body.split_at(cut);
        let split = drive(&mut parser(Limits::default()), &[a, b], usize::MAX);
        assert_eq!(split, whole, "split at {cut}");
    }
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(
        drive(&mut parser(Limits::default()), &bytes, usize::MAX),
        whole
    );
    for max in [1, 3] {
        assert_eq!(drive(&mut parser(Limits::default()), &[body], max), whole);
    }
    whole
}

/// A body of these parts: (headers, data).
fn form(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (headers, data) in parts {
        body.extend_from_slice(format!("--{B}\r\n{headers}\r\n\r\n").as_bytes());
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{B}--\r\n").as_bytes());
    body
}

fn field(name: &str) -> String {
    format!("Content-Disposition: form-data; name=\"{name}\"")
}

fn head(name: &str) -> PartHead {
    PartHead {
        name: Some(name.into()),
        ..PartHead::default()
    }
}

fn raw_name(name: &str) -> Option<Filename> {
    Some(Filename {
        bytes: name.into(),
        encoding: NameEncoding::Raw,
    })
}

fn part(head: PartHead, data: &[u8]) -> Part {
    Part {
        head,
        data: data.to_vec(),
        complete: true,
    }
}

fn only_head(body: &[u8]) -> PartHead {
    let (parts, result) = parse(body);
    assert_eq!(result, Ok(()));
    assert_eq!(parts.len(), 1);
    parts[0].head.clone()
}

fn with_disposition(value: &str) -> Vec<u8> {
    format!("--{B}\r\nContent-Disposition: {value}\r\n\r\nx\r\n--{B}--").into_bytes()
}

fn error_of(body: &[u8]) -> MultipartError {
    parse(body).1.expect_err("an error")
}

// The boundary.

#[test]
fn the_boundary_comes_from_the_content_type_quoted_or_not() {
    let b = |ct: &str| Boundary::from_content_type(ct.as_bytes()).map(|b| b.as_bytes().to_vec());
    for ct in [
        "multipart/form-data; boundary=abc",
        "multipart/form-data;boundary=abc",
        "Multipart/Form-Data; BOUNDARY=abc",
        "multipart/form-data ;\tboundary=\"abc\"  ",
        "multipart/form-data; charset=utf-8; boundary=abc",
        "multipart/form-data; boundary=abc; boundary=other",
        "multipart/form-data; boundary=\"a\\bc\"", // `\b` is not an escape: kept
    ] {
        let want: &[u8] = if ct.contains('\\') { b"a\\bc" } else { b"abc" };
        if want == b"a\\bc" {
            // A backslash is not a bchar.
            assert_eq!(
                b(ct),
                Err(MultipartError::Boundary(BoundaryProblem::Character))
            );
        } else {
            assert_eq!(b(ct).as_deref(), Ok(want), "{ct}");
        }
    }
    // What real clients send.
    for boundary in [
        "----WebKitFormBoundary7MA4YWxkTrZu0gW",
        "----geckoformboundaryc1b1e2b3f5a8d9e0b7a6c5d4e3f2a1b0",
        "---------------------------9051914041544843365972754266",
        "------------------------d74496d66958873e",
        "----formdata-undici-0.5783476326540637",
        "9b8e4f0b2c7d4a1e8f3b6c5d2e1f0a9b",
        "\"===============7330845974216740156==\"", // Python's email package
    ] {
        let ct = format!("multipart/form-data; boundary={boundary}");
        let boundary = boundary.trim_matches('"');
        assert_eq!(b(&ct).unwrap(), boundary.as_bytes());
    }
    // RFC 2046's other characters, quoted, and a space inside.
    let ct = "multipart/form-data; boundary=\"'()+_,-./:=? x\"";
    assert_eq!(b(ct).unwrap(), b"'()+_,-./:=? x");
}

#[test]
fn a_missing_long_or_bad_boundary_is_refused() {
    let e = |ct: &str| Boundary::from_content_type(ct.as_bytes()).unwrap_err();
    let problem = |p| MultipartError::Boundary(p);
    assert_eq!(e("multipart/form-data"), problem(BoundaryProblem::Missing));
    assert_eq!(
        e("multipart/form-data; charset=x"),
        problem(BoundaryProblem::Missing)
    );
    assert_eq!(
        e("multipart/form-data; boundary=\"\""),
        problem(BoundaryProblem::Missing)
    );
    let long = "x".repeat(71);
    assert_eq!(
        e(&format!("multipart/form-data; boundary={long}")),
        problem(BoundaryProblem::TooLong)
    );
    assert!(Boundary::new("x".repeat(70).as_bytes()).is_ok());
    assert_eq!(
        e("multipart/form-data; boundary=a#b"),
        problem(BoundaryProblem::Character)
    );
    assert_eq!(
        e("multipart/form-data; boundary=\"a@b\""),
        problem(BoundaryProblem::Character)
    );
    assert_eq!(
        e("multipart/form-data; boundary=\"ab \""),
        problem(BoundaryProblem::Character)
    );
    assert_eq!(
        e("multipart/form-data; boundary=\"a\u{e9}\""),
        problem(BoundaryProblem::Character)
    );
    // Malformed parameters (busboy refuses these too, a trailing `;` included).
    for ct in [
        "multipart/form-data; boundary",
        "multipart/form-data; boundary=",
        "multipart/form-data; boundary = abc",
        "multipart/form-data; boundary=\"abc",
        "multipart/form-data; boundary=abc;",
        "multipart/form-data boundary=abc",
        "multipart",
        "",
    ] {
        assert_eq!(e(ct), problem(BoundaryProblem::Malformed), "{ct:?}");
    }
    assert_eq!(
        e("multipart/mixed; boundary=abc"),
        MultipartError::NotFormData
    );
    assert_eq!(e("application/json"), MultipartError::NotFormData);
    let error = e("multipart/form-data");
    assert_eq!(
        (error.status(), error.code()),
        (400, "ERR_MULTIPART_BOUNDARY")
    );
    assert_eq!(error.reason(), Some("missing"));
    assert_eq!(MultipartError::NotFormData.status(), 415);
}

// The parts.

#[test]
fn fields_and_files_with_their_heads() {
    let body = form(&[
        (&field("title"), b"Hello"),
        (
            "Content-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\n\
             Content-Type: Text/Plain; Charset=UTF-8",
            b"line 1\r\nline 2\r\n",
        ),
        (&field("empty"), b""),
    ]);
    let (parts, result) = parse_every_way(&body);
    assert_eq!(result, Ok(()));
    let file = PartHead {
        name: Some(b"doc".to_vec()),
        filename: raw_name("a.txt"),
        mime: Some("text/plain".into()),
        charset: Some(b"utf-8".to_vec()),
        is_file: true,
        ..PartHead::default()
    };
    assert_eq!(
        parts,
        [
            part(head("title"), b"Hello"),
            part(file, b"line 1\r\nline 2\r\n"),
            part(head("empty"), b""),
        ]
    );
    assert_eq!(parts[0].head.mime_type(), "text/plain");
    assert_eq!(parts[0].head.encoding(), b"7bit");
}

#[test]
fn preamble_and_epilogue_are_ignored() {
    let mut body = b"This is the preamble.\r\n--not the boundary\r\n".to_vec();
    body.extend_from_slice(&form(&[(&field("a"), b"1")]));
    body.extend_from_slice(b"epilogue\r\n--");
    body.extend_from_slice(B.as_bytes());
    body.extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"late\"\r\n\r\nx");
    let (parts, result) = parse_every_way(&body);
    assert_eq!((parts, result), (vec![part(head("a"), b"1")], Ok(())));
    // Done comes with the final delimiter, before the end of the input.
    let mut m = parser(Limits::default());
    let mut input = &body[..];
    let mut done = false;
    while !done {
        let s = m.next(input, usize::MAX).unwrap();
        done = s.event == Event::Done;
        input = &input[s.consumed..];
        assert_ne!(s.event, Event::NeedInput);
    }
}

#[test]
fn an_empty_form_and_a_form_without_a_crlf_after_the_end() {
    let body = format!("--{B}--");
    assert_eq!(parse_every_way(body.as_bytes()), (vec![], Ok(())));
    let body = format!("\r\n--{B}--\r\n");
    assert_eq!(parse_every_way(body.as_bytes()), (vec![], Ok(())));
}

#[test]
fn bodies_hold_anything_but_the_delimiter() {
    // Near misses of `\r\n--boundary`, and the boundary without its CRLF.
    let tricky: Vec<u8> = [
        &b"\r\n--"[..],
        b"\r\n-",
        b"\r\r\n--",
        format!("--{B}").as_bytes(),
        format!("\r\n--{}", &B[..B.len() - 1]).as_bytes(),
        format!("\n--{B}").as_bytes(),
        format!("\r--{B}").as_bytes(),
        b"\r",
    ]
    .concat();
    let body = form(&[
        (&field("x"), &tricky),
        (&field("y"), b"\r\n"),
        (&field("z"), b"-"),
    ]);
    let (parts, result) = parse_every_way(&body);
    assert_eq!(result, Ok(()));
    assert_eq!(parts[0].data, tricky);
    assert_eq!(parts[1].data, b"\r\n");
    assert_eq!(parts[2].data, b"-");
}

#[test]
fn a_delimiter_followed_by_other_bytes_skips_to_the_next_one() {
    // busboy: the part before ends; what follows up to the next delimiter is ignored
    // (transport padding included: busboy does not allow it).
    let body = format!(
        "--{B}\r\n{}\r\n\r\nA\r\n--{B} \r\n{}\r\n\r\nlost\r\n--{B}x\r\n--{B}-x\r\n--{B}\r\r\n\
         --{B}\r\n{}\r\n\r\nC\r\n--{B}--",
        field("a"),
        field("b"),
        field("c")
    );
    let (parts, result) = parse_every_way(body.as_bytes());
    assert_eq!(result, Ok(()));
    assert_eq!(parts, [part(head("a"), b"A"), part(head("c"), b"C")]);
}

#[test]
fn header_names_are_case_insensitive_and_the_first_counts() {
    let body = format!(
        "--{B}\r\nX-Other: 1\r\ncOnTeNt-DiSpOsItIoN:form-data;name=a\r\n\
         content-disposition: form-data; name=b\r\nCONTENT-TYPE: \t application/octet-stream \r\n\
         Content-Type: text/plain\r\ncontent-transfer-encoding: BINARY\r\n\r\nx\r\n--{B}--"
    );
    let head = parse_every_way(body.as_bytes()).0.remove(0).head;
    assert_eq!(head.name.as_deref(), Some(&b"a"[..]));
    assert_eq!(head.mime.as_deref(), Some("application/octet-stream"));
    assert_eq!(head.encoding(), b"binary");
    // application/octet-stream makes a file, without a name.
    assert!(head.is_file);
    assert_eq!(head.filename, None);
}

#[test]
fn malformed_headers_are_refused() {
    let refused = |headers: &str, problem| {
        let body = format!("--{B}\r\n{headers}\r\n\r\nx\r\n--{B}--");
        assert_eq!(
            error_of(body.as_bytes()),
            MultipartError::Header(problem),
            "{headers:?}"
        );
    };
    refused(
        "Content-Disposition: form-data;\r\n name=\"a\"",
        HeaderProblem::Folding,
    );
    refused(
        "Content-Disposition: form-data; name=a\r\n\tX: y",
        HeaderProblem::Folding,
    );
    refused(
        "Content-Disposition form-data; name=a",
        HeaderProblem::Syntax,
    );
    refused(
        "Content Disposition: form-data; name=a",
        HeaderProblem::Syntax,
    );
    refused(": form-data; name=a", HeaderProblem::Syntax);
    refused(
        "Content-Disposition: form-data; name=a\nX: y",
        HeaderProblem::Syntax,
    );
    refused(
        "Content-Disposition: form-data; name=a\rX: y",
        HeaderProblem::Syntax,
    );
    refused(
        "Content-Disposition: form-data; name=\"a\0\"",
        HeaderProblem::Syntax,
    );
    refused(
        "Content-Disposition: form-data; name=\"a\x7f\"",
        HeaderProblem::Syntax,
    );
    refused("Content-Type: text/plain", HeaderProblem::NoDisposition);
    refused(
        "X: Content-Disposition: form-data",
        HeaderProblem::NoDisposition,
    );
    refused(
        "Content-Disposition: attachment; name=a",
        HeaderProblem::Disposition,
    );
    refused("Content-Disposition: ; name=a", HeaderProblem::Disposition);
    refused(
        "Content-Disposition: form-data; name",
        HeaderProblem::Disposition,
    );
    refused(
        "Content-Disposition: form-data; name=\"a",
        HeaderProblem::Disposition,
    );
    refused(
        "Content-Disposition: form-data; name=a b",
        HeaderProblem::Disposition,
    );
    refused(
        "Content-Disposition: form-data; filename*=utf-8''%4",
        HeaderProblem::Disposition,
    );
    refused(
        "Content-Disposition: form-data; filename*=utf-8'en",
        HeaderProblem::Disposition,
    );
    // A part with no header at all (busboy: "Malformed part header").
    let body = format!("--{B}\r\n\r\nx\r\n--{B}--");
    assert_eq!(
        error_of(body.as_bytes()),
        MultipartError::Header(HeaderProblem::Syntax)
    );
    let error = MultipartError::Header(HeaderProblem::Folding);
    assert_eq!(
        (error.status(), error.code()),
        (400, "ERR_MULTIPART_HEADER")
    );
}

#[test]
fn a_bad_content_type_of_a_part_reads_as_text_plain() {
    for ct in [
        "text",
        "text/",
        "/plain",
        "text/plain; charset",
        "text/plain x",
    ] {
        let body = format!(
            "--{B}\r\n{}\r\nContent-Type: {ct}\r\n\r\nx\r\n--{B}--",
            field("a")
        );
        let head = only_head(body.as_bytes());
        assert_eq!(
            (head.mime.clone(), head.mime_type(), head.is_file),
            (None, "text/plain", false)
        );
    }
}

#[test]
fn names_and_quoted_strings_as_busboy_reads_them() {
    let h = |value: &str| only_head(&with_disposition(value));
    assert_eq!(h("form-data; name=plain").name.unwrap(), b"plain");
    assert_eq!(h("FORM-DATA ; NAME=\"a b\" ;\tx=y").name.unwrap(), b"a b");
    assert_eq!(h(r#"form-data; name="q\"uote""#).name.unwrap(), b"q\"uote");
    assert_eq!(
        h(r#"form-data; name="back\\slash""#).name.unwrap(),
        b"back\\slash"
    );
    // Only `\"` and `\\` are escapes: a Windows path keeps its backslashes.
    let head = h(r#"form-data; name=f; filename="C:\dir\a.txt""#);
    assert_eq!(head.filename, raw_name(r"C:\dir\a.txt"));
    assert!(head.filename.unwrap().flags().path);
    // UTF-8 sent raw, as browsers do: the bytes as sent.
    let head = h("form-data; name=\"\u{e9}t\u{e9}\"; filename=\"r\u{e9}sum\u{e9}.pdf\"");
    assert_eq!(head.name.unwrap(), "\u{e9}t\u{e9}".as_bytes());
    assert_eq!(head.filename, raw_name("r\u{e9}sum\u{e9}.pdf"));
    // An empty name is no name (multer then says MISSING_FIELD_NAME); the first counts.
    assert_eq!(h("form-data; name=\"\"").name, None);
    assert_eq!(h("form-data").name, None);
    assert_eq!(h("form-data; name=a; name=b").name.unwrap(), b"a");
    // An empty file name is none: a file only by its type (browsers send
    // application/octet-stream), else a field.
    let head = h("form-data; name=f; filename=\"\"");
    assert_eq!((head.filename, head.is_file), (None, false));
}

#[test]
fn extended_file_names_are_decoded() {
    let h = |value: &str| only_head(&with_disposition(value)).filename;
    let utf8 = |s: &str| {
        Some(Filename {
            bytes: s.into(),
            encoding: NameEncoding::Utf8,
        })
    };
    assert_eq!(
        h("form-data; name=f; filename*=UTF-8''%E2%82%AC%20rates.txt"),
        utf8("\u{20ac} rates.txt")
    );
    assert_eq!(
        h("form-data; name=f; filename*=utf-8'en'a%2Fb"),
        utf8("a/b")
    );
    // filename* wins over filename, in any order; an empty one does not.
    assert_eq!(
        h("form-data; filename=\"plain.txt\"; filename*=utf-8''ext.txt"),
        utf8("ext.txt")
    );
    assert_eq!(
        h("form-data; filename*=utf-8''; filename=\"plain.txt\""),
        raw_name("plain.txt")
    );
    // latin1 is decoded to UTF-8; invalid UTF-8 replaced; other charsets ignored.
    assert_eq!(
        h("form-data; filename*=iso-8859-1''caf%E9"),
        utf8("caf\u{e9}")
    );
    assert_eq!(h("form-data; filename*=utf-8''%FFx"), utf8("\u{fffd}x"));
    assert_eq!(
        h("form-data; filename*=koi8-r''%C1; filename=b"),
        raw_name("b")
    );
    assert_eq!(h("form-data; filename*=koi8-r''%C1"), None);
}

#[test]
fn dangerous_file_names_are_refused_or_reported_raw() {
    let h = |value: &str| only_head(&with_disposition(value)).filename.unwrap();
    let f = h("form-data; name=f; filename=\"../../etc/passwd\"");
    assert_eq!(f.bytes, b"../../etc/passwd");
    assert_eq!(
        f.flags(),
        NameFlags {
            path: true,
            ..NameFlags::default()
        }
    );
    // A NUL or another control character is refused raw and percent-encoded alike (tab
    // aside, as in any header value).
    for name in ["a%00b.txt", "a%0Ab.txt", "a%7F", "%1F"] {
        let body = with_disposition(&format!("form-data; name=f; filename*=utf-8''{name}"));
        assert_eq!(
            error_of(&body),
            MultipartError::Header(HeaderProblem::Disposition),
            "{name}"
        );
    }
    assert_eq!(
        h("form-data; name=f; filename*=utf-8''a%09b").bytes,
        b"a\tb"
    );
    let long = "n".repeat(10_000);
    let f = h(&format!("form-data; name=f; filename=\"{long}\""));
    assert_eq!(f.bytes.len(), 10_000);
    assert_eq!(
        f.flags(),
        NameFlags {
            long: true,
            ..NameFlags::default()
        }
    );
    assert!(!h("form-data; filename=ok.txt").flags().any());
    assert!(h("form-data; filename=..").flags().path);
}

#[test]
fn a_body_that_starts_with_the_delimiter_ends_the_part_in_its_headers() {
    // busboy searches across the header block's closing CRLF: `\r\n--boundary` there is
    // a delimiter inside the block, its "Malformed part header".
    for rest in ["--", "\r\n", "x\r\n--B--"] {
        let body = format!("--{B}\r\n{}\r\n\r\n--{B}{rest}", field("a"));
        let (parts, result) = parse_every_way(body.as_bytes());
        assert_eq!(
            result,
            Err(MultipartError::Header(HeaderProblem::Syntax)),
            "{body:?}"
        );
        assert!(parts.iter().all(|p| p.data.is_empty()));
    }
    // Bytes like a delimiter's start, and an empty body, are body as before.
    let (parts, result) = parse_every_way(
        format!("--{B}\r\n{}\r\n\r\n--{}\r\n--{B}--", field("a"), &B[..10]).as_bytes(),
    );
    assert_eq!(
        (parts, result),
        (
            vec![part(head("a"), format!("--{}", &B[..10]).as_bytes())],
            Ok(())
        )
    );
    let (parts, result) = parse_every_way(form(&[(&field("a"), b"")]).as_slice());
    assert_eq!((parts, result), (vec![part(head("a"), b"")], Ok(())));
}

#[test]
fn a_body_that_ends_early_is_refused() {
    let whole = form(&[(&field("a"), b"1234")]);
    let cases: [(&[u8], Where); 6] = [
        (b"", Where::Preamble),
        (b"just text", Where::Preamble),
        (&whole[..B.len() + 2], Where::Delimiter),
        (&whole[..B.len() + 10], Where::Headers),
        (&whole[..whole.len() - B.len() - 8], Where::Body),
        (&whole[..whole.len() - 4], Where::Delimiter),
    ];
    for (body, at) in cases {
        for cut in 0..=body.len() {
            let (a, b) = body.split_at(cut);
            let (_, result) = drive(&mut parser(Limits::default()), &[a, b], 2);
            assert_eq!(
                result,
                Err(MultipartError::Truncated(at)),
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
    }
    // A file cut short is reported with the part incomplete.
    let (parts, result) = parse(&whole[..whole.len() - B.len() - 8]);
    assert_eq!(result, Err(MultipartError::Truncated(Where::Body)));
    assert_eq!((parts.len(), parts[0].complete), (1, false));
    let error = MultipartError::Truncated(Where::Body);
    assert_eq!(
        (error.status(), error.code(), error.reason()),
        (400, "ERR_MULTIPART_TRUNCATED", Some("body"))
    );
}

// The limits.

fn limited(limits: Limits, body: &[u8]) -> Result<(), MultipartError> {
    let whole = parse_with(body, limits.clone()).1;
    // The same error however the body is cut.
    let bytes: Vec<&[u8]> = body.chunks(7).collect();
    assert_eq!(drive(&mut parser(limits), &bytes, 5).1, whole);
    whole
}

fn over(limit: Limit, max: u64) -> Result<(), MultipartError> {
    Err(MultipartError::Limit { limit, max })
}

const FILE: &str = "Content-Disposition: form-data; name=\"f\"; filename=\"f.bin\"";

#[test]
fn sizes_are_inclusive_maxima() {
    let body = form(&[(&field("a"), b"12345"), (FILE, b"1234567")]);
    let l = |field_size, file_size| Limits {
        field_size,
        file_size,
        ..Limits::default()
    };
    assert_eq!(limited(l(5, 7), &body), Ok(()));
    assert_eq!(limited(l(4, 7), &body), over(Limit::FieldValue, 4));
    assert_eq!(limited(l(5, 6), &body), over(Limit::FileSize, 6));
    assert_eq!(limited(l(5, 0), &body), over(Limit::FileSize, 0));
    // An empty field is within a limit of 0.
    assert_eq!(limited(l(0, 7), &form(&[(&field("a"), b"")])), Ok(()));
    // No data of a part over its limit is handed out.
    let (parts, _) = parse_with(&body, l(5, 6));
    assert_eq!(parts[1].data, b"");
    let error = MultipartError::Limit {
        limit: Limit::FileSize,
        max: 6,
    };
    assert_eq!((error.status(), error.code()), (413, "LIMIT_FILE_SIZE"));
}

#[test]
fn counts_are_maxima() {
    let body = form(&[
        (&field("a"), b"1"),
        (FILE, b"2"),
        (&field("b"), b"3"),
        (FILE, b"4"),
    ]);
    let l = |fields, files, parts| Limits {
        fields,
        files,
        parts,
        ..Limits::default()
    };
    assert_eq!(limited(l(2, 2, 4), &body), Ok(()));
    assert_eq!(limited(l(1, 2, 4), &body), over(Limit::FieldCount, 1));
    assert_eq!(limited(l(2, 1, 4), &body), over(Limit::FileCount, 1));
    assert_eq!(limited(l(2, 2, 3), &body), over(Limit::PartCount, 3));
    assert_eq!(limited(l(0, 0, 0), &body), over(Limit::PartCount, 0));
    assert_eq!(limited(l(0, 0, 0), format!("--{B}--").as_bytes()), Ok(()));
    // The parts before are complete.
    let (parts, _) = parse_with(&body, l(2, 2, 3));
    assert_eq!(parts.len(), 3);
    for (limit, code) in [
        (Limit::PartCount, "LIMIT_PART_COUNT"),
        (Limit::FileCount, "LIMIT_FILE_COUNT"),
        (Limit::FieldCount, "LIMIT_FIELD_COUNT"),
        (Limit::FieldKey, "LIMIT_FIELD_KEY"),
        (Limit::FieldValue, "LIMIT_FIELD_VALUE"),
        (Limit::HeaderPairs, "LIMIT_HEADER_PAIRS"),
        (Limit::HeaderSize, "LIMIT_HEADER_SIZE"),
    ] {
        assert_eq!(limit.code(), code);
    }
}

#[test]
fn name_and_header_limits() {
    let body = form(&[(&field("abcd"), b"1"), (FILE, b"2")]);
    let names = |field_name_size| Limits {
        field_name_size,
        ..Limits::default()
    };
    assert_eq!(limited(names(4), &body), Ok(()));
    assert_eq!(limited(names(3), &body), over(Limit::FieldKey, 3));
    let body = form(&[(
        "Content-Disposition: form-data; name=abc\r\nA: 1\r\nB: 2",
        b"",
    )]);
    let pairs = |header_pairs| Limits {
        header_pairs,
        ..Limits::default()
    };
    assert_eq!(limited(pairs(3), &body), Ok(()));
    assert_eq!(limited(pairs(2), &body), over(Limit::HeaderPairs, 2));
    // The header block: from after the delimiter's CRLF to the blank line's LF.
    let block = "Content-Disposition: form-data; name=abc\r\n\r\n".len();
    let size = |header_size| Limits {
        header_size,
        ..Limits::default()
    };
    let body = form(&[("Content-Disposition: form-data; name=abc", b"")]);
    assert_eq!(limited(size(block), &body), Ok(()));
    assert_eq!(
        limited(size(block - 1), &body),
        over(Limit::HeaderSize, block as u64 - 1)
    );
    // Headers that never end stop at the bound, default 16 KiB.
    let mut body = format!("--{B}\r\nX: ").into_bytes();
    body.resize(1 << 20, b'a');
    assert_eq!(parse(&body).1, over(Limit::HeaderSize, 16 * 1024));
}

// Bad and big inputs.

#[test]
fn a_hundred_thousand_tiny_parts() {
    let mut body = Vec::new();
    for i in 0..100_000 {
        body.extend_from_slice(
            format!("--{B}\r\nContent-Disposition: form-data; name=\"f{i}\"\r\n\r\n{i}\r\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(format!("--{B}--").as_bytes());
    let chunks: Vec<&[u8]> = body.chunks(64 * 1024).collect();
    let mut m = parser(Limits::default());
    let (parts, result) = drive(&mut m, &chunks, usize::MAX);
    assert_eq!(result, Ok(()));
    assert_eq!(parts.len(), 100_000);
    assert_eq!(parts[99_999], part(head("f99999"), b"99999"));
    assert_eq!(m.parts(), 100_000);
    let limits = Limits {
        parts: 1000,
        ..Limits::default()
    };
    let (parts, result) = drive(&mut parser(limits), &chunks, usize::MAX);
    assert_eq!((parts.len(), result), (1000, over(Limit::PartCount, 1000)));
}

#[test]
fn a_big_file_passes_through_in_the_callers_pieces() {
    // 8 MiB of bytes full of near-delimiters, in 64 KiB chunks, read into 16 KiB rooms.
    let unit = format!("ab\r\n--{}\r\n-\r", &B[..20]);
    let data = unit.as_bytes().repeat((8 << 20) / unit.len());
    let body = form(&[(FILE, &data)]);
    let mut m = parser(Limits::default());
    let mut room = vec![MaybeUninit::<u8>::uninit(); 16 * 1024];
    let mut got = Vec::with_capacity(data.len());
    let mut ended = false;
    'chunks: for chunk in body.chunks(64 * 1024) {
        let mut input = chunk;
        loop {
            let (consumed, piece) = m.read(input, &mut room).unwrap();
            input = &input[consumed..];
            assert!(m.held() <= MAX_DELIMITER + 16 * 1024);
            match piece {
                Piece::Part => assert_eq!(m.head().filename, raw_name("f.bin")),
                Piece::Data(n) => {
                    assert!(n > 0 && n <= room.len());
                    // SAFETY: `read` wrote the room's first `n` bytes.
                    got.extend_from_slice(unsafe {
                        std::slice::from_raw_parts(room.as_ptr().cast::<u8>(), n)
                    });
                }
                Piece::PartEnd => {}
                Piece::NeedInput => break,
                Piece::Done => {
                    ended = true;
                    break 'chunks;
                }
                Piece::Failed => panic!("{:?}", m.error()),
            }
        }
    }
    assert!(ended);
    assert!(got == data);
}

#[test]
fn an_empty_room_does_nothing_and_misuse_is_reported() {
    let mut m = parser(Limits::default());
    assert_eq!(m.read(b"--", &mut []), Ok((0, Piece::Data(0))));
    assert_eq!(m.end(), Ok(()));
    assert_eq!(m.end(), Err(Misuse::AfterFinish));
    assert_eq!(m.next(b"", 1).unwrap().event, Event::Failed);
    assert_eq!(m.read(b"xy", &mut []), Ok((2, Piece::Failed)));
    assert_eq!(m.error(), Some(&MultipartError::Truncated(Where::Preamble)));
    m.abort();
    assert_eq!(m.next(b"", 1), Err(Misuse::AfterAbort));
    assert_eq!(
        m.read(b"", &mut [MaybeUninit::uninit()]),
        Err(Misuse::AfterAbort)
    );
    assert_eq!(m.end(), Err(Misuse::AfterAbort));
    assert_eq!(m.held(), 0);
    assert_eq!(m.error(), None);
}
