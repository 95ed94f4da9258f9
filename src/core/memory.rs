//! Body memory and its accounting. Every byte a body holds lives in a `Block`, and every
//! `Block` is counted, so `stats()` can prove that nothing outlives an error, an abort or
//! the Buffer it was handed to. Blocks come from and go back to the pool.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::budget::Reservation;
use super::ledger::Ledger;
use super::pool::{self, Held};

static BYTES_IN_USE: AtomicU64 = AtomicU64::new(0);
static BLOCKS_IN_USE: AtomicU64 = AtomicU64::new(0);

/// Process-wide memory counters (all threads, all bodies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryStats {
    /// Bytes allocated for bodies being read or handed to JS and not yet freed.
    pub bytes_in_use: u64,
    /// Blocks behind `bytes_in_use`.
    pub blocks_in_use: u64,
    /// Bytes kept idle by the pool for the next bodies.
    pub bytes_pooled: u64,
    /// The bound on `bytes_pooled`.
    pub pool_limit: u64,
}

pub fn stats() -> MemoryStats {
    MemoryStats {
        bytes_in_use: BYTES_IN_USE.load(Relaxed),
        blocks_in_use: BLOCKS_IN_USE.load(Relaxed),
        bytes_pooled: pool::pooled_bytes(),
        pool_limit: pool::limit(),
    }
}

/// Bytes held by bodies and Buffers not yet collected (`stats().bytes_in_use`).
pub fn bytes_in_use() -> u64 {
    BYTES_IN_USE.load(Relaxed)
}

/// The allocator could not provide `bytes` bytes, or (`over_budget`) the memory budget
/// could not reserve them (budget.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocError {
    pub bytes: usize,
    pub over_budget: bool,
}

impl AllocError {
    fn budget(bytes: usize) -> AllocError {
        AllocError {
            bytes,
            over_budget: true,
        }
    }
}

/// An owned, counted byte buffer.
#[derive(Debug)]
pub struct Block {
    bytes: Vec<u8>,
    /// Replaced by a larger block while its body grew (see pool::give_leftover).
    leftover: bool,
    /// The ledger its memory is on (ledger.rs); none for a block that allocated nothing.
    ledger: Option<Ledger>,
    /// Bytes taken off the ledger while an ArrayBuffer holds them (see `lend_to_js`).
    lent: usize,
    /// Its capacity, reserved from the memory budget while its body is read (`hand_out`).
    reserved: Reservation,
}

impl Block {
    /// A block for at least `capacity` bytes; pooled sizes are rounded up to their class.
    /// Fails, instead of aborting, when the allocator has no such block to give.
    pub fn with_capacity(capacity: usize) -> Result<Block, AllocError> {
        Block::with_capacity_in(capacity, &mut Reservation::none())
    }

    /// `with_capacity`, its capacity reserved from `from` as far as it holds, the rest from
    /// the budget (all or nothing: `from` keeps its bytes on a failure).
    pub fn with_capacity_in(capacity: usize, from: &mut Reservation) -> Result<Block, AllocError> {
        if capacity == 0 {
            return Ok(Block::empty());
        }
        let size = pool::class_size(capacity).unwrap_or(capacity);
        if size > isize::MAX as usize {
            // No allocator provides it (Vec's bound): the allocator's refusal, whatever
            // the budget says.
            return Err(AllocError {
                bytes: capacity,
                over_budget: false,
            });
        }
        let reserved = reserve(size, from).ok_or(AllocError::budget(size))?;
        match pool::take(capacity) {
            Some(held) => Ok(Block::counted(held, reserved)),
            None => {
                from.merge(reserved);
                Err(AllocError {
                    bytes: capacity,
                    over_budget: false,
                })
            }
        }
    }

    /// A block that holds nothing and allocated nothing.
    pub fn empty() -> Block {
        BLOCKS_IN_USE.fetch_add(1, Relaxed);
        Block {
            bytes: Vec::new(),
            leftover: false,
            ledger: None,
            lent: 0,
            reserved: Reservation::none(),
        }
    }

    fn counted(held: Held, reserved: Reservation) -> Block {
        debug_assert!(reserved.bytes() >= held.bytes.capacity() as u64);
        BYTES_IN_USE.fetch_add(held.bytes.capacity() as u64, Relaxed);
        BLOCKS_IN_USE.fetch_add(1, Relaxed);
        Block {
            bytes: held.bytes,
            leftover: false,
            ledger: Some(held.ledger),
            lent: 0,
            reserved,
        }
    }

    /// Its reservation, handed over: the block's memory is about to be replaced by a
    /// larger block that takes it (the body's growth), or counted by its owner.
    pub fn take_reservation(&mut self) -> Reservation {
        std::mem::take(&mut self.reserved)
    }

    /// Ends its reservation: the memory is about to be the program's (a Buffer or a
    /// string). The budget bounds bodies being read; what the program holds is collected
    /// by V8, whose own accounting of these bytes starts the collections, so garbage never
    /// keeps a body from being admitted (docs/api.md, setMemoryBudget).
    pub fn hand_out(&mut self) {
        self.reserved = Reservation::none();
    }

    /// Takes the bytes held off the ledger, for as long as this block lives: they are
    /// about to be an ArrayBuffer's, which V8 counts itself (ledger.rs). Dropping the
    /// block puts them back. Call it once, right before the memory is handed to V8.
    pub fn lend_to_js(&mut self) {
        debug_assert_eq!(self.lent, 0);
        if let Some(ledger) = &self.ledger {
            self.lent = self.bytes.len();
            ledger.add(-(self.lent as i64));
        }
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

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr()
    }

    /// An idle pooled block for at least `capacity` bytes, if the pool has one: memory the
    /// process holds already, so taking it costs no new memory.
    pub fn idle(capacity: usize) -> Option<Block> {
        Block::idle_in(capacity, &mut Reservation::none())
    }

    /// `idle`, reserved as `with_capacity_in` is: `None` too when the budget has no room.
    pub fn idle_in(capacity: usize, from: &mut Reservation) -> Option<Block> {
        let size = pool::class_size(capacity)?;
        let reserved = reserve(size, from)?;
        match pool::take_idle(capacity) {
            Some(held) => Some(Block::counted(held, reserved)),
            None => {
                from.merge(reserved);
                None
            }
        }
    }

    /// The most recently returned idle pooled block of `min..=max` bytes, if any: memory
    /// the process holds already (see pool::take_recent).
    pub fn recent(min: usize, max: usize) -> Option<Block> {
        Block::recent_in(min, max, &mut Reservation::none())
    }

    /// `recent`, reserved as `with_capacity_in` is: `None` too when the budget has no room
    /// for the block found (which then stays in the pool).
    pub fn recent_in(min: usize, max: usize, from: &mut Reservation) -> Option<Block> {
        let held = pool::take_recent(min, max)?;
        match reserve(held.bytes.capacity(), from) {
            Some(reserved) => Some(Block::counted(held, reserved)),
            None => {
                pool::give(held);
                None
            }
        }
    }

    /// Grows the allocation to hold at least `capacity` bytes in total. The bytes held so
    /// far move to a (warm, pooled) larger block: callers grow geometrically, so this
    /// re-copies at most as many bytes as the body ends up with, and for a known length
    /// only what arrived past the preallocation cap.
    pub fn grow_to(&mut self, capacity: usize) -> Result<(), AllocError> {
        self.grow_to_in(capacity, &mut Reservation::none())
    }

    /// `grow_to`, the larger block reserved from this block's reservation and `from`
    /// (which keeps what is left): only the difference is new to the budget. While the
    /// bytes move, the old block's memory is not counted (one copy's time).
    pub fn grow_to_in(
        &mut self,
        capacity: usize,
        from: &mut Reservation,
    ) -> Result<(), AllocError> {
        if capacity > self.bytes.capacity() {
            from.merge(self.take_reservation());
            match Block::with_capacity_in(capacity, from) {
                Ok(larger) => self.move_into(larger),
                Err(error) => {
                    self.reserved = from.split(self.bytes.capacity() as u64);
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    /// Moves the bytes held into `larger`, which replaces this block's allocation; the old
    /// one goes back to the pool as a growth leftover.
    pub fn move_into(&mut self, mut larger: Block) {
        debug_assert!(larger.is_empty() && larger.capacity() >= self.len());
        debug_assert!(self.lent == 0 && larger.lent == 0);
        larger.bytes.extend_from_slice(&self.bytes);
        std::mem::swap(self, &mut larger);
        larger.leftover = true;
    }

    /// Up to `max` bytes of the room after the bytes held, for a decoder to write into.
    pub fn spare(&mut self, max: usize) -> &mut [MaybeUninit<u8>] {
        let spare = self.bytes.spare_capacity_mut();
        let n = spare.len().min(max);
        &mut spare[..n]
    }

    /// Counts `n` more bytes as held after a decoder wrote them into `spare`.
    ///
    /// # Safety
    /// The first `n` bytes of the last `spare()` must have been initialized.
    pub unsafe fn assume_appended(&mut self, n: usize) {
        let len = self.bytes.len() + n;
        assert!(len <= self.bytes.capacity());
        // SAFETY: within capacity (checked above), and the caller vouches that the bytes
        // between the old and the new length were initialized.
        unsafe { self.bytes.set_len(len) };
    }

    /// Appends within the current capacity; the caller has grown the block first, so
    /// this never reallocates behind the accounting's back.
    pub fn append(&mut self, chunk: &[u8]) {
        debug_assert!(self.bytes.len() + chunk.len() <= self.bytes.capacity());
        self.bytes.extend_from_slice(chunk);
    }
}

/// `size` bytes, taken from `from` as far as it holds and the rest from the budget; on a
/// refusal `from` is as it was.
fn reserve(size: usize, from: &mut Reservation) -> Option<Reservation> {
    let mut reserved = from.split(size as u64);
    match reserved.cover(size as u64) {
        Ok(()) => Some(reserved),
        Err(_) => {
            from.merge(reserved);
            None
        }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        BYTES_IN_USE.fetch_sub(self.bytes.capacity() as u64, Relaxed);
        BLOCKS_IN_USE.fetch_sub(1, Relaxed);
        let Some(ledger) = self.ledger.take() else {
            return;
        };
        // V8 no longer counts what it held: back on the ledger, for the pool to keep or
        // for the free to take off again.
        ledger.add(self.lent as i64);
        let held = Held {
            bytes: std::mem::take(&mut self.bytes),
            ledger,
        };
        if self.leftover {
            pool::give_leftover(held);
        } else {
            pool::give(held);
        }
    }
}
