//! Handing a body's memory to JS as a Buffer without copying it. The memory comes back
//! to the pool only through V8's finalizer, once the Buffer is garbage: that is the one
//! moment when neither JS nor Node's own asynchronous work (zlib, fs, sockets, which hold
//! raw pointers and keep the Buffer object alive while they run) can still read it. There
//! is deliberately no way to return it earlier.

use std::ffi::c_void;
use std::ptr;

use napi::sys;

use super::raw::{check, finalizer, Env, Result, Thrown, Value};
use crate::core::Block;

/// Wraps `block` in a Buffer that owns it.
///
/// # Safety
/// `env` must be a live env on its own thread.
pub unsafe fn into_buffer(env: Env, mut block: Block) -> Result<Value> {
    let data = block.as_mut_ptr().cast::<c_void>();
    let len = block.len();
    let owner = Box::into_raw(Box::new(block));
    let mut result = ptr::null_mut();
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
    if status == sys::Status::napi_ok {
        // SAFETY: valid env.
        unsafe { nudge_young_gc(env) };
        return Ok(result);
    }
    if status != sys::Status::napi_no_external_buffers_allowed {
        // Node took the block and has run, or will run, `drop_block` (a body over
        // buffer.constants.MAX_LENGTH gets here: Node frees it and throws). Touching
        // `owner` again would free it twice.
        return Err(Thrown::Status(status));
    }
    // The runtime forbids external buffers (Electron, V8 sandbox) and did not take the
    // block: this is the one path that copies a body twice, because there is no other
    // way to give JS the bytes.
    // SAFETY: Node refused the block before taking it, so `owner` is still ours alone.
    let block = unsafe { Box::from_raw(owner) };
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
/// only then. A 1-byte ArrayBuffer (~0.1 us) passes there and lets V8 see the young bytes.
/// Measured (2000 x 1 MB bodies, one process): 24 mark-compacts and 222 ms without, 64
/// scavenges, no mark-compact and 97-156 ms with (the JS tier: 164-192 ms in the same
/// runs). If V8 drops that heuristic, this costs 0.1 us and changes nothing else.
///
/// # Safety
/// `env` must be a live env on its own thread.
unsafe fn nudge_young_gc(env: Env) {
    let mut data = ptr::null_mut();
    let mut nudge = ptr::null_mut();
    // SAFETY: valid env and out-pointers. Its status is ignored on purpose: the nudge is
    // a hint to the GC, and the Buffer already exists whether it worked or not.
    let _ = unsafe { sys::napi_create_arraybuffer(env, 1, &mut data, &mut nudge) };
}

/// The external Buffer's finalizer: the Buffer is garbage, its block goes to the pool.
///
/// # Safety
/// Called by Node only, once, as the finalizer of the value it was registered with.
unsafe extern "C" fn drop_block(_env: Env, _data: *mut c_void, hint: *mut c_void) {
    finalizer(|| {
        // SAFETY: `hint` is the Box that into_buffer gave to this Buffer alone, and Node
        // calls a Buffer's finalizer once.
        drop(unsafe { Box::from_raw(hint.cast::<Block>()) });
    });
}
