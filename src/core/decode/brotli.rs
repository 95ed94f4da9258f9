//! br, by brotli-decompressor (Dropbox's pure-Rust port of Google's decoder).

use std::mem::MaybeUninit;

use brotli_decompressor::{
    BrotliDecompressStream, BrotliResult, BrotliState, HuffmanCode, StandardAlloc,
};

use super::{Decode, Step};
use crate::core::error::Invalid;

/// This decoder writes to `&mut [u8]`, so its room is zeroed first (uninitialized memory
/// must not become a `&mut [u8]`); the room is capped so that zeroing stays a small
/// fraction of the decoding work (docs/performance.md, row 'brotli room').
const ROOM: usize = 64 * 1024;

pub struct Brotli {
    state: BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>,
    ended: bool,
    /// After a failure: the bytes made before it and never handed over.
    lost: u64,
}

impl Brotli {
    pub fn new() -> Brotli {
        Brotli {
            // Large-window brotli (RFC 7932 streams only, window ≤ 16 MiB) is not
            // enabled, so the ring buffer this state allocates stays ≤ 16 MiB.
            state: BrotliState::new(
                StandardAlloc::default(),
                StandardAlloc::default(),
                StandardAlloc::default(),
            ),
            ended: false,
            lost: 0,
        }
    }

    /// Decoded bytes in the ring buffer not yet written out. The decoder fills its ring
    /// buffer from all the input it is given and writes to the room only as it wraps and
    /// when it runs out of input, so these can be up to the window's size.
    fn unwritten(&self) -> u64 {
        let s = &self.state;
        if s.ringbuffer_size <= 0 || s.pos < 0 {
            return 0;
        }
        let made = s
            .rb_roundtrips
            .saturating_mul(s.ringbuffer_size as u64)
            .saturating_add(s.pos as u64);
        made.saturating_sub(s.partial_pos_out)
    }
}

// The allocator type parameters carry no thread affinity; the state is plain memory.
const _: fn() = || {
    fn is_send<T: Send>() {}
    is_send::<BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>>();
    is_send::<HuffmanCode>();
};

impl Decode for Brotli {
    fn decode(&mut self, input: &[u8], out: &mut [MaybeUninit<u8>]) -> Result<Step, Invalid> {
        if self.ended {
            return match input {
                [] => Ok(Step {
                    consumed: 0,
                    written: 0,
                    more: false,
                }),
                _ => Err(Invalid::Trailing),
            };
        }
        let room = out.len().min(ROOM);
        let out = &mut out[..room];
        out.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `out` was initialized just above.
        let out: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast(), room) };
        let (mut available_in, mut input_offset) = (input.len(), 0);
        let (mut available_out, mut output_offset, mut total_out) = (room, 0, 0);
        let result = BrotliDecompressStream(
            &mut available_in,
            &mut input_offset,
            input,
            &mut available_out,
            &mut output_offset,
            out,
            &mut total_out,
            &mut self.state,
        );
        let more = match result {
            BrotliResult::ResultFailure => {
                self.lost = (output_offset as u64).saturating_add(self.unwritten());
                return Err(Invalid::Corrupt);
            }
            BrotliResult::ResultSuccess => {
                self.ended = true;
                if input_offset < input.len() {
                    return Err(Invalid::Trailing);
                }
                false
            }
            BrotliResult::NeedsMoreOutput => true,
            // It asks for input while it may still hold output it had no room for.
            BrotliResult::NeedsMoreInput => self.unwritten() > 0,
        };
        Ok(Step {
            consumed: input_offset,
            written: output_offset,
            more,
        })
    }

    fn is_done(&self) -> bool {
        self.ended
    }

    fn held(&self) -> u64 {
        self.lost.max(self.unwritten())
    }
}
