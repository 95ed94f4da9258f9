//! A body's digests, made in the pass that copies its bytes: the hashes a
//! client declared (`Content-Digest` over the bytes as sent, `Repr-Digest` over the
//! decoded ones, `Content-MD5` over the bytes as sent) are checked at the body's end, and
//! the ones the program asked for are made over the bytes it gets. A body with neither
//! has no `Digests` at all: nothing here runs for it.
//!
//! The hashers are RustCrypto's `sha2` (SHA-NI on x86_64 when the CPU has it, detected at
//! run time, else AVX2 for SHA-512 and portable code), `md-5`, and `crc32c` (SSE4.2 or
//! ARM's CRC instructions, detected at run time).

mod header;
#[cfg(test)]
mod tests;

use md5::Md5;
use sha2::{Digest as _, Sha256, Sha512};

use super::error::BodyError;

pub use header::{content_md5, dictionary};

/// The hashes uws-body makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Sha256,
    Sha512,
    Md5,
    Crc32c,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Sha256,
        Algorithm::Sha512,
        Algorithm::Md5,
        Algorithm::Crc32c,
    ];

    /// The name the JS API uses (`digest: ['sha256']`, `digests.sha256`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha512 => "sha512",
            Algorithm::Md5 => "md5",
            Algorithm::Crc32c => "crc32c",
        }
    }

    /// Bytes of its digest.
    pub fn size(self) -> usize {
        match self {
            Algorithm::Sha256 => 32,
            Algorithm::Sha512 => 64,
            Algorithm::Md5 => 16,
            Algorithm::Crc32c => 4,
        }
    }
}

/// Which bytes a digest is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// As they arrive (content-coded, for an encoded body).
    Sent,
    /// As the program gets them (decoded).
    Decoded,
}

/// The request headers that declare a digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// RFC 9530: over the content, the bytes as sent.
    ContentDigest,
    /// RFC 9530: over the selected representation's data, decoded.
    ReprDigest,
    /// RFC 1864 (as RFC 2616 used it): over the entity body after content coding.
    ContentMd5,
}

impl Header {
    pub fn name(self) -> &'static str {
        match self {
            Header::ContentDigest => "content-digest",
            Header::ReprDigest => "repr-digest",
            Header::ContentMd5 => "content-md5",
        }
    }

    fn over(self) -> Over {
        match self {
            Header::ContentDigest | Header::ContentMd5 => Over::Sent,
            Header::ReprDigest => Over::Decoded,
        }
    }
}

/// A digest a request declared: checked against the bytes at the body's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub header: Header,
    pub algorithm: Algorithm,
    pub expected: Vec<u8>,
}

/// What a body's digests are: the declared ones to check, the requested ones to make.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DigestOptions {
    pub declared: Vec<Declared>,
    /// Made over the decoded bytes (what the program gets).
    pub requested: Vec<Algorithm>,
}

impl DigestOptions {
    pub fn is_empty(&self) -> bool {
        self.declared.is_empty() && self.requested.is_empty()
    }
}

/// One running hash.
#[derive(Clone)]
enum State {
    Sha256(Sha256),
    Sha512(Box<Sha512>),
    Md5(Md5),
    Crc32c(u32),
}

#[derive(Clone)]
pub struct Hasher {
    algorithm: Algorithm,
    state: State,
}

impl std::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hasher")
            .field("algorithm", &self.algorithm)
            .finish()
    }
}

impl Hasher {
    pub fn new(algorithm: Algorithm) -> Hasher {
        let state = match algorithm {
            Algorithm::Sha256 => State::Sha256(Sha256::new()),
            Algorithm::Sha512 => State::Sha512(Box::new(Sha512::new())),
            Algorithm::Md5 => State::Md5(Md5::new()),
            Algorithm::Crc32c => State::Crc32c(0),
        };
        Hasher { algorithm, state }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        match &mut self.state {
            State::Sha256(h) => h.update(bytes),
            State::Sha512(h) => h.update(bytes),
            State::Md5(h) => h.update(bytes),
            State::Crc32c(crc) => *crc = crc32c::crc32c_append(*crc, bytes),
        }
    }

    /// The digest so far (the hasher keeps running). CRC32C is big-endian, as S3's
    /// `x-amz-checksum-crc32c` and RFC 9530's registry write it.
    pub fn digest(&self) -> Vec<u8> {
        match &self.state {
            State::Sha256(h) => h.clone().finalize().to_vec(),
            State::Sha512(h) => h.as_ref().clone().finalize().to_vec(),
            State::Md5(h) => h.clone().finalize().to_vec(),
            State::Crc32c(crc) => crc.to_be_bytes().to_vec(),
        }
    }
}

/// A finished digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub algorithm: Algorithm,
    pub bytes: Vec<u8>,
}

/// One body's running digests.
#[derive(Debug, Clone)]
pub struct Digests {
    /// Each hash once, with the bytes it is over. For a body that is not encoded the sent
    /// bytes are the decoded ones, and every hasher is over `Sent`.
    hashers: Vec<(Over, Hasher)>,
    declared: Vec<Declared>,
    requested: Vec<Algorithm>,
    identity: bool,
    done: Vec<Digest>,
}

impl Digests {
    /// None when there is nothing to check or make. `identity`: the body is not encoded.
    pub fn new(options: &DigestOptions, identity: bool) -> Option<Digests> {
        if options.is_empty() {
            return None;
        }
        let over = |o: Over| if identity { Over::Sent } else { o };
        let mut digests = Digests {
            hashers: Vec::new(),
            declared: options.declared.clone(),
            requested: options.requested.clone(),
            identity,
            done: Vec::new(),
        };
        let wanted = options
            .declared
            .iter()
            .map(|d| (over(d.header.over()), d.algorithm))
            .chain(options.requested.iter().map(|&a| (over(Over::Decoded), a)));
        for (o, algorithm) in wanted {
            if digests.find(o, algorithm).is_none() {
                digests.hashers.push((o, Hasher::new(algorithm)));
            }
        }
        Some(digests)
    }

    fn find(&self, over: Over, algorithm: Algorithm) -> Option<&Hasher> {
        self.hashers
            .iter()
            .find(|(o, h)| *o == over && h.algorithm == algorithm)
            .map(|(_, h)| h)
    }

    /// Bytes as they arrive (for a body that is not encoded, also the decoded bytes).
    pub fn sent(&mut self, bytes: &[u8]) {
        self.update(Over::Sent, bytes);
    }

    /// Bytes a decoder wrote (an encoded body only).
    pub fn decoded(&mut self, bytes: &[u8]) {
        self.update(Over::Decoded, bytes);
    }

    fn update(&mut self, over: Over, bytes: &[u8]) {
        for (o, h) in &mut self.hashers {
            if *o == over {
                h.update(bytes);
            }
        }
    }

    /// The body has ended: every declared digest is checked (the first that differs is
    /// the error), and the requested ones are kept for `results()`.
    pub fn finish(&mut self) -> Result<(), BodyError> {
        let over = |o: Over| if self.identity { Over::Sent } else { o };
        for d in &self.declared {
            let made = self
                .find(over(d.header.over()), d.algorithm)
                .map(Hasher::digest);
            if made.as_deref() != Some(d.expected.as_slice()) {
                return Err(BodyError::DigestMismatch {
                    header: d.header.name(),
                    algorithm: d.algorithm.name(),
                });
            }
        }
        self.done = self
            .requested
            .iter()
            .filter_map(|&a| {
                self.find(over(Over::Decoded), a).map(|h| Digest {
                    algorithm: a,
                    bytes: h.digest(),
                })
            })
            .collect();
        Ok(())
    }

    /// The requested digests, once `finish()` succeeded (else empty).
    pub fn results(&self) -> &[Digest] {
        &self.done
    }
}

/// The digests of each part of a form, made as its bytes are parsed (multipart files):
/// the running ones of the current part, and the finished ones of the part that ended last.
#[derive(Debug, Clone)]
pub struct PartDigests {
    requested: Vec<Algorithm>,
    running: Vec<Hasher>,
    last: Vec<Digest>,
}

impl PartDigests {
    /// None when nothing is asked.
    pub fn new(requested: &[Algorithm]) -> Option<PartDigests> {
        (!requested.is_empty()).then(|| PartDigests {
            requested: requested.to_vec(),
            running: Vec::new(),
            last: Vec::new(),
        })
    }

    /// A part begins.
    pub fn begin(&mut self) {
        self.running = self.requested.iter().map(|&a| Hasher::new(a)).collect();
    }

    /// Bytes of the current part's body.
    pub fn update(&mut self, bytes: &[u8]) {
        for h in &mut self.running {
            h.update(bytes);
        }
    }

    /// The current part ended: its digests are `last()` until the next one ends.
    pub fn end(&mut self) {
        self.last = std::mem::take(&mut self.running)
            .iter()
            .map(|h| Digest {
                algorithm: h.algorithm,
                bytes: h.digest(),
            })
            .collect();
    }

    pub fn last(&self) -> &[Digest] {
        &self.last
    }
}
