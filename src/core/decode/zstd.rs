//! zstd, by the reference C library through zstd-safe.

use std::mem::MaybeUninit;

use zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer, WriteBuf};

use super::{Decode, Step};
use crate::core::error::Invalid;

/// RFC 9659: HTTP's zstd content coding uses windows of at most 8 MiB, and decoders
/// should refuse larger ones. Without this a 10-byte frame header could make each request
/// allocate a 128 MiB window (libzstd's default maximum).
const WINDOW_LOG_MAX: u32 = 23;

pub struct Zstd {
    ctx: DCtx<'static>,
    /// A frame has been decoded and flushed entirely, and no other has started.
    ended: bool,
}

impl Zstd {
    pub fn new() -> Zstd {
        let mut ctx = DCtx::create();
        // Cannot fail: the value is within libzstd's bounds on every platform.
        let _ = ctx.set_parameter(DParameter::WindowLogMax(WINDOW_LOG_MAX));
        Zstd { ctx, ended: false }
    }
}

/// The step's room, for zstd-safe, which writes to uninitialized memory through a pointer.
struct Room<'a> {
    bytes: &'a mut [MaybeUninit<u8>],
    filled: usize,
}

// SAFETY: `as_slice` covers only the bytes zstd reported as written; `capacity` is the
// slice's length, all of it writable.
unsafe impl WriteBuf for Room<'_> {
    fn as_slice(&self) -> &[u8] {
        // SAFETY: the first `filled` bytes were written by zstd.
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast(), self.filled) }
    }

    fn capacity(&self) -> usize {
        self.bytes.len()
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr().cast()
    }

    unsafe fn filled_until(&mut self, n: usize) {
        self.filled = n;
    }
}

impl Decode for Zstd {
    fn decode(&mut self, input: &[u8], out: &mut [MaybeUninit<u8>]) -> Result<Step, Invalid> {
        let room = out.len();
        let mut room_buf = Room {
            bytes: out,
            filled: 0,
        };
        let mut output = OutBuffer::around(&mut room_buf);
        let mut input_buf = InBuffer::around(input);
        // A body may hold several frames back to back (RFC 8878); bytes that are not a
        // frame are an error from libzstd, so trailing garbage is "corrupt" here.
        let hint = self
            .ctx
            .decompress_stream(&mut output, &mut input_buf)
            .map_err(|_| Invalid::Corrupt)?;
        let written = output.pos();
        let consumed = input_buf.pos();
        // A call that did nothing must not undo `ended`: at a frame's end libzstd asks
        // for the next frame's header (hint > 0), but no next frame has to come.
        if consumed > 0 || written > 0 || !self.ended {
            self.ended = hint == 0;
        }
        Ok(Step {
            consumed,
            written,
            more: written == room,
        })
    }

    fn is_done(&self) -> bool {
        self.ended
    }
}
