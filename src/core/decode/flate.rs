//! gzip and deflate, by zlib-rs through flate2.

use std::mem::MaybeUninit;

use flate2::{Decompress, FlushDecompress, Status};

use super::{Decode, Step};
use crate::core::error::Invalid;

/// zlib's largest window: what gzip and deflate senders may use.
const WINDOW_BITS: u8 = 15;

fn inflate(
    inner: &mut Decompress,
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
) -> Result<(Step, bool), Invalid> {
    let (in_before, out_before) = (inner.total_in(), inner.total_out());
    let status = inner
        .decompress_uninit(input, out, FlushDecompress::None)
        .map_err(|_| Invalid::Corrupt)?;
    let consumed = (inner.total_in() - in_before) as usize;
    let written = (inner.total_out() - out_before) as usize;
    let ended = status == Status::StreamEnd;
    let step = Step {
        consumed,
        written,
        more: !ended && written == out.len(),
    };
    Ok((step, ended))
}

/// gzip, every member: a body may be several gzip files back to back (as Node's gunzip
/// accepts). Anything after a member that is not another member is trailing data.
pub struct Gzip {
    inner: Decompress,
    ended: bool,
    /// A member ended and the next chunk brought only the next magic's first byte.
    half_magic: bool,
}

impl Gzip {
    pub fn new() -> Gzip {
        Gzip {
            inner: Decompress::new_gzip(WINDOW_BITS),
            ended: false,
            half_magic: false,
        }
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

const NOTHING: Step = Step {
    consumed: 0,
    written: 0,
    more: false,
};

impl Decode for Gzip {
    fn decode(&mut self, input: &[u8], out: &mut [MaybeUninit<u8>]) -> Result<Step, Invalid> {
        let mut written = 0;
        if self.ended || self.half_magic {
            // Between members: what follows must be another member's magic, or nothing.
            let magic = match (self.half_magic, input) {
                (_, []) => return Ok(NOTHING),
                (false, [first]) if *first == GZIP_MAGIC[0] => {
                    self.half_magic = true;
                    self.ended = false;
                    return Ok(Step {
                        consumed: 1,
                        ..NOTHING
                    });
                }
                (false, [first, second, ..]) => [*first, *second],
                (true, [second, ..]) => [GZIP_MAGIC[0], *second],
                (false, [_]) => return Err(Invalid::Trailing),
            };
            if magic != GZIP_MAGIC {
                return Err(Invalid::Trailing);
            }
            self.inner = Decompress::new_gzip(WINDOW_BITS);
            self.ended = false;
            if self.half_magic {
                self.half_magic = false;
                let (step, _) = inflate(&mut self.inner, &GZIP_MAGIC[..1], out)?;
                written = step.written;
            }
        }
        let (step, ended) = inflate(&mut self.inner, input, &mut out[written..])?;
        self.ended = ended;
        Ok(Step {
            written: written + step.written,
            ..step
        })
    }

    fn is_done(&self) -> bool {
        self.ended
    }
}

/// deflate: zlib-wrapped (RFC 9110) or raw, told apart by the first two bytes, as
/// browsers and curl do. A zlib header is CM = 8, CINFO ≤ 7, no preset dictionary, and a
/// 16-bit value divisible by 31; a raw stream rarely starts that way (a stored block with
/// such a length), and one that does fails its checksum and gets 400.
pub struct Deflate {
    state: DeflateState,
}

enum DeflateState {
    /// Not one byte seen yet, or only the first (held here).
    Undecided(Option<u8>),
    Decoding {
        inner: Decompress,
        ended: bool,
    },
}

impl Deflate {
    pub fn new() -> Deflate {
        Deflate {
            state: DeflateState::Undecided(None),
        }
    }
}

fn is_zlib_header(cmf: u8, flg: u8) -> bool {
    cmf & 0x0f == 8
        && cmf >> 4 <= 7
        && flg & 0x20 == 0
        && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
}

impl Decode for Deflate {
    fn decode(&mut self, input: &[u8], out: &mut [MaybeUninit<u8>]) -> Result<Step, Invalid> {
        let mut written = 0;
        if let DeflateState::Undecided(held) = self.state {
            let (first, second) = match (held, input) {
                (_, []) | (None, [_]) => {
                    self.state = DeflateState::Undecided(held.or(input.first().copied()));
                    return Ok(Step {
                        consumed: input.len(),
                        ..NOTHING
                    });
                }
                (Some(first), [second, ..]) => (first, *second),
                (None, [first, second, ..]) => (*first, *second),
            };
            let mut inner = Decompress::new(is_zlib_header(first, second));
            if let Some(first) = held {
                // One byte is a header or a block's first bits: it never yields output
                // by itself, so `out` keeps all its room.
                let (step, _) = inflate(&mut inner, &[first], out)?;
                written = step.written;
            }
            self.state = DeflateState::Decoding {
                inner,
                ended: false,
            };
        }
        let DeflateState::Decoding { inner, ended } = &mut self.state else {
            return Ok(NOTHING); // decided above
        };
        if *ended {
            return match input {
                [] => Ok(NOTHING),
                _ => Err(Invalid::Trailing),
            };
        }
        let (step, now_ended) = inflate(inner, input, &mut out[written..])?;
        *ended = now_ended;
        if now_ended && step.consumed < input.len() {
            return Err(Invalid::Trailing);
        }
        Ok(Step {
            written: written + step.written,
            ..step
        })
    }

    fn is_done(&self) -> bool {
        matches!(self.state, DeflateState::Decoding { ended: true, .. })
    }
}
