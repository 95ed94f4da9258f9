//! Arbitrary encoded bytes for each coding, any chunking and limit: no panic, no crash,
//! decoded bytes never past the limit, and whatever uws-body accepts a one-shot reference
//! decoder decodes to the same bytes.
#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use uws_body::core::{Body, BodyOptions, FinishError};

const CODINGS: [&str; 5] = ["gzip", "deflate", "br", "zstd", "gzip, gzip"];

fn reference(coding: &str, encoded: &[u8], cap: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut read = |r: &mut dyn Read| r.take(cap + 1).read_to_end(&mut out).ok();
    match coding {
        "gzip" => read(&mut flate2::read::MultiGzDecoder::new(encoded))?,
        "deflate" => {
            // The same zlib-or-raw choice uws-body makes on the first two bytes.
            let zlib = encoded.len() >= 2 && {
                let (cmf, flg) = (encoded[0], encoded[1]);
                cmf & 0x0f == 8
                    && cmf >> 4 <= 7
                    && flg & 0x20 == 0
                    && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
            };
            if zlib {
                read(&mut flate2::read::ZlibDecoder::new(encoded))?
            } else {
                read(&mut flate2::read::DeflateDecoder::new(encoded))?
            }
        }
        "br" => read(&mut brotli_decompressor::Decompressor::new(encoded, 4096))?,
        "zstd" => {
            let mut buf = Vec::with_capacity(cap as usize + 1);
            zstd_safe::decompress(&mut buf, encoded).ok()?;
            return Some(buf);
        }
        _ => return None,
    };
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((head, encoded)) = data.split_first_chunk::<4>() else {
        return;
    };
    let coding = CODINGS[usize::from(head[0]) % CODINGS.len()];
    let limit = 1 + u64::from(u16::from_le_bytes([head[1], head[2]])) * 8;
    let mut body = Body::new(&BodyOptions {
        content_length: None,
        limit,
        max_preallocated: 1 << 20,
        content_encoding: Some(coding.to_owned()),
        decode: true,
        known_minimum: 0,
        digest: Default::default(),
    });
    let step = 1 + usize::from(head[3]) * 13;
    for chunk in encoded.chunks(step) {
        match body.push(chunk) {
            Ok(true) => assert!(body.length() as u64 <= limit, "held past the limit"),
            Ok(false) => {
                assert_eq!(body.capacity(), 0, "memory kept after an error");
                return;
            }
            Err(m) => panic!("{m:?}"),
        }
    }
    match body.finish() {
        Ok(block) => {
            assert!(block.len() as u64 <= limit);
            if coding != "gzip, gzip" {
                let expected = reference(coding, encoded, limit);
                assert!(
                    expected.as_deref() == Some(block.as_slice()),
                    "{coding}: accepted what the reference does not decode the same"
                );
            }
        }
        Err(FinishError::Body(e)) => assert!(matches!(e.status(), 400 | 413), "{e:?}"),
        Err(FinishError::Misuse(m)) => panic!("{m:?}"),
    }
});
