//! One request body being read: the size rules (limit, declared length), the
//! preallocation cap, and the single copy of each chunk into its final place.

use std::mem::MaybeUninit;

use super::budget::Reservation;
use super::decode::{Decoder, Sink};
use super::digest::{Digest, DigestOptions, Digests};
use super::encoding;
use super::error::BodyError;
use super::memory::Block;
use super::pool;
use super::state::State;

#[derive(Debug, Clone)]
pub struct BodyOptions {
    /// The parsed content-length header; `None` when the length is unknown (chunked).
    pub content_length: Option<u64>,
    /// Largest body accepted, in bytes.
    pub limit: u64,
    /// Largest buffer allocated before the bytes have arrived (see `Body::new`).
    pub max_preallocated: u64,
    /// The content-encoding header, if any.
    pub content_encoding: Option<String>,
    /// Decode encoded bodies; when false any coding but identity gets 415.
    pub decode: bool,
    /// For an unknown length: bytes the caller already holds for this body and is about to
    /// push. Room for them is taken at once, as for a declared length (and within the same
    /// cap), so the body does not start exactly sized and then move into a larger block.
    pub known_minimum: u64,
    /// Digests to check (declared by the request) and to make (asked by the program).
    pub digest: DigestOptions,
}

impl Default for BodyOptions {
    fn default() -> BodyOptions {
        BodyOptions {
            content_length: None,
            limit: 0,
            max_preallocated: 0,
            content_encoding: None,
            decode: true,
            known_minimum: 0,
            digest: DigestOptions::default(),
        }
    }
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
pub struct Body {
    expected: Option<u64>,
    limit: u64,
    received: u64,
    block: Option<Block>,
    /// For an encoded body: its decoders (the block then holds decoded bytes).
    decoder: Option<Decoder>,
    /// None for a body with no digest to check or make: it pays one branch per push.
    digests: Option<Box<Digests>>,
    /// The memory budget's bytes for what a declared length can still grow to, past the
    /// block's own reservation (core/budget.rs): taken whole when the body begins.
    admission: Reservation,
    state: State,
}

/// The first room offered to decoded bytes. The declared length is the encoded size, so
/// it says nothing about how large the decoded body will be: memory grows as decoded
/// bytes appear, from here, doubling.
const FIRST_DECODED: u64 = 64 * 1024;

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
            decoder: None,
            digests: None,
            admission: Reservation::none(),
            state: State::Open,
        };
        let codings = match accept(options) {
            Ok(codings) => codings,
            Err(error) => {
                body.state = State::Failed(error);
                return body;
            }
        };
        match Decoder::reserved(&codings, options.limit) {
            Ok(decoder) => body.decoder = decoder,
            Err(over) => {
                body.fail(over.into());
                return body;
            }
        }
        body.digests = Digests::new(&options.digest, body.decoder.is_none()).map(Box::new);
        if body.decoder.is_some() {
            return body;
        }
        if options.content_length.is_none() && options.known_minimum > 0 {
            // Bytes already received (a first chunk kept by the caller, and the next one):
            // the body has more than one chunk, so it likely ends where recent bodies of
            // unknown length ended, as far as the pool can tell (see push()). Sizing it to
            // the first chunk instead cost a block and a move (docs/performance.md, row
            // 'first block of an unknown length').
            let minimum = options.known_minimum.min(options.limit);
            let recent = Block::recent(to_usize(minimum), to_usize(options.limit));
            match recent.map_or_else(
                || Block::with_capacity(to_usize(minimum.min(options.max_preallocated))),
                Ok,
            ) {
                Ok(block) => body.block = Some(block),
                Err(error) => body.fail(error.into()),
            }
            return body;
        }
        if let Some(length) = options.content_length.filter(|&l| l > 0) {
            // Admitted whole or refused before any byte is read: what the body can grow to
            // (its length in its pool class) is reserved now, and its blocks come out of it.
            let whole = pool::class_size(to_usize(length)).map_or(length, |size| size as u64);
            if whole > isize::MAX as u64 {
                // More than any allocation can be: the allocator's refusal.
                body.fail(BodyError::OutOfMemory { requested: whole });
                return body;
            }
            match Reservation::new(whole) {
                Ok(reserved) => body.admission = reserved,
                Err(over) => {
                    body.fail(over.into());
                    return body;
                }
            }
            let capacity = length.min(options.max_preallocated);
            // Past the cap, an idle pooled block of the whole length is taken if there is
            // one: the process holds that memory already, so the client makes it allocate
            // nothing it has not sent; and the body then never grows (no re-copy).
            let admission = &mut body.admission;
            let idle = (length > capacity)
                .then(|| Block::idle_in(to_usize(length), admission))
                .flatten();
            match idle.map_or_else(
                || Block::with_capacity_in(to_usize(capacity), admission),
                Ok,
            ) {
                Ok(block) => body.block = Some(block),
                Err(error) => body.fail(error.into()),
            }
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
            State::Done => return Err(Misuse::AfterFinish),
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
        // Hashed as it is copied, while the chunk is in cache (see digest/mod.rs).
        if let Some(digests) = &mut self.digests {
            digests.sent(chunk);
        }
        if let Some(decoder) = &mut self.decoder {
            let mut sink = Decoded {
                block: &mut self.block,
                limit: self.limit,
                digests: self.digests.as_deref_mut(),
            };
            if let Err(error) = decoder.push(chunk, &mut sink) {
                self.fail(error);
                return Ok(false);
            }
        } else if !chunk.is_empty() {
            let bound = self.expected.unwrap_or(self.limit);
            let block = self.block.get_or_insert_with(Block::empty);
            let admission = &mut self.admission;
            let needed = block.len() + chunk.len();
            if needed > block.capacity() {
                // Geometric growth keeps an unknown-length body linear in its size; the
                // bound keeps capacity within what the client may legitimately send.
                let doubled = (block.capacity() as u64).saturating_mul(2);
                let target = doubled.min(bound).max(needed as u64);
                // An idle block ends the growth at once, without new memory: for a known
                // length, one of the whole length (returned since this body began); for
                // an unknown one that already holds bytes (a first chunk is allocated
                // exactly), the most recent idle block at least as large as the next
                // doubling: the size recent bodies ended with (docs/performance.md, row
                // 'growth into idle blocks').
                // Blocks are reserved from the admission, which this one's reservation
                // joins first: a declared length never reserves more than it did at the
                // start, an unknown one reserves the step (core/budget.rs).
                admission.merge(block.take_reservation());
                let idle = match self.expected {
                    Some(e) => Block::idle_in(to_usize(e), admission),
                    None if !block.is_empty() => {
                        Block::recent_in(to_usize(target), to_usize(bound), admission)
                    }
                    None => None,
                };
                let grown = match idle {
                    Some(whole) if whole.capacity() >= needed => {
                        block.move_into(whole);
                        Ok(())
                    }
                    // None, or not the size asked for (dropped: back to the pool).
                    other => {
                        if let Some(mut small) = other {
                            admission.merge(small.take_reservation());
                        }
                        block.grow_to_in(to_usize(target), admission)
                    }
                };
                if let Err(error) = grown {
                    self.fail(error.into());
                    return Ok(false);
                }
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
            State::Done => return Err(FinishError::Misuse(Misuse::AfterFinish)),
        }
        if let Some(expected) = self.expected.filter(|&e| self.received != e) {
            let error = BodyError::LengthMismatch {
                expected,
                received: self.received,
            };
            self.fail(error.clone());
            return Err(FinishError::Body(error));
        }
        if let Some(Err(error)) = self.decoder.as_ref().map(Decoder::finish) {
            self.fail(error.clone());
            return Err(FinishError::Body(error));
        }
        self.decoder = None;
        // The last end-of-body rule: a digest the request declared. Like a length
        // mismatch, the body fails and its memory goes before the program sees a byte.
        if let Some(Err(error)) = self.digests.as_deref_mut().map(Digests::finish) {
            self.fail(error.clone());
            return Err(FinishError::Body(error));
        }
        self.state = State::Done;
        // The block keeps its own reservation until it goes back to the pool.
        self.admission = Reservation::none();
        Ok(self.block.take().unwrap_or_else(Block::empty))
    }

    /// Releases everything now. Idempotent; a no-op after `finish()`.
    pub fn abort(&mut self) {
        if self.state.abort(self.expected, self.received) {
            self.release();
        }
    }

    pub fn error(&self) -> Option<&BodyError> {
        self.state.error()
    }

    /// Bytes accepted so far, as sent (encoded, for an encoded body).
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Bytes held now, decoded (0 once finished, failed or aborted).
    pub fn length(&self) -> usize {
        self.block.as_ref().map_or(0, Block::len)
    }

    /// The digests the program asked for, once `finish()` succeeded (else empty).
    pub fn digests(&self) -> &[Digest] {
        self.digests.as_deref().map_or(&[], Digests::results)
    }

    /// Bytes allocated now.
    pub fn capacity(&self) -> usize {
        self.block.as_ref().map_or(0, Block::capacity)
    }

    fn fail(&mut self, error: BodyError) {
        self.state = State::Failed(error);
        self.release();
    }

    fn release(&mut self) {
        self.block = None;
        self.decoder = None;
        self.admission = Reservation::none();
    }
}

/// What is refused before any byte is read, for `Body` and `BodyStream` alike: an
/// encoding not decoded (or any with `decode` false), or a declared length over the limit.
/// The limit applies to the bytes sent as well as to the decoded ones, so a declared length
/// over it fails whatever the encoding, before any decoder state is allocated.
pub(super) fn accept(options: &BodyOptions) -> Result<Vec<encoding::Coding>, BodyError> {
    let codings = encoding::parse(options.content_encoding.as_deref(), options.decode)?;
    if let Some(length) = options.content_length.filter(|&l| l > options.limit) {
        return Err(BodyError::TooLarge {
            limit: options.limit,
            length: Some(length),
            received: 0,
        });
    }
    Ok(codings)
}

/// The decoders' output: the body's block, never allowed past `limit + 1` bytes, so that
/// exceeding the limit is seen (and decoding stops) one byte after it.
struct Decoded<'a> {
    block: &'a mut Option<Block>,
    limit: u64,
    /// The decoded bytes are hashed as they are written.
    digests: Option<&'a mut Digests>,
}

impl Sink for Decoded<'_> {
    fn window(&mut self) -> Result<&mut [MaybeUninit<u8>], BodyError> {
        let bound = self.limit.saturating_add(1);
        let block = self.block.get_or_insert_with(Block::empty);
        let len = block.len() as u64;
        if block.len() == block.capacity() {
            let target = (block.capacity() as u64)
                .saturating_mul(2)
                .max(FIRST_DECODED)
                .min(bound);
            block.grow_to(to_usize(target))?;
        }
        let room = (block.capacity() as u64 - len).min(bound - len);
        Ok(block.spare(to_usize(room)))
    }

    fn advance(&mut self, n: usize) -> Result<(), BodyError> {
        let Some(block) = self.block.as_mut() else {
            return Ok(());
        };
        // SAFETY: the decoder initialized the first `n` bytes of the last window.
        unsafe { block.assume_appended(n) };
        if let Some(digests) = self.digests.as_deref_mut() {
            let written = block.as_slice();
            digests.decoded(&written[written.len() - n..]);
        }
        let decoded = block.len() as u64;
        if decoded > self.limit {
            return Err(BodyError::TooLarge {
                limit: self.limit,
                length: None,
                received: decoded,
            });
        }
        Ok(())
    }
}

/// Lengths are bounded by `limit`, which the caller keeps to what this machine can
/// address; saturating keeps a 32-bit target from wrapping instead of panicking.
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
