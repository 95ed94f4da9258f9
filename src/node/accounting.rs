//! Telling V8 about the native memory this thread's bodies, streams, arenas and pool
//! hold (src/core/ledger.rs says what is counted and why), so that its garbage collector
//! sees it: a body dropped without abort() is collected because its memory counts.
//!
//! Every callback and finalizer reports the change its work made before it returns: one
//! thread-local load when nothing changed, as on almost every call (push), and one
//! `napi_adjust_external_memory` when a block was allocated, freed or handed to V8.

use std::cell::Cell;

// `env` is `sys::napi_env` (raw.rs's `Env` is an alias of it): raw.rs calls this module,
// so this module does not import from raw.rs.
use napi::sys;

use crate::core::ledger;

thread_local! {
    /// What this thread has reported to its isolate, in total. V8's counter is shared
    /// with its own ArrayBuffer bytes, and on Node 24 taking off more than was added
    /// aborts the process: a report never takes this below zero.
    static REPORTED: Cell<i64> = const { Cell::new(0) };
}

/// Reports this thread's change since the last report to V8.
///
/// # Safety
/// `env` must be a live env of the calling thread.
pub unsafe fn report(env: sys::napi_env) {
    let change = ledger::take_unreported();
    if change == 0 {
        return;
    }
    let Ok(reported) = REPORTED.try_with(Cell::get) else {
        return; // the thread is going away, and its isolate with it
    };
    // The ledgers only give back what they were given, so this bound never binds; it
    // is here because the cost of a mistake would be an abort.
    let change = change.max(-reported);
    let mut total = 0i64;
    // SAFETY: a live env of this thread (the caller's promise); `total` outlives the
    // call. napi_adjust_external_memory may start a GC, never runs JS, never throws.
    let status = unsafe { sys::napi_adjust_external_memory(env, change, &mut total) };
    if status == sys::Status::napi_ok {
        let _ = REPORTED.try_with(|r| r.set(reported + change));
    } else {
        ledger::restore_unreported(change);
    }
}

/// What this thread has reported to its isolate, in total (for `stats()`).
pub fn reported() -> i64 {
    REPORTED.try_with(Cell::get).unwrap_or(0)
}
