//! What V8 should count of the memory the core holds, per JS thread.
//!
//! V8 decides when to collect garbage partly from "external memory": the bytes of every
//! ArrayBuffer, plus what embedders report (`napi_adjust_external_memory`). A body being
//! read, a stream's held bytes, a multipart arena and the idle pool are native memory V8
//! cannot see: a program that drops 3000 bodies without abort() held 3000 MiB behind a
//! 5 MiB JS heap, and nothing collected them. So every block is reported to V8, from the
//! moment it is allocated until it is freed, except while it is an ArrayBuffer's memory
//! (V8 counts those bytes itself; see `Block::lend_to_js`).
//!
//! Idle pooled blocks are reported too. That is what keeps V8's count flat while bodies
//! are recycled: a block leaving the pool to become a Buffer and coming back when the
//! Buffer is collected changes nothing in the total, so V8 sees growth only when memory
//! really grows. Were they left out, every recycled Buffer would be new external memory
//! to V8, and on Node 24 that starts a full mark-compact every 64 MiB of bodies (end to
//! end at 512 KiB: 8.1 mark-compacts per 1000 requests so, 3.6 counting the pool).
//!
//! The counter V8 keeps is per isolate, and each JS thread has its own isolate, while
//! the pool is shared by all threads. So each block is on the ledger of one thread: the
//! one that allocated it, or took it from the pool last. A thread taking a block that
//! another thread's ledger holds moves it to its own: the other ledger is debited (that
//! thread reports the debit with its next call), this one credited. Each ledger only
//! ever gives back what it was given, so no thread reports less than nothing (on Node
//! 24 a negative adjustment that was not first added aborts the process).
//!
//! This module only counts; src/node reports each thread's balance to its isolate.

use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::sync::Arc;

/// One thread's bytes not yet reported to its isolate (a signed change).
#[derive(Debug, Default)]
struct Unreported(AtomicI64);

/// The ledger a block's bytes are on.
#[derive(Debug, Clone)]
pub struct Ledger(Arc<Unreported>);

thread_local! {
    static CURRENT: Ledger = Ledger(Arc::default());
}

impl Ledger {
    /// This thread's ledger. (A thread whose own is gone, during its teardown, gets one
    /// that nobody reports: its isolate is going too.)
    pub fn current() -> Ledger {
        CURRENT
            .try_with(Ledger::clone)
            .unwrap_or_else(|_| Ledger(Arc::default()))
    }

    /// True when this is the calling thread's ledger.
    pub fn is_current(&self) -> bool {
        CURRENT
            .try_with(|current| Arc::ptr_eq(&current.0, &self.0))
            .unwrap_or(false)
    }

    /// Counts `bytes` more (or fewer, when negative) on this ledger.
    pub fn add(&self, bytes: i64) {
        if bytes != 0 {
            self.0 .0.fetch_add(bytes, Relaxed);
        }
    }

    /// `bytes` now on the calling thread's ledger rather than this one: the block they
    /// belong to changed threads.
    pub fn move_here(&mut self, bytes: usize) {
        if !self.is_current() {
            self.add(-(bytes as i64));
            *self = Ledger::current();
            self.add(bytes as i64);
        }
    }
}

/// The change in this thread's bytes since the last call: what its isolate should be
/// told. Cheap when nothing changed (a load), as on almost every call.
pub fn take_unreported() -> i64 {
    CURRENT
        .try_with(|current| {
            let unreported = &current.0 .0;
            if unreported.load(Relaxed) == 0 {
                0
            } else {
                unreported.swap(0, Relaxed)
            }
        })
        .unwrap_or(0)
}

/// Puts back a change that could not be reported, for the next call to take.
pub fn restore_unreported(bytes: i64) {
    Ledger::current().add(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_moved_to_another_thread_is_debited_there_and_credited_here() {
        let _ = take_unreported();
        let here = Ledger::current();
        here.add(100);
        let mut moved = std::thread::spawn(move || {
            let mut ledger = here;
            ledger.move_here(100);
            assert_eq!(take_unreported(), 100, "credited on the taking thread");
            ledger
        })
        .join()
        .unwrap();
        assert_eq!(take_unreported(), 0, "+100 then -100 on the first");
        moved.move_here(40);
        assert_eq!(take_unreported(), 40);
        assert_eq!(take_unreported(), 0);
    }
}
