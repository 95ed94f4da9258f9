//! One request body read as a stream: `Body`'s rules (limit on the bytes sent and on the
//! decoded ones, declared length, encodings, bombs) applied chunk by chunk, with decoded
//! bytes handed out in pieces no larger than the room the reader offers. Nothing is
//! accumulated: an unencoded chunk passes straight through (the caller copies it once,
//! into the piece it hands on), and an encoded one is decoded straight into the reader's
//! room, as far as that room goes.
//!
//! Errors come in the order `Body` reports them, however the body is cut and however
//! much the reader takes at a time: a rule the bytes sent break (too many, too large) is
//! raised only after the bytes sent before them are decoded, as `Body` would have decoded
//! them before looking at the next chunk (the property test checks this).

use std::mem::MaybeUninit;

use super::body::{accept, BodyOptions, Misuse};
use super::decode::Decoder;
use super::digest::{Digest, Digests};
use super::error::BodyError;
use super::memory::Block;
use super::state::State;

/// What `read` (and the decoding part of `write`) produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// This many decoded bytes were written at the front of the room (0 only when the
    /// room was empty).
    Data(usize),
    /// Nothing more until the next chunk.
    NeedInput,
    /// The body ended and every rule held: there is nothing more.
    Done,
    /// The body failed: see `error()`. Its memory is already released.
    Failed,
}

#[derive(Debug)]
pub struct BodyStream {
    expected: Option<u64>,
    limit: u64,
    /// Bytes accepted, as sent.
    received: u64,
    /// Decoded bytes handed out (an encoded body only).
    decoded: u64,
    decoder: Option<Decoder>,
    /// Encoded bytes accepted but not decoded yet, from `held_at` on: the part of a chunk
    /// that did not fit the reader's room. This is the encoded form of bytes not yet
    /// produced, never a second copy of decoded ones.
    held: Option<Block>,
    held_at: usize,
    /// A rule the bytes sent broke, raised once everything sent before them is decoded.
    deferred: Option<BodyError>,
    /// None for a body with no digest to check or make (see `Body`).
    digests: Option<Box<Digests>>,
    ended: bool,
    state: State,
}

impl BodyStream {
    /// Never fails: what the client declared is recorded as the stream's error, as in
    /// `Body::new`. Nothing is preallocated (`max_preallocated` and `known_minimum` do not apply).
    pub fn new(options: &BodyOptions) -> BodyStream {
        let mut stream = BodyStream {
            expected: options.content_length,
            limit: options.limit,
            received: 0,
            decoded: 0,
            decoder: None,
            held: None,
            held_at: 0,
            deferred: None,
            digests: None,
            ended: false,
            state: State::Open,
        };
        match accept(options) {
            Ok(codings) => match Decoder::reserved(&codings, options.limit) {
                Ok(decoder) => stream.decoder = decoder,
                Err(over) => stream.state = State::Failed(over.into()),
            },
            Err(error) => stream.state = State::Failed(error),
        }
        stream.digests = Digests::new(&options.digest, stream.decoder.is_none()).map(Box::new);
        stream
    }

    /// True when chunks pass through undecoded: `write` then never writes to its room.
    pub fn is_identity(&self) -> bool {
        self.decoder.is_none()
    }

    /// Accepts `chunk` under the rules. Unencoded, an accepted chunk is the caller's to
    /// hand on as it is (`Read::NeedInput`); encoded, it is decoded into `out` as far as
    /// `out` goes (as `read`) and the rest is held for the next `read`s. `Read::Failed`
    /// once the body has failed (further writes then do no work).
    pub fn write(&mut self, chunk: &[u8], out: &mut [MaybeUninit<u8>]) -> Result<Read, Misuse> {
        match self.state {
            State::Open if self.ended => return Err(Misuse::AfterFinish),
            State::Open => {}
            State::Failed(_) => return Ok(Read::Failed),
            State::Aborted(_) => return Err(Misuse::AfterAbort),
            State::Done => return Err(Misuse::AfterFinish),
        }
        if self.deferred.is_some() {
            // The body is already known to fail: later bytes change nothing.
            return self.read(out);
        }
        let received = self.received.saturating_add(chunk.len() as u64);
        let broken = if let Some(expected) = self.expected.filter(|&e| received > e) {
            Some(BodyError::LengthMismatch { expected, received })
        } else if received > self.limit {
            Some(BodyError::TooLarge {
                limit: self.limit,
                length: self.expected,
                received,
            })
        } else {
            None
        };
        if let Some(error) = broken {
            if self.decoder.is_none() {
                return Ok(self.fail(error));
            }
            self.deferred = Some(error);
            return self.read(out);
        }
        self.received = received;
        if let Some(digests) = &mut self.digests {
            digests.sent(chunk);
        }
        if self.decoder.is_none() || chunk.is_empty() {
            return self.read(out);
        }
        if self.held.is_some() {
            // Earlier bytes are still waiting: this chunk goes behind them.
            if let Err(error) = self.hold(chunk) {
                return Ok(self.fail(error));
            }
            return self.read(out);
        }
        let mut input = chunk;
        let result = self.decode(&mut input, out);
        if result != Read::Failed && !input.is_empty() {
            if let Err(error) = self.hold(input) {
                return Ok(self.fail(error));
            }
        }
        Ok(result)
    }

    /// Marks the end of the body (uWS's `isLast`): `read` then reports `Done`, or the
    /// error the end reveals (fewer bytes than declared, an unfinished encoding), once
    /// everything before it has been read.
    pub fn end(&mut self) -> Result<(), Misuse> {
        match self.state {
            State::Aborted(_) => Err(Misuse::AfterAbort),
            State::Done => Err(Misuse::AfterFinish),
            _ if self.ended => Err(Misuse::AfterFinish),
            _ => {
                self.ended = true;
                Ok(())
            }
        }
    }

    /// The next decoded bytes, written at the front of `out`.
    pub fn read(&mut self, out: &mut [MaybeUninit<u8>]) -> Result<Read, Misuse> {
        match self.state {
            State::Open => {}
            State::Failed(_) => return Ok(Read::Failed),
            State::Aborted(_) => return Err(Misuse::AfterAbort),
            State::Done => return Ok(Read::Done),
        }
        let held = self.held.take();
        let mut input: &[u8] = held.as_ref().map_or(&[], |h| &h.as_slice()[self.held_at..]);
        let result = self.decode(&mut input, out);
        let left = input.len();
        match held {
            Some(held) if left > 0 && result != Read::Failed => {
                self.held_at = held.len() - left;
                self.held = Some(held);
            }
            _ => self.held_at = 0,
        }
        Ok(result)
    }

    /// Decodes from `input` into `out`; at the end of what was sent, applies what the
    /// end of the input reveals.
    fn decode(&mut self, input: &mut &[u8], out: &mut [MaybeUninit<u8>]) -> Read {
        if let Some(decoder) = &mut self.decoder {
            // Never room past `limit + 1` decoded bytes: a bomb stops one byte past it.
            let room = (self.limit - self.decoded).saturating_add(1);
            let room = usize::try_from(room).unwrap_or(usize::MAX).min(out.len());
            if room == 0 {
                // No room offered (the limit leaves at least one byte while open).
                return Read::Data(0);
            }
            match decoder.pull(input, &mut out[..room]) {
                Err(error) => return self.fail(error),
                Ok(0) => {}
                Ok(n) => {
                    if let Some(digests) = &mut self.digests {
                        // SAFETY: `pull` initialized the first `n` bytes of `out`.
                        let written =
                            unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), n) };
                        digests.decoded(written);
                    }
                    self.decoded += n as u64;
                    if self.decoded > self.limit {
                        return self.fail(BodyError::TooLarge {
                            limit: self.limit,
                            length: None,
                            received: self.decoded,
                        });
                    }
                    return Read::Data(n);
                }
            }
            if !input.is_empty() {
                // Unreachable: `pull` stops early only when the room is full.
                return Read::NeedInput;
            }
        }
        if let Some(error) = self.deferred.take() {
            return self.fail(error);
        }
        if !self.ended {
            return Read::NeedInput;
        }
        if let Some(expected) = self.expected.filter(|&e| self.received != e) {
            return self.fail(BodyError::LengthMismatch {
                expected,
                received: self.received,
            });
        }
        if let Some(Err(error)) = self.decoder.as_ref().map(Decoder::finish) {
            return self.fail(error);
        }
        // A declared digest, last, as in `Body::finish`: the error comes before the end.
        if let Some(Err(error)) = self.digests.as_deref_mut().map(Digests::finish) {
            return self.fail(error);
        }
        self.decoder = None;
        self.state = State::Done;
        Read::Done
    }

    /// Appends `bytes` to the held input, in a block of its own (the bytes still held
    /// move along: this happens only when a chunk arrives while earlier ones wait).
    fn hold(&mut self, bytes: &[u8]) -> Result<(), BodyError> {
        let waiting = match &self.held {
            Some(held) => &held.as_slice()[self.held_at..],
            None => &[],
        };
        let mut block = Block::with_capacity(waiting.len() + bytes.len())?;
        block.append(waiting);
        block.append(bytes);
        self.held = Some(block);
        self.held_at = 0;
        Ok(())
    }

    /// Releases everything now. Idempotent; a no-op once the stream is done.
    pub fn abort(&mut self) {
        if self.state.abort(self.expected, self.received) {
            self.release();
        }
    }

    pub fn error(&self) -> Option<&BodyError> {
        self.state.error()
    }

    /// Bytes accepted so far, as sent.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The digests the program asked for, once `read` reported `Done` (else empty).
    pub fn digests(&self) -> &[Digest] {
        self.digests.as_deref().map_or(&[], Digests::results)
    }

    /// Encoded bytes held, waiting for room (0 for an unencoded body).
    pub fn held(&self) -> usize {
        self.held.as_ref().map_or(0, |h| h.len() - self.held_at)
    }

    fn fail(&mut self, error: BodyError) -> Read {
        self.state = State::Failed(error);
        self.release();
        Read::Failed
    }

    fn release(&mut self) {
        self.held = None;
        self.held_at = 0;
        self.decoder = None;
        self.deferred = None;
    }
}

#[cfg(test)]
mod tests;
