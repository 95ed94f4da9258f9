//! The JS tier's share of the memory budget (core/budget.rs), per thread.
//!
//! Bodies read in JS (lib/body/body-store.js's JS tier) reserve from a credit lib/body/budget.js
//! keeps on each thread, leased from the budget in steps, so that a small body costs
//! integer arithmetic, not a call to the addon. The lease is this thread's reservation:
//! a thread-local that returns its bytes when the thread ends, so a worker terminated
//! with bodies in flight leaves nothing reserved.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use crate::core::budget::{Reservation, GLOBAL};

thread_local! {
    static LEASE: RefCell<Reservation> = const { RefCell::new(Reservation::none()) };
}

/// The largest lease ahead: 1 MiB, or a 64th of the budget when that is less, so that
/// the threads' idle credit stays a small share of a small budget.
const LEASE_MAX: u64 = 1024 * 1024;

/// Set once setMemoryBudget was called: the default no longer applies.
static EXPLICIT: AtomicBool = AtomicBool::new(false);
static DEFAULTED: AtomicBool = AtomicBool::new(false);

/// `bytes`: guarded.rs `amount`'s, u64::MAX (core::budget::UNLIMITED) for none.
pub fn set_budget(bytes: u64) {
    EXPLICIT.store(true, Relaxed);
    GLOBAL.set_limit(bytes);
}

pub fn set_default(bytes: u64) {
    if !EXPLICIT.load(Relaxed) && !DEFAULTED.swap(true, Relaxed) {
        GLOBAL.set_limit(bytes);
    }
}

/// The lease taken ahead of a body's need.
pub fn ahead() -> u64 {
    (GLOBAL.stats().limit / 64).min(LEASE_MAX)
}

/// Reserves `min`, with a lease ahead if it fits; the bytes granted, or 0.
pub fn lease(min: u64) -> u64 {
    LEASE
        .try_with(|lease| {
            let mut lease = lease.borrow_mut();
            let held = lease.bytes();
            let more = min.saturating_add(ahead());
            if lease.try_cover(held.saturating_add(more)) {
                return more;
            }
            match lease.cover(held.saturating_add(min)) {
                Ok(()) => min,
                Err(_) => 0,
            }
        })
        .unwrap_or(0)
}

/// Returns `bytes` of the lease (never more than it holds); the lease ahead.
pub fn give_back(bytes: u64) -> u64 {
    let _ = LEASE.try_with(|lease| {
        let mut lease = lease.borrow_mut();
        let keep = lease.bytes().saturating_sub(bytes);
        lease.shrink_to(keep);
    });
    ahead()
}
