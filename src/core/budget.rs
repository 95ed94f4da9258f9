//! The process-wide memory budget of bodies being read (`setMemoryBudget`).
//!
//! A body holds memory up to its limit, and nothing else bounds the sum: 2,000 slow
//! uploads of 8 MiB are 16 GiB, and an out-of-memory kill loses every upload of the
//! process. So the memory bodies hold is reserved here first, from one count shared by
//! every thread of the process (the addon's statics are: each worker loads the same
//! library), and a body whose reservation does not fit is refused with a 503 instead.
//!
//! A reservation is a value (`Reservation`) that returns its bytes when dropped, so a
//! body's finish, error, abort, timeout or its thread's end return them by construction.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// No budget: every reservation fits (`setMemoryBudget(Infinity)`).
pub const UNLIMITED: u64 = u64::MAX;

/// A bound and what is reserved under it. The process has one, `GLOBAL`; tests make
/// their own, so that a test's bound never refuses another test's bodies.
#[derive(Debug)]
pub struct Budget {
    limit: AtomicU64,
    reserved: AtomicU64,
    refusals: AtomicU64,
}

/// The budget of every body of the process.
pub static GLOBAL: Budget = Budget::new(UNLIMITED);

/// The budget's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetStats {
    /// The bound on `reserved` (`UNLIMITED`: none).
    pub limit: u64,
    /// Bytes reserved now.
    pub reserved: u64,
    /// Reservations refused since the process started.
    pub refusals: u64,
}

/// A reservation that did not fit: `requested` more bytes than the budget had left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    pub requested: u64,
}

impl Budget {
    pub const fn new(limit: u64) -> Budget {
        Budget {
            limit: AtomicU64::new(limit),
            reserved: AtomicU64::new(0),
            refusals: AtomicU64::new(0),
        }
    }

    pub fn stats(&self) -> BudgetStats {
        BudgetStats {
            limit: self.limit.load(Relaxed),
            reserved: self.reserved.load(Relaxed),
            refusals: self.refusals.load(Relaxed),
        }
    }

    /// Sets the bound. Reservations already made stay; the next ones see the new bound.
    pub fn set_limit(&self, bytes: u64) {
        self.limit.store(bytes, Relaxed);
    }

    /// Takes `n` bytes, all or nothing; a refusal is counted when `counted`.
    fn take(&self, n: u64, counted: bool) -> Result<(), OverBudget> {
        if n == 0 {
            return Ok(());
        }
        let limit = self.limit.load(Relaxed);
        let fits = self.reserved.fetch_update(Relaxed, Relaxed, |reserved| {
            reserved.checked_add(n).filter(|&total| total <= limit)
        });
        fits.map(drop).map_err(|_| {
            if counted {
                self.refusals.fetch_add(1, Relaxed);
            }
            OverBudget { requested: n }
        })
    }

    fn give(&self, n: u64) {
        if n != 0 {
            self.reserved.fetch_sub(n, Relaxed);
        }
    }
}

/// The process's budget figures.
pub fn stats() -> BudgetStats {
    GLOBAL.stats()
}

/// Bytes reserved from a budget, returned when dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: &'static Budget,
    bytes: u64,
}

impl Default for Reservation {
    fn default() -> Reservation {
        Reservation::none()
    }
}

impl Reservation {
    /// A reservation of nothing, from the process's budget.
    pub const fn none() -> Reservation {
        Reservation::none_in(&GLOBAL)
    }

    pub const fn none_in(budget: &'static Budget) -> Reservation {
        Reservation { budget, bytes: 0 }
    }

    /// `n` bytes of the process's budget, or `OverBudget` (counted as a refusal).
    pub fn new(n: u64) -> Result<Reservation, OverBudget> {
        Reservation::new_in(&GLOBAL, n)
    }

    pub fn new_in(budget: &'static Budget, n: u64) -> Result<Reservation, OverBudget> {
        budget.take(n, true)?;
        Ok(Reservation { budget, bytes: n })
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Holds at least `n` bytes: reserves what is missing, all or nothing.
    pub fn cover(&mut self, n: u64) -> Result<(), OverBudget> {
        self.cover_counted(n, true)
    }

    /// `cover` for a wish rather than a need (a lease ahead): a refusal is not counted.
    pub fn try_cover(&mut self, n: u64) -> bool {
        self.cover_counted(n, false).is_ok()
    }

    fn cover_counted(&mut self, n: u64, counted: bool) -> Result<(), OverBudget> {
        if n > self.bytes {
            self.budget.take(n - self.bytes, counted)?;
            self.bytes = n;
        }
        Ok(())
    }

    /// Up to `n` of this reservation's bytes, as a reservation of their own.
    pub fn split(&mut self, n: u64) -> Reservation {
        let n = n.min(self.bytes);
        self.bytes -= n;
        Reservation {
            budget: self.budget,
            bytes: n,
        }
    }

    /// Holds `other`'s bytes too (of the same budget).
    pub fn merge(&mut self, mut other: Reservation) {
        debug_assert!(std::ptr::eq(self.budget, other.budget));
        self.bytes += std::mem::take(&mut other.bytes);
    }

    /// Returns the bytes past `n` to the budget.
    pub fn shrink_to(&mut self, n: u64) {
        if n < self.bytes {
            self.budget.give(self.bytes - n);
            self.bytes = n;
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn budget(limit: u64) -> &'static Budget {
        Box::leak(Box::new(Budget::new(limit)))
    }

    #[test]
    fn a_reservation_returns_its_bytes_when_dropped_and_refuses_past_the_limit() {
        let b = budget(100);
        let mut a = Reservation::new_in(b, 60).unwrap();
        assert_eq!(b.stats().reserved, 60);
        assert_eq!(
            Reservation::new_in(b, 41).unwrap_err(),
            OverBudget { requested: 41 }
        );
        assert_eq!(b.stats().refusals, 1);
        assert_eq!(a.cover(101), Err(OverBudget { requested: 41 }));
        assert_eq!(a.bytes(), 60, "all or nothing");
        a.cover(100).unwrap();
        let c = a.split(30);
        assert_eq!((a.bytes(), c.bytes()), (70, 30));
        assert_eq!(b.stats().reserved, 100);
        drop(c);
        assert_eq!(b.stats().reserved, 70);
        a.shrink_to(10);
        assert_eq!(b.stats().reserved, 10);
        a.merge(Reservation::new_in(b, 5).unwrap());
        assert_eq!(a.bytes(), 15);
        drop(a);
        assert_eq!(
            b.stats(),
            BudgetStats {
                limit: 100,
                reserved: 0,
                refusals: 2
            }
        );
    }

    #[test]
    fn a_thread_s_reservations_count_everywhere_and_come_back_when_it_ends() {
        let b = budget(1000);
        thread_local! {
            static HELD: std::cell::RefCell<Option<Reservation>> = const { std::cell::RefCell::new(None) };
        }
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            HELD.with(|h| *h.borrow_mut() = Some(Reservation::new_in(b, 800).unwrap()));
            held_tx.send(()).unwrap();
            end_rx.recv().unwrap();
        });
        held_rx.recv().unwrap();
        assert_eq!(b.stats().reserved, 800);
        assert!(
            Reservation::new_in(b, 201).is_err(),
            "the other thread's bytes count here"
        );
        end_tx.send(()).unwrap();
        worker.join().unwrap();
        assert_eq!(b.stats().reserved, 0, "a thread's end returns what it held");
    }

    #[derive(Debug, Clone)]
    enum Op {
        New(u64),
        Cover(usize, u64),
        Split(usize, u64),
        Merge(usize, usize),
        Shrink(usize, u64),
        Drop(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..300u64).prop_map(Op::New),
            (any::<usize>(), 0..400u64).prop_map(|(i, n)| Op::Cover(i, n)),
            (any::<usize>(), 0..300u64).prop_map(|(i, n)| Op::Split(i, n)),
            (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Op::Merge(i, j)),
            (any::<usize>(), 0..300u64).prop_map(|(i, n)| Op::Shrink(i, n)),
            any::<usize>().prop_map(Op::Drop),
        ]
    }

    /// Does `op` to the reservations `live` (indices taken modulo their number).
    fn apply(b: &'static Budget, live: &mut Vec<Reservation>, op: Op) {
        let n = live.len();
        match op {
            Op::New(bytes) => {
                if let Ok(r) = Reservation::new_in(b, bytes) {
                    live.push(r)
                }
            }
            Op::Cover(i, bytes) if n > 0 => {
                let _ = live[i % n].cover(bytes);
            }
            Op::Split(i, bytes) if n > 0 => {
                let r = live[i % n].split(bytes);
                live.push(r)
            }
            Op::Merge(i, j) if n > 1 && i % n != j % n => {
                let r = live.swap_remove(j % n);
                // swap_remove moved the last one to j % n: follow it if it was i % n.
                let k = if i % n == live.len() { j % n } else { i % n };
                live[k].merge(r);
            }
            Op::Shrink(i, bytes) if n > 0 => live[i % n].shrink_to(bytes),
            Op::Drop(i) if n > 0 => drop(live.swap_remove(i % n)),
            _ => {}
        }
    }

    proptest! {
        /// Whatever is done with reservations, the budget's count is the sum of those
        /// alive, never past the bound, and 0 once they are gone; threads included.
        #[test]
        fn reservations_always_return_to_zero(
            limit in 0..1000u64,
            threads in proptest::collection::vec(proptest::collection::vec(op(), 0..40), 1..4),
        ) {
            let b = budget(limit);
            let handles: Vec<_> = threads.into_iter().map(|ops| std::thread::spawn(move || {
                let mut live: Vec<Reservation> = Vec::new();
                for op in ops {
                    apply(b, &mut live, op);
                    assert!(b.stats().reserved <= limit);
                }
                live.iter().map(Reservation::bytes).sum::<u64>()
            })).collect();
            let _held: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
            prop_assert_eq!(b.stats().reserved, 0);
        }

        /// On one thread the count is exactly the sum of the reservations alive.
        #[test]
        fn the_count_is_the_sum_of_the_reservations_alive(
            limit in 0..1000u64,
            ops in proptest::collection::vec(op(), 0..60),
        ) {
            let b = budget(limit);
            let mut live: Vec<Reservation> = Vec::new();
            for op in ops {
                apply(b, &mut live, op);
                prop_assert_eq!(b.stats().reserved, live.iter().map(Reservation::bytes).sum::<u64>());
                prop_assert!(b.stats().reserved <= limit);
            }
            drop(live);
            prop_assert_eq!(b.stats().reserved, 0);
        }
    }
}
