//! The pool's idle decay, driven from Node (src/core/pool.rs states the rule): an unref'd
//! JS timer (lib/body/pool-decay.js) runs a decay step every `DECAY_STEP` while the pool
//! holds memory or bodies hold blocks that will come back to it, and stops once neither
//! does. The first callback that finds memory held and no timer running arms it again: a
//! busy process pays one atomic load per callback, an idle one that holds nothing has no
//! timer at all, and the timer never keeps a process alive.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use napi::sys;

use crate::core::{memory, pool};

/// Whether a timer runs, on some thread (one for the process: the pool is shared).
static TIMER: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread's function that starts the timer, once lib/body/pool-decay.js gave it.
    static ARM: Cell<sys::napi_ref> = const { Cell::new(ptr::null_mut()) };
    /// Whether the running timer is this thread's (its env's teardown ends it).
    static OWNER: Cell<bool> = const { Cell::new(false) };
}

/// The time until the next step, for the timer.
const STEP_MS: f64 = pool::DECAY_STEP.as_millis() as f64;

/// Memory the pool holds, or will get back when bodies and Buffers end.
fn held() -> bool {
    pool::pooled_bytes() > 0 || memory::bytes_in_use() > 0
}

/// Starts the timer if memory is held and none runs. Called at the end of every callback
/// (raw.rs `settle`), never from a finalizer (which may not call JS).
///
/// # Safety
/// `env` must be the env of the running callback.
#[inline]
pub unsafe fn arm_if_held(env: sys::napi_env) {
    if TIMER.load(Relaxed) || !held() {
        return;
    }
    let arm = ARM.try_with(Cell::get).unwrap_or(ptr::null_mut());
    if arm.is_null() || TIMER.swap(true, Relaxed) {
        return;
    }
    // SAFETY: the caller's env, on its thread; `arm` is a reference made on this thread.
    if unsafe { call(env, arm) } {
        let _ = OWNER.try_with(|owner| owner.set(true));
    } else {
        TIMER.store(false, Relaxed); // the next callback tries again
    }
}

/// Calls `arm(STEP_MS)`. False if it could not (an exception was already pending: the
/// callback's own, left for it to throw), or it threw (that exception is cleared: the
/// callback's result must not carry it).
///
/// # Safety
/// `env` must be a live env of this thread and `arm` a reference made in it.
unsafe fn call(env: sys::napi_env, arm: sys::napi_ref) -> bool {
    let mut pending = false;
    // SAFETY: valid env; the out-pointers outlive each call.
    unsafe {
        if sys::napi_is_exception_pending(env, &mut pending) != sys::Status::napi_ok || pending {
            return false;
        }
        let (mut function, mut recv, mut ms) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        let mut result = ptr::null_mut();
        let called = sys::napi_get_reference_value(env, arm, &mut function) == sys::Status::napi_ok
            && !function.is_null()
            && sys::napi_get_undefined(env, &mut recv) == sys::Status::napi_ok
            && sys::napi_create_double(env, STEP_MS, &mut ms) == sys::Status::napi_ok
            && sys::napi_call_function(env, recv, function, 1, &ms, &mut result)
                == sys::Status::napi_ok;
        if !called {
            let mut thrown = ptr::null_mut();
            let _ = sys::napi_get_and_clear_last_exception(env, &mut thrown);
        }
        called
    }
}

/// One timer tick: a decay step (if due), then the ms until the next one is due, or 0
/// when nothing is held any more and the timer stops.
pub fn tick() -> f64 {
    // At least a millisecond: 0 stops the timer.
    let next = (pool::decay().as_millis() as f64).max(1.0);
    if held() {
        return next;
    }
    let _ = OWNER.try_with(|owner| owner.set(false));
    TIMER.store(false, Relaxed);
    // A body on another thread may have taken a block since `held()`, and seen the timer
    // still running: keep it.
    if held() && !TIMER.swap(true, Relaxed) {
        let _ = OWNER.try_with(|owner| owner.set(true));
        return next;
    }
    0.0
}

/// Keeps `arm` (a function of the time to wait) as this thread's way to start the timer.
///
/// # Safety
/// `env` must be the env of the running callback and `arm` a value of it.
pub unsafe fn set_arm(env: sys::napi_env, arm: sys::napi_value) -> super::raw::Result<()> {
    let mut reference = ptr::null_mut();
    // SAFETY: valid env and value; the out-pointer outlives the call.
    super::raw::check(unsafe { sys::napi_create_reference(env, arm, 1, &mut reference) })?;
    let old = ARM
        .try_with(|a| a.replace(reference))
        .unwrap_or(ptr::null_mut());
    if old.is_null() {
        // SAFETY: valid env; the hook takes no data.
        let _ = unsafe { sys::napi_add_env_cleanup_hook(env, Some(teardown), ptr::null_mut()) };
    } else {
        // SAFETY: a reference this thread made in this env.
        let _ = unsafe { sys::napi_delete_reference(env, old) };
    }
    Ok(())
}

/// The env is going (a worker thread ending): its timer with it, so another thread's
/// next callback starts one. Its reference goes with the env.
unsafe extern "C" fn teardown(_: *mut c_void) {
    let _ = ARM.try_with(|a| a.set(ptr::null_mut()));
    if OWNER
        .try_with(|owner| owner.replace(false))
        .unwrap_or(false)
    {
        TIMER.store(false, Relaxed);
    }
}
