//! One request body being read: the size rules (limit, declared length), the
//! preallocation cap, and the single copy of each chunk into its final place.

use super::encoding;
use super::error::BodyError;
use super::memory::Block;

#[derive(Debug, Clone, Default)]
pub struct BodyOptions {
    /// The parsed content-length header; `None` when the length is unknown (chunked).
    pub content_length: Option<u64>,
    /// Largest body accepted, in bytes.
    pub limit: u64,
    /// Largest buffer allocated before the bytes have arrived (see `Body::new`).
    pub max_preallocated: u64,
    /// The content-encoding header, if any.
    pub content_encoding: Option<String>,
}

/// A call that the body's state does not allow: a programmer's error, not a client's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misuse {
    AfterFinish,
    AfterAbort,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishError {
    Body(BodyError),
    Misuse(Misuse),
}

#[derive(Debug)]
enum State {
    Open,
    Failed(BodyError),
    Aborted(BodyError),
    Finished,
}

#[derive(Debug)]
pub struct Body {
    expected: Option<u64>,
    limit: u64,
    received: u64,
    block: Option<Block>,
    state: State,
}

impl Body {
    /// Never fails: what the client declared (a length over the limit, a bad encoding) is
    /// recorded as the body's error, so the caller handles it like any later error.
    ///
    /// With a known length the final buffer is allocated now, but at most
    /// `max_preallocated` bytes of it: otherwise a client could declare 1 GiB, send one
    /// byte and make the server hold 1 GiB for free. Past the cap memory grows only as
    /// bytes arrive, which a client can force anyway by sending them.
    pub fn new(options: &BodyOptions) -> Body {
        let mut body = Body {
            expected: options.content_length,
            limit: options.limit,
            received: 0,
            block: None,
            state: State::Open,
        };
        if let Err(error) = encoding::parse(options.content_encoding.as_deref()) {
            body.state = State::Failed(error);
        } else if let Some(length) = options.content_length.filter(|&l| l > options.limit) {
            body.state = State::Failed(BodyError::TooLarge {
                limit: options.limit,
                length: Some(length),
                received: 0,
            });
        } else if let Some(length) = options.content_length.filter(|&l| l > 0) {
            let capacity = length.min(options.max_preallocated);
            body.block = Some(Block::with_capacity(to_usize(capacity)));
        }
        body
    }

    /// Copies `chunk` into the body. `Ok(false)` once the body has failed (the error is in
    /// `error()` and its memory is already released); further pushes then do no work.
    pub fn push(&mut self, chunk: &[u8]) -> Result<bool, Misuse> {
        match self.state {
            State::Open => {}
            State::Failed(_) => return Ok(false),
            State::Aborted(_) => return Err(Misuse::AfterAbort),
            State::Finished => return Err(Misuse::AfterFinish),
        }
        let received = self.received.saturating_add(chunk.len() as u64);
        if let Some(expected) = self.expected.filter(|&e| received > e) {
            self.fail(BodyError::LengthMismatch { expected, received });
            return Ok(false);
        }
        if received > self.limit {
            self.fail(BodyError::TooLarge {
                limit: self.limit,
                length: self.expected,
                received,
            });
            return Ok(false);
        }
        self.received = received;
        if !chunk.is_empty() {
            let bound = self.expected.unwrap_or(self.limit);
            let block = self.block.get_or_insert_with(|| Block::with_capacity(0));
            let needed = block.len() + chunk.len();
            if needed > block.capacity() {
                // Geometric growth keeps an unknown-length body linear in its size; the
                // bound keeps capacity within what the client may legitimately send.
                let doubled = (block.capacity() as u64).saturating_mul(2);
                let target = doubled.min(bound).max(needed as u64);
                block.grow_to(to_usize(target));
            }
            block.append(chunk);
        }
        Ok(true)
    }

    /// Ends the body and hands over its bytes.
    pub fn finish(&mut self) -> Result<Block, FinishError> {
        match &self.state {
            State::Open => {}
            State::Failed(error) | State::Aborted(error) => {
                return Err(FinishError::Body(error.clone()))
            }
            State::Finished => return Err(FinishError::Misuse(Misuse::AfterFinish)),
        }
        if let Some(expected) = self.expected.filter(|&e| self.received != e) {
            let error = BodyError::LengthMismatch {
                expected,
                received: self.received,
            };
            self.fail(error.clone());
            return Err(FinishError::Body(error));
        }
        self.state = State::Finished;
        Ok(self.block.take().unwrap_or_else(|| Block::with_capacity(0)))
    }

    /// Releases everything now. Idempotent; a no-op after `finish()`.
    pub fn abort(&mut self) {
        if let State::Open | State::Failed(_) = self.state {
            let error = match std::mem::replace(&mut self.state, State::Finished) {
                State::Failed(error) => error,
                _ => BodyError::Aborted {
                    expected: self.expected,
                    received: self.received,
                },
            };
            self.state = State::Aborted(error);
            self.block = None;
        }
    }

    pub fn error(&self) -> Option<&BodyError> {
        match &self.state {
            State::Failed(error) | State::Aborted(error) => Some(error),
            _ => None,
        }
    }

    /// Bytes accepted so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Bytes held now (0 once finished, failed or aborted).
    pub fn length(&self) -> usize {
        self.block.as_ref().map_or(0, Block::len)
    }

    /// Bytes allocated now.
    pub fn capacity(&self) -> usize {
        self.block.as_ref().map_or(0, Block::capacity)
    }

    fn fail(&mut self, error: BodyError) {
        self.state = State::Failed(error);
        self.block = None;
    }
}

/// Lengths are bounded by `limit`, which the caller keeps to what this machine can
/// address; saturating keeps a 32-bit target from wrapping instead of panicking.
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
