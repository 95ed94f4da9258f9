use super::*;
use crate::core::pool;

const MIB: u64 = 1 << 20;

fn options(content_length: Option<u64>, limit: u64) -> BodyOptions {
    BodyOptions {
        content_length,
        limit,
        max_preallocated: MIB,
        content_encoding: None,
        decode: true,
        known_minimum: 0,
        digest: Default::default(),
    }
}

/// What the pool rounds an allocation of `n` bytes up to.
fn rounded(n: u64) -> usize {
    pool::class_size(n as usize).unwrap_or(n as usize)
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 251) as u8).collect()
}

/// Splits `data` at many different chunk sizes and checks every byte comes back.
#[test]
fn any_chunking_gives_back_every_byte() {
    for len in [
        0usize,
        1,
        2,
        100,
        4096,
        65_483,
        1 << 20,
        (1 << 20) + 1,
        3 << 20,
    ] {
        let data = pattern(len);
        for step in [1usize, 7, 4096, 65_483, 524_288, usize::MAX] {
            if len > 70_000 && step < 4096 {
                continue;
            }
            for declared in [Some(len as u64), None] {
                let mut body = Body::new(&options(declared, 8 * MIB));
                for chunk in data.chunks(step.min(len.max(1))) {
                    assert_eq!(body.push(chunk), Ok(true));
                }
                let block = body.finish().expect("finish");
                assert_eq!(block.len(), len);
                assert!(block.as_slice() == data.as_slice(), "len {len} step {step}");
            }
        }
    }
}

#[test]
fn empty_chunks_and_empty_body() {
    let mut body = Body::new(&options(Some(0), 10));
    assert_eq!(body.capacity(), 0);
    assert_eq!(body.push(&[]), Ok(true));
    let block = body.finish().expect("empty body finishes");
    assert_eq!((block.len(), block.capacity()), (0, 0));

    let mut body = Body::new(&options(None, 10));
    let block = body.finish().expect("unknown-length empty body");
    assert!(block.is_empty());
}

#[test]
fn preallocates_declared_length_up_to_the_cap() {
    let body = Body::new(&options(Some(1000), MIB));
    assert_eq!(body.capacity(), 1000);
    let body = Body::new(&options(Some(64 * MIB), 128 * MIB));
    assert_eq!(body.capacity() as u64, MIB);
    let body = Body::new(&options(None, 128 * MIB));
    assert_eq!(body.capacity(), 0);
}

#[test]
fn single_chunk_allocates_exactly_once() {
    let mut body = Body::new(&options(Some(4096), MIB));
    let cap = body.capacity();
    body.push(&pattern(4096)).unwrap();
    assert_eq!(body.capacity(), cap);
    let mut body = Body::new(&options(None, MIB));
    body.push(&pattern(300)).unwrap();
    assert_eq!(
        body.capacity(),
        300,
        "unknown length: exact first allocation"
    );
}

#[test]
fn a_known_minimum_takes_room_at_once_and_within_the_cap() {
    // Unknown length, but 200,000 bytes are about to be pushed: room for them now, and
    // pushing them never moves the body.
    let mut body = Body::new(&BodyOptions {
        known_minimum: 200_000,
        ..options(None, 64 * MIB)
    });
    let cap = body.capacity();
    assert!(cap >= 200_000, "capacity {cap}");
    let data = pattern(200_000);
    body.push(&data[..65_000]).unwrap();
    body.push(&data[65_000..]).unwrap();
    assert_eq!(body.capacity(), cap);
    assert!(body.finish().unwrap().as_slice() == data.as_slice());
    // Any number can reach this from JS: past the cap it allocates the cap, as a declared
    // length does (no pooled block is this large, so none is taken instead).
    let huge = 900 * MIB;
    let body = Body::new(&BodyOptions {
        known_minimum: huge,
        ..options(None, huge)
    });
    assert_eq!(body.capacity(), rounded(MIB));
    let body = Body::new(&BodyOptions {
        known_minimum: u64::MAX,
        ..options(None, 10)
    });
    assert_eq!(body.capacity(), 10, "never past the limit");
    // A declared length wins over the hint.
    let body = Body::new(&BodyOptions {
        known_minimum: 5000,
        ..options(Some(100), MIB)
    });
    assert_eq!(body.capacity(), 100);
}

#[test]
fn growth_past_the_cap_follows_arrival_and_stops_at_declared_length() {
    let declared = 5 * MIB + 3;
    let mut body = Body::new(&options(Some(declared), 64 * MIB));
    let data = pattern(declared as usize);
    let mut sent = 0usize;
    for chunk in data.chunks(65_483) {
        body.push(chunk).unwrap();
        sent += chunk.len();
        let cap = body.capacity();
        let allowed = rounded(declared.min((2 * sent as u64).max(MIB)));
        assert!(cap <= allowed, "capacity {cap} ahead of {sent} bytes");
    }
    assert_eq!(body.capacity(), rounded(declared));
    assert!(body.finish().unwrap().as_slice() == data.as_slice());
}

#[test]
fn unknown_length_growth_is_bounded_by_limit() {
    let limit = 3 * MIB + 5;
    let mut body = Body::new(&options(None, limit));
    for chunk in pattern(limit as usize).chunks(1 << 16) {
        assert_eq!(body.push(chunk), Ok(true));
        assert!(body.capacity() <= rounded(limit));
    }
    assert_eq!(body.finish().unwrap().len() as u64, limit);
}

#[test]
fn declared_length_over_limit_fails_at_construction() {
    let mut body = Body::new(&options(Some(101), 100));
    let expected = BodyError::TooLarge {
        limit: 100,
        length: Some(101),
        received: 0,
    };
    assert_eq!(body.error(), Some(&expected));
    assert_eq!(expected.status(), 413);
    assert_eq!(body.capacity(), 0, "nothing allocated");
    assert_eq!(body.push(b"x"), Ok(false));
    assert_eq!(body.received(), 0, "nothing stored after the error");
    assert_eq!(body.finish().unwrap_err(), FinishError::Body(expected));
}

#[test]
fn bytes_over_limit_fail_as_they_arrive() {
    let mut body = Body::new(&options(None, 10));
    assert_eq!(body.push(b"0123456789"), Ok(true));
    assert_eq!(body.push(b"x"), Ok(false));
    assert_eq!(
        body.error(),
        Some(&BodyError::TooLarge {
            limit: 10,
            length: None,
            received: 11
        })
    );
    assert_eq!((body.length(), body.capacity()), (0, 0), "released at once");
    assert_eq!(body.push(b"more"), Ok(false));
    assert!(matches!(
        body.finish(),
        Err(FinishError::Body(BodyError::TooLarge { .. }))
    ));
}

#[test]
fn more_bytes_than_declared_is_a_length_mismatch() {
    let mut body = Body::new(&options(Some(3), 100));
    assert_eq!(body.push(b"ab"), Ok(true));
    assert_eq!(body.push(b"cd"), Ok(false));
    let error = body.error().cloned().unwrap();
    assert_eq!(
        error,
        BodyError::LengthMismatch {
            expected: 3,
            received: 4
        }
    );
    assert_eq!(
        (error.status(), error.kind()),
        (400, "request.size.invalid")
    );
    assert_eq!(body.capacity(), 0);
}

#[test]
fn fewer_bytes_than_declared_fails_at_finish() {
    let mut body = Body::new(&options(Some(5), 100));
    body.push(b"abc").unwrap();
    let expected = BodyError::LengthMismatch {
        expected: 5,
        received: 3,
    };
    assert_eq!(
        body.finish().unwrap_err(),
        FinishError::Body(expected.clone())
    );
    assert_eq!(body.capacity(), 0);
    assert_eq!(
        body.finish().unwrap_err(),
        FinishError::Body(expected),
        "same error again"
    );
}

#[test]
fn unsupported_encoding_fails_before_any_byte() {
    let mut body = Body::new(&BodyOptions {
        content_encoding: Some("compress".into()),
        ..options(Some(10), 100)
    });
    let error = body.error().cloned().unwrap();
    assert_eq!(
        (error.status(), error.kind()),
        (415, "encoding.unsupported")
    );
    assert_eq!(
        error,
        BodyError::EncodingUnsupported {
            encoding: "compress".into()
        }
    );
    assert_eq!(body.capacity(), 0);
    assert_eq!(body.push(b"x"), Ok(false));
}

#[test]
fn abort_releases_and_is_idempotent() {
    let mut body = Body::new(&options(Some(100), 1000));
    body.push(b"hello").unwrap();
    body.abort();
    body.abort();
    assert_eq!(body.capacity(), 0);
    let aborted = BodyError::Aborted {
        expected: Some(100),
        received: 5,
    };
    assert_eq!(body.error(), Some(&aborted));
    assert_eq!(body.push(b"x"), Err(Misuse::AfterAbort));
    assert_eq!(body.finish().unwrap_err(), FinishError::Body(aborted));
}

#[test]
fn abort_after_an_error_keeps_the_first_error() {
    let mut body = Body::new(&options(Some(1), 1000));
    body.push(b"xx").unwrap();
    body.abort();
    assert!(matches!(
        body.error(),
        Some(BodyError::LengthMismatch { .. })
    ));
}

#[test]
fn misuse_after_finish() {
    let mut body = Body::new(&options(None, 10));
    body.push(b"a").unwrap();
    body.finish().unwrap();
    assert_eq!(body.push(b"x"), Err(Misuse::AfterFinish));
    assert_eq!(
        body.finish().unwrap_err(),
        FinishError::Misuse(Misuse::AfterFinish)
    );
    body.abort();
    assert_eq!(body.error(), None, "abort after finish changes nothing");
}

#[test]
fn huge_declared_length_pins_at_most_the_cap() {
    let mut body = Body::new(&options(Some(1 << 30), 1 << 31));
    body.push(b"x").unwrap();
    assert_eq!(body.capacity() as u64, MIB);
    assert!(matches!(
        body.finish(),
        Err(FinishError::Body(BodyError::LengthMismatch { .. }))
    ));
    assert_eq!(body.capacity(), 0);
}

#[test]
fn an_allocation_the_machine_cannot_make_is_a_503_not_an_abort() {
    // The program allowed any size (limit and preallocation cap unbounded), and the
    // client declared more than any allocator gives: the body fails, the process lives.
    let mut body = Body::new(&BodyOptions {
        max_preallocated: u64::MAX,
        ..options(Some(u64::MAX >> 1), u64::MAX)
    });
    let error = body.error().cloned().unwrap();
    assert_eq!(
        (error.status(), error.kind(), error.code()),
        (503, "memory.exhausted", "ERR_BODY_OUT_OF_MEMORY")
    );
    assert_eq!(body.capacity(), 0);
    assert_eq!(body.push(b"x"), Ok(false));
}

/// A thread's ledger (ledger.rs) follows its blocks: taken (allocated, or moved here from
/// the pool) they count; lent to JS they do not; back in the pool they count again; freed,
/// they are gone. Other test threads share the pool, so a block may go either way at the
/// end, never anywhere else.
#[test]
fn the_ledger_counts_what_the_thread_holds_but_what_js_holds() {
    use crate::core::ledger;
    let _ = ledger::take_unreported();
    let mut body = Body::new(&options(Some(300_000), 10 * MIB));
    let held = body.capacity() as i64;
    assert_eq!(held, rounded(300_000) as i64);
    assert_eq!(ledger::take_unreported(), held);
    assert_eq!(body.push(&pattern(300_000)), Ok(true));
    let mut block = body.finish().unwrap();
    assert_eq!(ledger::take_unreported(), 0, "finishing moves nothing");
    block.lend_to_js();
    assert_eq!(
        ledger::take_unreported(),
        -300_000,
        "V8 counts an ArrayBuffer's bytes"
    );
    drop(block);
    let back = ledger::take_unreported();
    assert!(
        back == 300_000 || back == 300_000 - held,
        "kept by the pool or freed: {back}"
    );
}
