//! A part's header block, read byte by byte across chunks (as busboy's `HeaderParser`):
//! `name: value` lines, each ending in CRLF, then a blank line. A name is a token; the
//! value is what follows the colon and its spaces or tabs, to the CR: tab, visible ASCII
//! and bytes from 0x80, nothing else (a bare LF, NUL or DEL is malformed). Unlike busboy,
//! a folded line (one starting with a space or tab) is refused, not joined.
//!
//! The block is kept whole until its end (at most `header_size` bytes): only the first
//! `Content-Disposition`, `Content-Type` and `Content-Transfer-Encoding` are read, at
//! the end.

use super::error::{HeaderProblem, MultipartError};
use super::grammar::{is_token, is_value};
use super::limits::{Limit, Limits};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// In a header name (at the start of a line after the first: a name's first byte).
    Name,
    /// After the colon, in spaces and tabs.
    Space,
    Value,
    /// After a value's CR.
    Cr,
    /// After a line's CRLF: a name follows, or the blank line's CR.
    CrLf,
    /// After the blank line's CR.
    CrLfCr,
}

/// Which header a line is, among those read.
#[derive(Debug, Clone, Copy)]
enum Known {
    Disposition = 0,
    ContentType = 1,
    TransferEncoding = 2,
}

#[derive(Debug)]
pub(super) struct HeaderBlock {
    bytes: Vec<u8>,
    state: State,
    /// Where the current line's name starts, its colon is, its value starts.
    line: usize,
    colon: usize,
    value: usize,
    pairs: u64,
    /// The first value of each known header, as a range of `bytes`.
    known: [Option<(usize, usize)>; 3],
}

pub(super) enum Progress {
    /// Every byte given was taken; the block goes on.
    More,
    /// The block ended after this many of the bytes given.
    Done(usize),
}

impl HeaderBlock {
    pub fn new() -> HeaderBlock {
        HeaderBlock {
            bytes: Vec::new(),
            state: State::Name,
            line: 0,
            colon: 0,
            value: 0,
            pairs: 0,
            known: [None; 3],
        }
    }

    /// Starts a new block, keeping the memory of the last one (it is bounded).
    pub fn reset(&mut self) {
        self.bytes.clear();
        self.state = State::Name;
        self.line = 0;
        self.colon = 0;
        self.value = 0;
        self.pairs = 0;
        self.known = [None; 3];
    }

    /// Frees the memory (a failed or finished parser).
    pub fn release(&mut self) {
        self.reset();
        self.bytes = Vec::new();
    }

    /// Bytes held.
    pub fn held(&self) -> usize {
        self.bytes.capacity()
    }

    pub fn push(&mut self, input: &[u8], limits: &Limits) -> Result<Progress, MultipartError> {
        let syntax = MultipartError::Header(HeaderProblem::Syntax);
        let mut n = 0;
        while n < input.len() {
            // A header block is mostly runs of name and value bytes: each run is taken
            // whole (a byte at a time, this loop was a tenth of a form of 100 small files).
            let run = match self.state {
                State::Name => input[n..].iter().take_while(|&&b| is_token(b)).count(),
                State::Value => input[n..].iter().take_while(|&&b| is_value(b)).count(),
                _ => 0,
            };
            if run > 0 {
                if run > limits.header_size.saturating_sub(self.bytes.len()) {
                    // As byte by byte: the first byte past the bound is refused.
                    return Err(MultipartError::Limit {
                        limit: Limit::HeaderSize,
                        max: limits.header_size as u64,
                    });
                }
                self.reserve(run, limits);
                self.bytes.extend_from_slice(&input[n..n + run]);
                n += run;
                continue;
            }
            let b = input[n];
            if self.bytes.len() >= limits.header_size {
                return Err(MultipartError::Limit {
                    limit: Limit::HeaderSize,
                    max: limits.header_size as u64,
                });
            }
            let at = self.bytes.len();
            self.reserve(1, limits);
            self.bytes.push(b);
            n += 1;
            if self.state == State::CrLf {
                if b == b' ' || b == b'\t' {
                    return Err(MultipartError::Header(HeaderProblem::Folding));
                }
                self.end_line(limits)?;
                if b == b'\r' {
                    self.state = State::CrLfCr;
                    continue;
                }
                self.line = at;
                self.state = State::Name;
            }
            if self.state == State::Space {
                if b == b' ' || b == b'\t' {
                    continue;
                }
                self.value = at;
                self.state = State::Value;
            }
            match self.state {
                State::Name if is_token(b) => {}
                State::Name if b == b':' && at > self.line => {
                    self.colon = at;
                    self.state = State::Space;
                }
                State::Value if is_value(b) => {}
                State::Value if b == b'\r' => self.state = State::Cr,
                State::Cr if b == b'\n' => self.state = State::CrLf,
                State::CrLfCr if b == b'\n' => return Ok(Progress::Done(n)),
                _ => return Err(syntax),
            }
        }
        Ok(Progress::More)
    }

    /// Room for `n` more bytes (the caller has checked the bound), grown by hand so that
    /// what is held stays within it: doubling from 256 bytes, at most the bound.
    fn reserve(&mut self, n: usize, limits: &Limits) {
        let need = self.bytes.len() + n;
        if need > self.bytes.capacity() {
            let want = (2 * self.bytes.len())
                .clamp(256, limits.header_size.max(256))
                .max(need);
            self.bytes.reserve_exact(want - self.bytes.len());
        }
    }

    fn end_line(&mut self, limits: &Limits) -> Result<(), MultipartError> {
        self.pairs += 1;
        if self.pairs > limits.header_pairs {
            return Err(MultipartError::Limit {
                limit: Limit::HeaderPairs,
                max: limits.header_pairs,
            });
        }
        let name = &self.bytes[self.line..self.colon];
        let known = if name.eq_ignore_ascii_case(b"content-disposition") {
            Known::Disposition
        } else if name.eq_ignore_ascii_case(b"content-type") {
            Known::ContentType
        } else if name.eq_ignore_ascii_case(b"content-transfer-encoding") {
            Known::TransferEncoding
        } else {
            return Ok(());
        };
        // The value ends before the CR (the line's last two bytes are CR LF).
        let end = self.bytes.len() - 3;
        self.known[known as usize].get_or_insert((self.value, end));
        Ok(())
    }

    fn get(&self, known: Known) -> Option<&[u8]> {
        self.known[known as usize].map(|(a, b)| &self.bytes[a..b])
    }

    /// The first `Content-Disposition`, `Content-Type` and `Content-Transfer-Encoding`
    /// values of a complete block.
    pub fn values(&self) -> Values<'_> {
        Values {
            disposition: self.get(Known::Disposition),
            content_type: self.get(Known::ContentType),
            transfer_encoding: self.get(Known::TransferEncoding),
        }
    }
}

/// The header values a part's head is made of.
pub(super) struct Values<'a> {
    pub disposition: Option<&'a [u8]>,
    pub content_type: Option<&'a [u8]>,
    pub transfer_encoding: Option<&'a [u8]>,
}
