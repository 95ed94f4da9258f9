//! Body memory and its accounting. Every byte a body holds lives in a `Block`, and every
//! `Block` is counted, so `stats()` can prove that nothing outlives an error, an abort or
//! the Buffer it was handed to.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static BYTES_IN_USE: AtomicU64 = AtomicU64::new(0);
static BLOCKS_IN_USE: AtomicU64 = AtomicU64::new(0);

/// Process-wide memory counters (all threads, all bodies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryStats {
    /// Bytes allocated for bodies being read or handed to JS and not yet freed.
    pub bytes_in_use: u64,
    /// Blocks behind `bytes_in_use`.
    pub blocks_in_use: u64,
}

pub fn stats() -> MemoryStats {
    MemoryStats {
        bytes_in_use: BYTES_IN_USE.load(Relaxed),
        blocks_in_use: BLOCKS_IN_USE.load(Relaxed),
    }
}

/// An owned, counted byte buffer.
#[derive(Debug)]
pub struct Block {
    bytes: Vec<u8>,
}

impl Block {
    pub fn with_capacity(capacity: usize) -> Block {
        let bytes = Vec::with_capacity(capacity);
        BYTES_IN_USE.fetch_add(bytes.capacity() as u64, Relaxed);
        BLOCKS_IN_USE.fetch_add(1, Relaxed);
        Block { bytes }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr()
    }

    /// Grows the allocation to hold at least `capacity` bytes in total.
    pub fn grow_to(&mut self, capacity: usize) {
        let before = self.bytes.capacity();
        if capacity > before {
            self.bytes.reserve_exact(capacity - self.bytes.len());
            BYTES_IN_USE.fetch_add((self.bytes.capacity() - before) as u64, Relaxed);
        }
    }

    /// Appends within the current capacity; the caller has grown the block first, so
    /// this never reallocates behind the accounting's back.
    pub fn append(&mut self, chunk: &[u8]) {
        debug_assert!(self.bytes.len() + chunk.len() <= self.bytes.capacity());
        self.bytes.extend_from_slice(chunk);
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        BYTES_IN_USE.fetch_sub(self.bytes.capacity() as u64, Relaxed);
        BLOCKS_IN_USE.fetch_sub(1, Relaxed);
    }
}
