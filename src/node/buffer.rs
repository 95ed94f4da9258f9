//! Handing a body's memory to JS as a Buffer without copying it. The memory comes back
//! to the pool only through V8's finalizer, once the Buffer is garbage: that is the one
//! moment when neither JS nor Node's own asynchronous work (zlib, fs, sockets, which hold
//! raw pointers and keep the Buffer object alive while they run) can still read it. There
//! is deliberately no way to return it earlier.

use std::ffi::c_void;
use std::ptr;

use napi::sys;

use super::accounting;
use super::raw::{check, finalizer, Env, Result, Thrown, Value};
use crate::core::Block;

/// Wraps `block` in a Buffer that owns it.
pub fn into_buffer(napi_env: &napi::Env, mut block: Block) -> Result<Value> {
    let env = napi_env.raw();
    // From here V8 counts these bytes as the ArrayBuffer's: they leave the ledger first,
    // so that V8's count never holds them twice (and no GC is started for bytes that
    // did not grow). Dropping the block, on any path below, puts them back.
    block.lend_to_js();
    block.hand_out();
    // SAFETY: the caller's env, on its thread.
    unsafe { accounting::report(env) };
    let data = block.as_mut_ptr().cast::<c_void>();
    let len = block.len();
    let owner = Box::into_raw(Box::new(block));
    let mut result = ptr::null_mut();
    #[cfg(feature = "fault-injection")]
    fault::fire(napi_env, fault::BEFORE_BUFFER);
    // SAFETY: `data` points at `len` initialized bytes owned by `*owner`, which lives
    // until `drop_block` frees it; moving the Box does not move the bytes.
    let status = unsafe {
        sys::napi_create_external_buffer(
            env,
            len,
            data,
            Some(drop_block),
            owner.cast(),
            &mut result,
        )
    };
    if !result.is_null() {
        // A Buffer exists and owns the block, whatever the status: napi_pending_exception
        // here means an exception was caught while the Buffer was made, and it is thrown.
        check(status)?;
        #[cfg(feature = "fault-injection")]
        fault::fire(napi_env, fault::BEFORE_NUDGE);
        nudge_young_gc(napi_env);
        return Ok(result);
    }
    match status {
        // Refused before Node took the block (the checks that open
        // napi_create_external_buffer): an exception was pending or the environment can
        // no longer run JS (a worker being terminated), a null argument, or a runtime
        // without external buffers. The block is still ours alone.
        sys::Status::napi_pending_exception
        | sys::Status::napi_cannot_run_js
        | sys::Status::napi_invalid_arg
        | sys::Status::napi_no_external_buffers_allowed => {}
        // Node took the block and has run, or will run, `drop_block`: a body over
        // buffer.constants.MAX_LENGTH gets here (Node frees it and throws), as would a
        // failure inside Node after it took the block. Touching `owner` again would free
        // it twice; a status no Node version returns today is taken the same way (a
        // leak at worst, never a double free).
        _ => return Err(Thrown::Status(status)),
    }
    // SAFETY: Node refused the block before taking it, so `owner` is still ours alone.
    let block = unsafe { Box::from_raw(owner) };
    if status != sys::Status::napi_no_external_buffers_allowed {
        // Freed here, back to the pool: the exception (or the status) is thrown.
        return Err(Thrown::Status(status));
    }
    // The runtime forbids external buffers (Electron, V8 sandbox): this is the one path
    // that copies a body twice, because there is no other way to give JS the bytes.
    let mut copy_data = ptr::null_mut();
    // SAFETY: `block` holds `len` initialized bytes at `data` for the whole call.
    check(unsafe { sys::napi_create_buffer_copy(env, len, data, &mut copy_data, &mut result) })?;
    drop(block);
    Ok(result)
}

/// V8 collects young ArrayBuffers in a cheap scavenge, but it only *starts* one for their
/// sake when an ArrayBuffer is allocated through its own allocator while young
/// ArrayBuffers already hold more than twice the semi-space (Heap::
/// AllocateExternalBackingStore). External Buffers never pass there, so a server whose
/// bodies are ours allocates almost no young JS memory, never scavenges, and waits for
/// external-memory pressure to force full mark-compacts instead; the pool also refills
/// only then. A 1-byte ArrayBuffer passes there and lets V8 see the young bytes
/// (docs/performance.md, row 'young-GC nudge'); if V8 drops that heuristic, it costs one
/// small allocation and changes nothing else.
fn nudge_young_gc(env: &napi::Env) {
    let env = env.raw();
    let mut data = ptr::null_mut();
    let mut nudge = ptr::null_mut();
    // SAFETY: valid env and out-pointers.
    let status = unsafe { sys::napi_create_arraybuffer(env, 1, &mut data, &mut nudge) };
    if status != sys::Status::napi_ok {
        // The nudge is a hint to the GC and the Buffer exists whether it worked or not,
        // but a failed call may leave an exception pending, which would replace the
        // Buffer as the result: it is dropped.
        let mut exception = ptr::null_mut();
        // SAFETY: valid env; `exception` outlives the call.
        let _ = unsafe { sys::napi_get_and_clear_last_exception(env, &mut exception) };
    }
}

/// The external Buffer's finalizer: the Buffer is garbage, its block goes to the pool.
///
/// # Safety
/// Called by Node only, once, as the finalizer of the value it was registered with.
unsafe extern "C" fn drop_block(env: Env, _data: *mut c_void, hint: *mut c_void) {
    let free = || {
        // SAFETY: `hint` is the Box that into_buffer gave to this Buffer alone, and Node
        // calls a Buffer's finalizer once.
        drop(unsafe { Box::from_raw(hint.cast::<Block>()) });
    };
    // SAFETY: Node's env for this finalizer.
    unsafe { finalizer(env, free) };
}

/// Failures a test build injects (`--features fault-injection`): paths that no JS value
/// can reach, such as N-API refusing the Buffer because an exception is pending.
#[cfg(feature = "fault-injection")]
pub mod fault {
    use std::cell::Cell;

    use napi::sys;

    /// An exception is pending when napi_create_external_buffer is called.
    pub const BEFORE_BUFFER: u32 = 1;
    /// An exception is pending when the young-GC nudge is made.
    pub const BEFORE_NUDGE: u32 = 2;

    thread_local! {
        static ARMED: Cell<u32> = const { Cell::new(0) };
    }

    /// The next `fire(kind)` on this thread throws.
    pub fn arm(kind: u32) {
        ARMED.set(kind);
    }

    /// Throws an Error (code ERR_INJECTED) if `kind` is armed, once: N-API keeps it
    /// pending, as after a failed call that threw.
    pub fn fire(env: &napi::Env, kind: u32) {
        if ARMED.get() == kind {
            ARMED.set(0);
            // The fault is the pending exception; a throw that fails injects none, which
            // the test that armed it then reports.
            // SAFETY: a live env (napi-rs's) and NUL-terminated strings.
            let _ = unsafe {
                sys::napi_throw_error(env.raw(), c"ERR_INJECTED".as_ptr(), c"injected".as_ptr())
            };
        }
    }
}
