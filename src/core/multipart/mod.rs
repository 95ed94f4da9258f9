//! A sans-IO streaming parser for `multipart/form-data` bodies (RFC 7578, RFC 2046 5.1).
//!
//! The caller pushes the body's bytes in, in chunks cut anywhere, and pulls events out:
//! a part's head (`Event::Part`), its body as slices (`Event::Data`), its end
//! (`Event::PartEnd`), and at last `Event::Done` or `Event::Failed`. A part's body comes
//! out as slices of the caller's own input (or, for the few bytes that straddled two
//! chunks and could have been a delimiter, of the parser's carry-over), so each byte is
//! copied once, by the caller, into its destination; `read` does that copy into a room
//! the caller provides, as `BodyStream::read` does.
//!
//! The parser holds no body: at most a partial delimiter (73 bytes) and one part's header
//! block (`Limits::header_size`, 16 KiB by default). What it reports of a head is raw:
//! names and file names are the client's bytes, which may hold `../`, NUL or thousands
//! of characters. Sanitising a file name before it goes near a file system is the caller's
//! job (`Filename::flags` tells the suspicious ones).
//!
//! It follows busboy 1.6 (lib/types/multipart.js) where the RFCs leave room:
//! - the body may start with the first delimiter (`--boundary`, no CRLF before it):
//!   busboy searches `\r\n--boundary` in the body with a CRLF put in front;
//! - before the first delimiter (preamble) and after the final one (epilogue) bytes are
//!   ignored, and `Done` comes as soon as `--boundary--` is seen;
//! - a delimiter followed by neither `--` nor CRLF (transport padding included) ends the
//!   part before it, and the bytes up to the next delimiter are ignored;
//! - a part is a file when it has a file name or its type is `application/octet-stream`;
//! - `name`, `filename`, `filename*` and quoted strings as busboy parses them (`params`).
//!
//! and departs from it on purpose:
//! - a part without `Content-Disposition` (or not `form-data`) is an error, not skipped;
//! - a folded header line is an error, not joined;
//! - every limit is an error (busboy truncates and emits an event, multer then fails),
//!   raised as soon as the bytes break it, and limits are inclusive maxima (`limits`);
//! - a `filename*` in a charset other than UTF-8 and latin1 is ignored (`filename` used);
//! - no delimiter is looked for inside a header block (busboy's search runs there too and
//!   then splices the block together): such a block is malformed, or over its bound;
//!   one that the block's closing CRLF begins (a body starting with `--boundary`) is
//!   busboy's malformed header too.
//!
//! Driving it, as a binding does from uWS's `onData(chunk, isLast)`: offer the chunk
//! until it is consumed, take each event, and after the last chunk call `end`:
//!
//! ```
//! use uws_body::core::multipart::{Boundary, Event, Limits, Multipart};
//!
//! let boundary = Boundary::from_content_type(b"multipart/form-data; boundary=XyZ").unwrap();
//! let mut parser = Multipart::new(&boundary, Limits::default());
//! let body: &[u8] = b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ--";
//! let (mut names, mut data) = (Vec::new(), Vec::new());
//! for (i, chunk) in body.chunks(7).enumerate() {
//!     let mut input = chunk;
//!     loop {
//!         let step = parser.next(input, 64 * 1024).unwrap();
//!         input = &input[step.consumed..];
//!         match step.event {
//!             Event::Part(head) => names.push(head.name.clone()),
//!             Event::Data(bytes) => data.extend_from_slice(bytes), // the one copy
//!             Event::PartEnd => {}
//!             Event::NeedInput => break,
//!             Event::Done => break, // answer now; the rest of the body is ignored
//!             Event::Failed => panic!("{:?}", parser.error()), // status(), code()
//!         }
//!     }
//!     if i == body.len().div_ceil(7) - 1 {
//!         parser.end().unwrap(); // isLast: a body without its final delimiter fails here
//!         assert_eq!(parser.next(&[], 1).unwrap().event, Event::Done);
//!     }
//! }
//! assert_eq!((names, data), (vec![Some(b"a".to_vec())], b"1".to_vec()));
//! ```

mod boundary;
mod decoding;
mod disposition;
mod error;
mod grammar;
mod headers;
mod limits;
mod params;
mod upload;

#[cfg(test)]
mod decoding_tests;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

use std::mem::MaybeUninit;

use memchr::memmem::Finder;

pub use self::boundary::{Boundary, MAX_BOUNDARY};
pub use self::decoding::Decoding;
pub use self::disposition::{Filename, NameEncoding, NameFlags, PartHead};
pub use self::error::{BoundaryProblem, HeaderProblem, MultipartError, Where};
pub use self::limits::{Limit, Limits};
pub use self::upload::{Fed, Outcome, Sink, Upload};
use super::body::Misuse;
use boundary::MAX_DELIMITER;
use headers::{HeaderBlock, Progress};

/// What one call to `Multipart::next` produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'p> {
    /// A part begins: its head. Its body follows as `Data`, then `PartEnd`.
    Part(&'p PartHead),
    /// Bytes of the current part's body, never empty, at most `max`.
    Data(&'p [u8]),
    /// The current part's body is complete.
    PartEnd,
    /// Every byte given was consumed: pass the next chunk, or call `end`.
    NeedInput,
    /// The final delimiter was seen: there is nothing more (any later bytes are ignored).
    Done,
    /// The body is refused: see `error()`. The parser's memory is released.
    Failed,
}

/// An event, and how many bytes of the input it took: the next call gets
/// `&input[consumed..]` (or, once all is consumed, the next chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step<'p> {
    pub consumed: usize,
    pub event: Event<'p>,
}

/// `Event` with its data copied into the caller's room (see `Multipart::read`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// A part begins: see `head()`.
    Part,
    /// This many bytes of the current part's body were written at the front of the room.
    Data(usize),
    PartEnd,
    NeedInput,
    Done,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// Right after `\r\n--boundary`.
    Start,
    /// After `\r\n--boundary-`.
    Dash,
    /// After `\r\n--boundary\r`.
    Cr,
}

#[derive(Debug)]
enum State {
    /// Before the first delimiter: bytes ignored.
    Preamble,
    /// After a delimiter: what follows it decides.
    After(After),
    Headers,
    Body,
    /// After a delimiter followed by neither `--` nor CRLF: ignored to the next delimiter.
    Skip,
    Done,
    Failed(MultipartError),
    Aborted,
}

/// One multipart body being parsed. See the module's documentation.
pub struct Multipart {
    /// `\r\n--boundary`, and its searcher.
    delimiter: Vec<u8>,
    finder: Finder<'static>,
    limits: Limits,
    state: State,
    /// The end of the bytes consumed so far that may begin a delimiter, or bytes of it
    /// known since to be body, not yet handed out: `carry[carry_at..carry_end]`.
    carry: [u8; MAX_DELIMITER],
    carry_at: usize,
    carry_end: usize,
    /// Bytes at the front of the next input already searched and known to be body.
    clear: usize,
    /// Bytes at the front of the carry-over that are no body: the header block's closing
    /// CRLF, put back so that a delimiter it begins is seen, as busboy sees it.
    phantom: usize,
    block: HeaderBlock,
    head: PartHead,
    /// Body bytes of the current part handed out.
    size: u64,
    /// The current part's data goes nowhere, so its size limit is not applied (multer
    /// applies `fileSize` only to a file it keeps, not one its filter refused).
    unlimited: bool,
    parts: u64,
    fields: u64,
    files: u64,
    ended: bool,
}

impl std::fmt::Debug for Multipart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Multipart")
            .field("boundary", &String::from_utf8_lossy(&self.delimiter[4..]))
            .field("state", &self.state)
            .field("parts", &self.parts)
            .finish_non_exhaustive()
    }
}

impl Multipart {
    pub fn new(boundary: &Boundary, limits: Limits) -> Multipart {
        let delimiter = boundary.delimiter().to_vec();
        let finder = Finder::new(&delimiter).into_owned();
        let mut carry = [0; MAX_DELIMITER];
        // busboy's CRLF in front: a body may start with `--boundary`.
        carry[..2].copy_from_slice(b"\r\n");
        Multipart {
            delimiter,
            finder,
            limits,
            state: State::Preamble,
            carry,
            carry_at: 0,
            carry_end: 2,
            clear: 0,
            phantom: 0,
            block: HeaderBlock::new(),
            head: PartHead::default(),
            size: 0,
            unlimited: false,
            parts: 0,
            fields: 0,
            files: 0,
            ended: false,
        }
    }

    /// Parses from `input` (the bytes after those consumed so far) to the next event.
    /// `Data` is at most `max` bytes (at least 1). Once `Done` or `Failed`, every call
    /// says so again and consumes all its input.
    pub fn next<'p>(&'p mut self, input: &'p [u8], max: usize) -> Result<Step<'p>, Misuse> {
        let max = max.max(1);
        let mut pos = 0;
        loop {
            match self.state {
                State::Aborted => return Err(Misuse::AfterAbort),
                State::Failed(_) => return Ok(step(input.len(), Event::Failed)),
                State::Done => return Ok(step(input.len(), Event::Done)),
                State::After(after) => {
                    let Some(&b) = input.get(pos) else {
                        return Ok(self.need(input.len()));
                    };
                    match (after, b) {
                        (After::Start, b'-') => self.state = State::After(After::Dash),
                        (After::Start, b'\r') => self.state = State::After(After::Cr),
                        (After::Dash, b'-') => {
                            self.state = State::Done;
                            self.release();
                            return Ok(step(input.len(), Event::Done));
                        }
                        (After::Cr, b'\n') => {
                            self.parts += 1;
                            if self.parts > self.limits.parts {
                                let max = self.limits.parts;
                                return Ok(self.fail(Limit::PartCount.max(max), input.len()));
                            }
                            self.block.reset();
                            self.state = State::Headers;
                        }
                        // Not consumed: the byte is searched like any other.
                        _ => {
                            self.state = State::Skip;
                            continue;
                        }
                    }
                    pos += 1;
                }
                State::Headers => match self.block.push(&input[pos..], &self.limits) {
                    Err(error) => return Ok(self.fail(error, input.len())),
                    Ok(Progress::More) => return Ok(self.need(input.len())),
                    Ok(Progress::Done(n)) => {
                        pos += n;
                        if let Err(error) = self.begin_part() {
                            return Ok(self.fail(error, input.len()));
                        }
                        return Ok(step(pos, Event::Part(&self.head)));
                    }
                },
                State::Preamble | State::Body | State::Skip => {
                    let body = matches!(self.state, State::Body);
                    if self.carry_at < self.carry_end {
                        match self.resolve_carry(&input[pos..]) {
                            Carry::Body(n) if body && self.phantom > 0 => {
                                let skip = n.min(self.phantom);
                                self.carry_at += skip;
                                self.phantom -= skip;
                            }
                            Carry::Delimiter(_) if body && self.phantom > 0 => {
                                let error = MultipartError::Header(HeaderProblem::Syntax);
                                return Ok(self.fail(error, input.len()));
                            }
                            Carry::Body(n) if body => {
                                let n = n.min(max);
                                if let Err(error) = self.count(n) {
                                    return Ok(self.fail(error, input.len()));
                                }
                                let at = self.carry_at;
                                self.carry_at += n;
                                return Ok(step(pos, Event::Data(&self.carry[at..at + n])));
                            }
                            Carry::Body(n) => self.carry_at += n,
                            Carry::Delimiter(n) => {
                                self.carry_at = 0;
                                self.carry_end = 0;
                                pos += n;
                                if let Some(done) = self.delimiter_found(pos) {
                                    return Ok(done);
                                }
                            }
                            Carry::Partial => {
                                self.hold(&input[pos..]);
                                return Ok(self.need(input.len()));
                            }
                        }
                        continue;
                    }
                    let rest = &input[pos..];
                    if rest.is_empty() {
                        return Ok(self.need(input.len()));
                    }
                    let n = if self.clear > 0 {
                        self.clear.min(rest.len())
                    } else {
                        match self.finder.find(rest) {
                            Some(0) => {
                                pos += self.delimiter.len();
                                if let Some(done) = self.delimiter_found(pos) {
                                    return Ok(done);
                                }
                                continue;
                            }
                            Some(at) => at,
                            None => match self.partial_at(rest) {
                                0 => {
                                    self.hold(rest);
                                    return Ok(self.need(input.len()));
                                }
                                at => at,
                            },
                        }
                    };
                    if !body {
                        self.clear = 0;
                        pos += n;
                        continue;
                    }
                    let take = n.min(max);
                    self.clear = n - take;
                    if let Err(error) = self.count(take) {
                        return Ok(self.fail(error, input.len()));
                    }
                    return Ok(step(pos + take, Event::Data(&rest[..take])));
                }
            }
        }
    }

    /// As `next`, with a part's data copied into `out` (`Piece::Data(n)`: the first `n`
    /// bytes of `out`), and the head of `Piece::Part` in `head()`: the form a binding
    /// that hands data on in its own buffers needs. An empty `out` gives `Data(0)` and
    /// consumes nothing (unless the parser is done or failed). Returns the bytes of `input` consumed and the piece.
    pub fn read(
        &mut self,
        input: &[u8],
        out: &mut [MaybeUninit<u8>],
    ) -> Result<(usize, Piece), Misuse> {
        if out.is_empty() {
            return match self.state {
                State::Aborted => Err(Misuse::AfterAbort),
                State::Failed(_) => Ok((input.len(), Piece::Failed)),
                State::Done => Ok((input.len(), Piece::Done)),
                _ => Ok((0, Piece::Data(0))),
            };
        }
        let Step { consumed, event } = self.next(input, out.len())?;
        let piece = match event {
            Event::Part(_) => Piece::Part,
            Event::Data(data) => {
                for (o, &b) in out.iter_mut().zip(data) {
                    o.write(b);
                }
                Piece::Data(data.len())
            }
            Event::PartEnd => Piece::PartEnd,
            Event::NeedInput => Piece::NeedInput,
            Event::Done => Piece::Done,
            Event::Failed => Piece::Failed,
        };
        Ok((consumed, piece))
    }

    /// Marks the end of the body (uWS's `isLast`): once the input given is consumed,
    /// `next` reports `Done` if the final delimiter was seen, else `Failed` with
    /// `Truncated` (where the body stopped).
    pub fn end(&mut self) -> Result<(), Misuse> {
        match self.state {
            State::Aborted => Err(Misuse::AfterAbort),
            _ if self.ended => Err(Misuse::AfterFinish),
            _ => {
                self.ended = true;
                Ok(())
            }
        }
    }

    /// Releases everything now (the client went away, or the caller gave up). Later
    /// calls but `error` and `abort` are misuse.
    pub fn abort(&mut self) {
        if !matches!(self.state, State::Aborted) {
            self.state = State::Aborted;
            self.release();
        }
    }

    pub fn error(&self) -> Option<&MultipartError> {
        match &self.state {
            State::Failed(error) => Some(error),
            _ => None,
        }
    }

    /// The head of the current part (after `Part`, until the next part begins).
    pub fn head(&self) -> &PartHead {
        &self.head
    }

    /// Parts begun so far.
    pub fn parts(&self) -> u64 {
        self.parts
    }

    /// Bytes held between calls: the carry-over and the header block's buffer. At most
    /// 73 + `Limits::header_size` (rounded up to 256).
    pub fn held(&self) -> usize {
        (self.carry_end - self.carry_at) + self.block.held()
    }

    /// Every byte given is consumed: ask for more, or at the end say how it ended.
    fn need(&mut self, consumed: usize) -> Step<'static> {
        if !self.ended {
            return step(consumed, Event::NeedInput);
        }
        let at = match self.state {
            State::Preamble => Where::Preamble,
            State::Headers => Where::Headers,
            State::Body => Where::Body,
            _ => Where::Delimiter,
        };
        self.fail(MultipartError::Truncated(at), consumed)
    }

    /// What the carry-over is, now that `rest` follows it.
    fn resolve_carry(&self, rest: &[u8]) -> Carry {
        let carry = &self.carry[self.carry_at..self.carry_end];
        let delimiter = &self.delimiter[..];
        // The first place in the carry where a delimiter may start and go on into `rest`.
        for j in 0..carry.len() {
            let head = &carry[j..];
            if !delimiter.starts_with(head) {
                continue;
            }
            let wanted = &delimiter[head.len()..];
            let seen = wanted.len().min(rest.len());
            if rest[..seen] != wanted[..seen] {
                continue;
            }
            return if j > 0 {
                Carry::Body(j)
            } else if seen == wanted.len() {
                Carry::Delimiter(seen)
            } else {
                Carry::Partial
            };
        }
        Carry::Body(carry.len())
    }

    /// Where in `rest` (which holds no whole delimiter) a delimiter may begin that goes on
    /// in the next chunk: `rest.len()` if nowhere.
    fn partial_at(&self, rest: &[u8]) -> usize {
        let from = rest.len().saturating_sub(self.delimiter.len() - 1);
        (from..rest.len())
            .find(|&i| rest[i] == b'\r' && self.delimiter.starts_with(&rest[i..]))
            .unwrap_or(rest.len())
    }

    /// Appends `bytes` (the start of a possible delimiter) to the carry-over.
    fn hold(&mut self, bytes: &[u8]) {
        let kept = self.carry_end - self.carry_at;
        self.carry.copy_within(self.carry_at..self.carry_end, 0);
        self.carry[kept..kept + bytes.len()].copy_from_slice(bytes);
        self.carry_at = 0;
        self.carry_end = kept + bytes.len();
    }

    /// A delimiter was consumed (input up to `pos`): the part before it, if any, ends.
    fn delimiter_found(&mut self, pos: usize) -> Option<Step<'static>> {
        let body = matches!(self.state, State::Body);
        self.state = State::After(After::Start);
        body.then(|| step(pos, Event::PartEnd))
    }

    /// A header block ended: the part's head, under the limits.
    fn begin_part(&mut self) -> Result<(), MultipartError> {
        self.head.resolve(self.block.values())?;
        let limits = &self.limits;
        if self.head.is_file {
            self.files += 1;
            if self.files > limits.files {
                return Err(Limit::FileCount.max(limits.files));
            }
        } else {
            self.fields += 1;
            if self.fields > limits.fields {
                return Err(Limit::FieldCount.max(limits.fields));
            }
        }
        let name = self.head.name.as_ref().map_or(0, Vec::len);
        if name as u64 > limits.field_name_size {
            return Err(Limit::FieldKey.max(limits.field_name_size));
        }
        self.block.reset();
        self.size = 0;
        self.unlimited = false;
        self.state = State::Body;
        // The block's closing CRLF, searched again with the body (busboy's search runs
        // across it): a body that starts with `--boundary` ends the part in its headers.
        self.carry[..2].copy_from_slice(b"\r\n");
        self.carry_at = 0;
        self.carry_end = 2;
        self.phantom = 2;
        Ok(())
    }

    /// Whether the current part's size limit is off from now on: its data is dropped
    /// (the caller skips it), so it holds nothing. Back on at the next part.
    pub fn set_unlimited(&mut self, unlimited: bool) {
        self.unlimited = unlimited;
    }

    /// Counts `n` more bytes of the current part against its limit.
    fn count(&mut self, n: usize) -> Result<(), MultipartError> {
        self.size += n as u64;
        if self.unlimited {
            return Ok(());
        }
        let (limit, max) = if self.head.is_file {
            (Limit::FileSize, self.limits.file_size)
        } else {
            (Limit::FieldValue, self.limits.field_size)
        };
        if self.size > max {
            return Err(limit.max(max));
        }
        Ok(())
    }

    fn fail(&mut self, error: MultipartError, consumed: usize) -> Step<'static> {
        self.state = State::Failed(error);
        self.release();
        step(consumed, Event::Failed)
    }

    fn release(&mut self) {
        self.block.release();
        self.head.clear();
        self.carry_at = 0;
        self.carry_end = 0;
        self.clear = 0;
        self.phantom = 0;
    }
}

/// What the carry-over turned out to be.
enum Carry {
    /// Its first `n` bytes are body (or ignored bytes): no delimiter starts there.
    Body(usize),
    /// It starts a delimiter that ends after the first `n` bytes of the input.
    Delimiter(usize),
    /// It and the whole input are the start of a delimiter.
    Partial,
}

impl Limit {
    fn max(self, max: u64) -> MultipartError {
        MultipartError::Limit { limit: self, max }
    }
}

fn step(consumed: usize, event: Event<'_>) -> Step<'_> {
    Step { consumed, event }
}
