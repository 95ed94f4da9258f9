//! A content-encoded form (`content-encoding: gzip` and the others `decode` knows): the
//! body's bytes are decoded in steps into a window the parser then reads, so the form is
//! parsed from its decoded bytes with every limit applied to them. The window holds data
//! in another form, not a second copy of the body: each decoded byte is still copied once
//! into the place its part goes. A bomb cannot expand past `limit` (plus one window): the
//! decoded bytes are counted as they come out.

use std::mem::MaybeUninit;

use crate::core::decode::Decoder;
use crate::core::error::BodyError;

/// Decoded bytes produced per step. Large enough that a step costs little next to its
/// bytes, small enough to stay in cache between the decoder and the parser.
const WINDOW: usize = 64 * 1024;

#[derive(Debug)]
pub struct Decoding {
    decoder: Decoder,
    window: Box<[MaybeUninit<u8>]>,
    /// `window[start..end]` is decoded and not yet parsed.
    start: usize,
    end: usize,
    decoded: u64,
}

impl Decoding {
    pub fn new(decoder: Decoder) -> Decoding {
        Decoding {
            decoder,
            window: vec![MaybeUninit::uninit(); WINDOW].into_boxed_slice(),
            start: 0,
            end: 0,
            decoded: 0,
        }
    }

    /// The decoded bytes not yet parsed.
    pub fn pending(&self) -> &[u8] {
        let held = &self.window[self.start..self.end];
        // SAFETY: `refill` set `end` to what the decoder initialized, from `start` 0.
        unsafe { std::slice::from_raw_parts(held.as_ptr().cast(), held.len()) }
    }

    /// `n` bytes of `pending()` were parsed.
    pub fn consume(&mut self, n: usize) {
        self.start += n.min(self.end - self.start);
    }

    /// Decodes more of `input` (advancing it past what the decoder used) once `pending()`
    /// is all parsed: the number of bytes now pending, 0 when `input` is used up and no
    /// decoder holds output back.
    pub fn refill(&mut self, input: &mut &[u8]) -> Result<usize, BodyError> {
        debug_assert_eq!(self.start, self.end, "refill before the window was parsed");
        let n = self.decoder.pull(input, &mut self.window)?;
        self.decoded = self.decoded.saturating_add(n as u64);
        let limit = self.decoder.limit();
        if self.decoded > limit {
            return Err(BodyError::TooLarge {
                limit,
                length: None,
                received: self.decoded,
            });
        }
        (self.start, self.end) = (0, n);
        Ok(n)
    }

    /// At the end of the body: the encoded stream must have ended too.
    pub fn finish(&self) -> Result<(), BodyError> {
        self.decoder.finish()
    }

    /// Decoded bytes so far.
    pub fn decoded(&self) -> u64 {
        self.decoded
    }
}
