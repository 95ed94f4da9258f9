//! The memory budget (src/core/budget.rs) as bodies use it, through the core's `Body`: a
//! declared length is reserved whole when the body begins (admitted or refused before any
//! byte), an unknown one in steps as it grows, and every reservation comes back, whatever
//! the body's end. Its own test binary: the budget is process-wide, and these tests set
//! it, one at a time.

use std::sync::Mutex;

use proptest::prelude::*;
use uws_body::core::budget::{self, GLOBAL, UNLIMITED};
use uws_body::core::{Body, BodyError, BodyOptions};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `f` under a budget of `limit` bytes, alone.
fn with_budget<T>(limit: u64, f: impl FnOnce() -> T) -> T {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(budget::stats().reserved, 0, "nothing reserved before");
    GLOBAL.set_limit(limit);
    let out = f();
    GLOBAL.set_limit(UNLIMITED);
    out
}

fn options(length: Option<u64>) -> BodyOptions {
    BodyOptions {
        content_length: length,
        limit: 64 * MIB,
        max_preallocated: MIB,
        ..BodyOptions::default()
    }
}

fn reserved() -> u64 {
    budget::stats().reserved
}

#[test]
fn a_declared_length_is_reserved_whole_at_the_start_and_never_more() {
    with_budget(4 * MIB, || {
        let mut body = Body::new(&options(Some(3 * MIB)));
        assert_eq!(reserved(), 3 * MIB, "its whole length, before any byte");
        // Another body that cannot fit now is refused before any byte.
        let refused = Body::new(&options(Some(2 * MIB)));
        assert_eq!(
            refused.error(),
            Some(&BodyError::OverBudget { requested: 2 * MIB })
        );
        drop(refused);
        let chunk = vec![7u8; 64 * KIB as usize];
        for _ in 0..48 {
            assert_eq!(body.push(&chunk), Ok(true));
            assert_eq!(reserved(), 3 * MIB, "growth comes out of the admission");
        }
        let block = body.finish().expect("the whole body");
        assert_eq!(block.len() as u64, 3 * MIB);
        assert_eq!(
            reserved(),
            3 * MIB,
            "the block's, until it is handed out or goes back to the pool"
        );
        drop(block);
        assert_eq!(reserved(), 0);
    });
}

#[test]
fn a_body_handed_out_no_longer_counts_while_the_program_holds_it() {
    with_budget(4 * MIB, || {
        let mut body = Body::new(&options(Some(3 * MIB)));
        assert_eq!(body.push(&vec![1u8; 3 * MIB as usize]), Ok(true));
        let mut block = body.finish().expect("the whole body");
        block.hand_out();
        assert_eq!(reserved(), 0, "the program's memory, not a body being read");
        let next = Body::new(&options(Some(3 * MIB)));
        assert_eq!(next.error(), None, "admitted while the first is still held");
        drop(next);
        drop(block);
        assert_eq!(reserved(), 0);
    });
}

#[test]
fn an_unknown_length_reserves_in_steps_and_a_step_that_does_not_fit_refuses_it() {
    with_budget(MIB + MIB / 2, || {
        let mut body = Body::new(&options(None));
        let chunk = vec![1u8; 64 * KIB as usize];
        let mut pushed = 0;
        while body.push(&chunk) == Ok(true) {
            pushed += 1;
            assert!(reserved() <= MIB + MIB / 2);
        }
        assert!(
            matches!(body.error(), Some(BodyError::OverBudget { .. })),
            "{:?}",
            body.error()
        );
        assert!(pushed >= 8, "it grew to 1 MiB first: {pushed} chunks");
        assert_eq!(reserved(), 0, "a refused body holds nothing");
    });
}

#[test]
fn an_encoded_body_reserves_its_decoded_bytes_as_they_grow() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&vec![0u8; 4 * MIB as usize]).unwrap();
    let encoded = gz.finish().unwrap();
    with_budget(MIB, || {
        let mut body = Body::new(&BodyOptions {
            content_encoding: Some("gzip".into()),
            ..options(Some(encoded.len() as u64))
        });
        assert_eq!(body.push(&encoded), Ok(false));
        assert!(matches!(body.error(), Some(BodyError::OverBudget { .. })));
        assert_eq!(reserved(), 0);
    });
}

#[test]
fn a_decoder_s_state_is_reserved_at_its_most_before_any_byte() {
    with_budget(4 * MIB, || {
        // brotli's window may be 16 MiB: refused before any of it is allocated.
        let br = Body::new(&BodyOptions {
            content_encoding: Some("br".into()),
            ..options(Some(100))
        });
        assert!(matches!(br.error(), Some(BodyError::OverBudget { .. })));
        // gzip's state fits, and comes back with the body.
        let mut gzip = Body::new(&BodyOptions {
            content_encoding: Some("gzip".into()),
            ..options(None)
        });
        assert_eq!(gzip.error(), None);
        assert_eq!(reserved(), 64 * KIB);
        gzip.abort();
        assert_eq!(reserved(), 0);
        let stream = uws_body::core::BodyStream::new(&BodyOptions {
            content_encoding: Some("zstd".into()),
            ..options(None)
        });
        assert!(matches!(stream.error(), Some(BodyError::OverBudget { .. })));
    });
}

#[derive(Debug, Clone)]
enum End {
    Finish,
    Abort,
    Drop,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Bodies of any length, declared or not, in any chunking, ended any way, under any
    /// budget: the count never passes the budget, and is 0 once they are gone.
    #[test]
    fn reservations_of_bodies_always_come_back(
        limit in 0..4 * MIB,
        bodies in proptest::collection::vec(
            (0..2 * MIB, any::<bool>(), 1..256 * KIB, prop_oneof![Just(End::Finish), Just(End::Abort), Just(End::Drop)]),
            1..6,
        ),
    ) {
        with_budget(limit, || {
            let mut open: Vec<(Body, u64, u64, u64, End)> = bodies
                .into_iter()
                .map(|(size, declared, chunk, end)| {
                    (Body::new(&options(declared.then_some(size))), size, chunk, 0, end)
                })
                .collect();
            assert!(reserved() <= limit);
            // Interleaved, a chunk of each in turn.
            let mut blocks = Vec::new();
            while !open.is_empty() {
                let mut i = 0;
                while i < open.len() {
                    let (body, size, chunk, sent, _) = &mut open[i];
                    let n = (*size - *sent).min(*chunk);
                    let alive = body.error().is_none() && body.push(&vec![3u8; n as usize]) == Ok(true);
                    *sent += n;
                    assert!(reserved() <= limit);
                    if !alive || *sent == *size {
                        let (mut body, _, _, _, end) = open.swap_remove(i);
                        match end {
                            End::Finish => blocks.push(body.finish()),
                            End::Abort => body.abort(),
                            End::Drop => {}
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            drop(blocks);
            assert_eq!(reserved(), 0);
        });
    }
}
