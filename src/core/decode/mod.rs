//! Streaming, synchronous decoding of content-encoded bodies.
//!
//! Each push runs the decoders to completion on the bytes it was given, so nothing waits
//! for a later event and nothing can throw outside the caller's control. Output goes
//! straight into the body's final buffer (the `Sink`): the last decoder writes there, and
//! only the inner layers of a nested encoding (`gzip, br`) pass through a small scratch
//! buffer, which is data in a different form, not a second copy of the body. The sink
//! never offers more room than `limit + 1 - decoded`, so a bomb stops one byte past the
//! limit, however much it would expand.

mod brotli;
mod flate;
mod zstd;

use std::mem::MaybeUninit;

use super::budget::{OverBudget, Reservation};
use super::encoding::Coding;
use super::error::{BodyError, Invalid};

/// Output room handed to an inner layer of a nested encoding per step.
const SCRATCH: usize = 64 * 1024;

/// One decoder call: input bytes used, output bytes written, and whether the decoder may
/// hold more output than it had room for.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub consumed: usize,
    pub written: usize,
    pub more: bool,
}

/// One coding's decoder. `decode` writes only initialized bytes to the front of `out`
/// (`written` of them) and never reads `out`.
pub trait Decode: Send {
    fn decode(&mut self, input: &[u8], out: &mut [MaybeUninit<u8>]) -> Result<Step, Invalid>;
    /// True when the stream has ended where the format allows it to.
    fn is_done(&self) -> bool;
    /// Decoded bytes this decoder made and has not written (after a failure: those it made
    /// before failing, which the caller never gets). Only brotli decodes on past a full
    /// room; the others stop there, so they fail only where their output stands.
    fn held(&self) -> u64 {
        0
    }
}

/// Where the last decoder writes: the body's buffer, bounded by the limit.
pub trait Sink {
    /// Room for the next step (never empty): grows the buffer if needed.
    fn window(&mut self) -> Result<&mut [MaybeUninit<u8>], BodyError>;
    /// Marks `n` bytes of the last window as written; fails past the limit.
    fn advance(&mut self, n: usize) -> Result<(), BodyError>;
}

/// The most memory each coding's state can take: a zlib state and its 32 KiB window
/// (~45 KiB); brotli's ring buffer (≤ 16 MiB, large windows are not enabled) and its
/// tables; zstd's window (≤ 8 MiB, RFC 9659's bound) and its block buffers. A layer that
/// another decodes after also has its SCRATCH.
fn state_bytes(codings: &[Coding]) -> u64 {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    let state = |coding: &Coding| match coding {
        Coding::Gzip | Coding::Deflate => 64 * KIB,
        Coding::Brotli => 16 * MIB + 256 * KIB,
        Coding::Zstd => 8 * MIB + 256 * KIB,
    };
    let scratch = codings.len().saturating_sub(1) as u64 * SCRATCH as u64;
    codings.iter().map(state).sum::<u64>() + scratch
}

struct Layer {
    coding: Coding,
    decoder: Box<dyn Decode>,
    /// Output room for this layer when another layer decodes after it.
    scratch: Box<[MaybeUninit<u8>]>,
    /// For `pull`: the bytes of `scratch` written and not yet decoded by the next layer
    /// (`run` never leaves any).
    start: usize,
    end: usize,
    /// Bytes this layer has written, in all.
    written: u64,
}

/// The decoders of one body, in decoding order.
pub struct Decoder {
    layers: Vec<Layer>,
    /// The body's limit on decoded bytes (see `judge`).
    limit: u64,
    /// The memory budget's bytes for the decoders' state (`Decoder::reserved`), held
    /// only to be returned when the decoder is dropped.
    _reserved: Reservation,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let codings: Vec<_> = self.layers.iter().map(|l| l.coding).collect();
        f.debug_struct("Decoder")
            .field("codings", &codings)
            .finish()
    }
}

impl Decoder {
    /// `None` for an unencoded body; `limit` is the body's limit on decoded bytes.
    pub fn new(codings: &[Coding], limit: u64) -> Option<Decoder> {
        if codings.is_empty() {
            return None;
        }
        let last = codings.len() - 1;
        let layers = codings
            .iter()
            .enumerate()
            .map(|(i, &coding)| Layer {
                coding,
                decoder: match coding {
                    Coding::Gzip => Box::new(flate::Gzip::new()) as Box<dyn Decode>,
                    Coding::Deflate => Box::new(flate::Deflate::new()),
                    Coding::Brotli => Box::new(brotli::Brotli::new()),
                    Coding::Zstd => Box::new(zstd::Zstd::new()),
                },
                scratch: if i == last {
                    Box::new([])
                } else {
                    vec![MaybeUninit::uninit(); SCRATCH].into_boxed_slice()
                },
                start: 0,
                end: 0,
                written: 0,
            })
            .collect();
        Some(Decoder {
            layers,
            limit,
            _reserved: Reservation::none(),
        })
    }

    /// `new`, the decoders' state reserved from the memory budget first (core/budget.rs),
    /// at its most (`state_bytes`): refused before any of it is allocated, and returned
    /// when the decoder is dropped.
    pub fn reserved(codings: &[Coding], limit: u64) -> Result<Option<Decoder>, OverBudget> {
        let reserved = Reservation::new(state_bytes(codings))?;
        Ok(Decoder::new(codings, limit).map(|decoder| Decoder {
            _reserved: reserved,
            ..decoder
        }))
    }

    /// Decodes `input` completely: everything it yields is in the sink on return.
    pub fn push(&mut self, input: &[u8], sink: &mut dyn Sink) -> Result<(), BodyError> {
        let result = run(&mut self.layers, input, sink);
        result.map_err(|error| self.judge(error))
    }

    /// Decodes from `input` (advancing it past what was used) into `out`, and stops when
    /// `out` is full or when all of `input` is decoded and no layer holds output back:
    /// `Ok(0)` with room offered means more input is needed. What a layer holds is kept
    /// for the next call, so output is bounded per call whatever the expansion (a stream
    /// hands out decoded bytes as its reader takes them; `push` instead decodes a whole
    /// chunk into a sink that grows).
    pub fn pull(
        &mut self,
        input: &mut &[u8],
        out: &mut [MaybeUninit<u8>],
    ) -> Result<usize, BodyError> {
        let result = pull(&mut self.layers, input, out);
        result.map_err(|error| self.judge(error))
    }

    /// The limit on decoded bytes given to `new`.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// At the end of the body: every stream must have ended.
    pub fn finish(&self) -> Result<(), BodyError> {
        match self.layers.iter().find(|l| !l.decoder.is_done()) {
            Some(layer) => Err(self.judge(invalid(layer.coding, Invalid::Truncated))),
            None => Ok(()),
        }
    }

    /// The error a body gets for a decoder's failure. A decoder that made more than the
    /// limit before failing fails the limit first, as it would have with room to write it
    /// all: which of the two a body gets must not depend on the room its reader offers.
    fn judge(&self, error: BodyError) -> BodyError {
        let Some(last) = self.layers.last() else {
            return error;
        };
        let made = last.written.saturating_add(last.decoder.held());
        match error {
            BodyError::EncodingInvalid { .. } if made > self.limit => BodyError::TooLarge {
                limit: self.limit,
                length: None,
                received: self.limit.saturating_add(1),
            },
            error => error,
        }
    }
}

fn invalid(coding: Coding, reason: Invalid) -> BodyError {
    BodyError::EncodingInvalid {
        encoding: coding.name(),
        reason,
    }
}

fn run(layers: &mut [Layer], mut input: &[u8], sink: &mut dyn Sink) -> Result<(), BodyError> {
    let Some((layer, rest)) = layers.split_first_mut() else {
        return Ok(());
    };
    let coding = layer.coding;
    loop {
        let step = if rest.is_empty() {
            let step = layer
                .decoder
                .decode(input, sink.window()?)
                .map_err(|r| invalid(coding, r))?;
            layer.written += step.written as u64;
            sink.advance(step.written)?;
            step
        } else {
            let step = layer
                .decoder
                .decode(input, &mut layer.scratch)
                .map_err(|r| invalid(coding, r))?;
            // SAFETY: `decode` initialized the first `written` bytes of the scratch.
            let out = unsafe { assume_init(&layer.scratch[..step.written]) };
            run(rest, out, sink)?;
            step
        };
        input = &input[step.consumed..];
        if input.is_empty() && !step.more {
            return Ok(());
        }
        if step.consumed == 0 && step.written == 0 {
            // Input left, room offered, nothing done: a decoder that cannot progress on
            // this input would otherwise spin here forever.
            return Err(invalid(coding, Invalid::Corrupt));
        }
    }
}

/// `Decoder::pull` for `layers`, the last of which writes to `out`; each layer before it
/// is refilled from its own input only when the next layer has used all it wrote.
fn pull(
    layers: &mut [Layer],
    input: &mut &[u8],
    out: &mut [MaybeUninit<u8>],
) -> Result<usize, BodyError> {
    let Some((layer, outer)) = layers.split_last_mut() else {
        return Ok(0);
    };
    let coding = layer.coding;
    let mut written = 0;
    while written < out.len() {
        let (step, left) = match outer.last_mut() {
            None => {
                let step = layer
                    .decoder
                    .decode(input, &mut out[written..])
                    .map_err(|r| invalid(coding, r))?;
                *input = &input[step.consumed..];
                layer.written += step.written as u64;
                (step, input.len())
            }
            Some(before) => {
                // SAFETY: the layer before wrote (initialized) scratch[start..end].
                let held = unsafe { assume_init(&before.scratch[before.start..before.end]) };
                let step = layer
                    .decoder
                    .decode(held, &mut out[written..])
                    .map_err(|r| invalid(coding, r))?;
                before.start += step.consumed;
                layer.written += step.written as u64;
                (step, before.end - before.start)
            }
        };
        written += step.written;
        if step.more {
            continue;
        }
        if left > 0 {
            if step.consumed == 0 && step.written == 0 {
                // As in `run`: input left, room offered, nothing done.
                return Err(invalid(coding, Invalid::Corrupt));
            }
            continue;
        }
        // This layer used all its input: refill it from the layers before, if any.
        let Some(before) = outer.last_mut() else {
            return Ok(written);
        };
        let mut scratch = std::mem::take(&mut before.scratch);
        let refilled = pull(outer, input, &mut scratch);
        let before = outer.last_mut().expect("checked above");
        before.scratch = scratch;
        (before.start, before.end) = (0, refilled?);
        if before.end == 0 {
            return Ok(written);
        }
    }
    Ok(written)
}

/// # Safety
/// Every byte of `bytes` must be initialized.
unsafe fn assume_init(bytes: &[MaybeUninit<u8>]) -> &[u8] {
    // SAFETY: MaybeUninit<u8> has u8's layout, and the caller vouches for initialization.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), bytes.len()) }
}

#[cfg(test)]
mod tests;
