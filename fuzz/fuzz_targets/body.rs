//! Any options, any bytes, any chunking: no panic, no crash, and the body is exactly the
//! bytes pushed (identity) or a client error with its memory released.
#![no_main]

use libfuzzer_sys::fuzz_target;
use uws_body::core::{Body, BodyOptions, FinishError};

const ENCODINGS: [Option<&str>; 10] = [
    None,
    Some(""),
    Some("identity"),
    Some(" Identity , "),
    Some("gzip"),
    Some("deflate"),
    Some("br"),
    Some("zstd"),
    Some("gzip, br"),
    Some("compress"),
];

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<8>() else {
        return;
    };
    let limit = u64::from(u16::from_le_bytes([head[0], head[1]])) * 16;
    let declared = match head[2] % 4 {
        0 => None,
        1 => Some(rest.len() as u64),
        2 => Some(u64::from(head[3]) * 64),
        _ => Some(u64::MAX >> (head[3] % 64)),
    };
    let encoding = ENCODINGS[usize::from(head[5]) % ENCODINGS.len()];
    let identity = matches!(
        encoding,
        None | Some("") | Some("identity") | Some(" Identity , ")
    );
    let mut body = Body::new(&BodyOptions {
        content_length: declared,
        limit,
        max_preallocated: u64::from(head[4]) * 1024,
        content_encoding: encoding.map(str::to_owned),
        decode: head[6] & 1 == 0,
        // A hint true, false or absurd: any number can reach it from JS.
        known_minimum: match (head[6] >> 1) % 4 {
            0 => 0,
            1 => rest.len() as u64,
            2 => u64::from(head[6] >> 3) * 4096,
            _ => u64::MAX,
        },
        digest: Default::default(),
    });
    let step = 1 + usize::from(head[7]) * 37;
    for chunk in rest.chunks(step) {
        match body.push(chunk) {
            Ok(true) => assert!(body.length() as u64 <= limit.saturating_add(1)),
            Ok(false) => {
                assert_eq!(body.capacity(), 0, "memory kept after an error");
                let status = body.error().map(|e| e.status());
                assert!(matches!(status, Some(400 | 413 | 415)), "{status:?}");
                return;
            }
            Err(misuse) => panic!("misuse from a client's bytes: {misuse:?}"),
        }
    }
    match body.finish() {
        Ok(block) => {
            assert!(block.len() as u64 <= limit);
            if identity {
                assert!(
                    block.as_slice() == rest,
                    "identity body differs from the bytes pushed"
                );
            }
        }
        Err(FinishError::Body(e)) => {
            assert!(matches!(e.status(), 400 | 413 | 415), "{e:?}");
            assert_eq!(body.capacity(), 0);
        }
        Err(FinishError::Misuse(m)) => panic!("{m:?}"),
    }
});
