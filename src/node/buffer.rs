//! Handing a body's memory to JS as a Buffer without copying it, and getting it back:
//! from V8's finalizer once the Buffer is garbage, or at once through `release()`.

use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;

use napi::sys;

use super::raw::{ok, Env, Value};
use crate::core::Block;

/// A block lent to a JS Buffer. The finalizer owns this box; `release()` may take the
/// block out earlier, after detaching every JS view of it.
struct Lent {
    block: Mutex<Option<Block>>,
}

/// Buffers lent and not yet finalized, by data address, so `release()` can recognise
/// ours. Every worker thread shares it (one process, one pool).
static LENT: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

fn lent_insert(data: usize, lent: *mut Lent) {
    if let Ok(mut map) = LENT.lock() {
        map.get_or_insert_with(HashMap::new)
            .insert(data, lent as usize);
    }
}

fn lent_remove(data: usize) -> Option<*mut Lent> {
    let mut map = LENT.lock().ok()?;
    map.as_mut()?.remove(&data).map(|p| p as *mut Lent)
}

/// Wraps `block` in a Buffer that owns it. `None` only if N-API refused both ways of
/// making a Buffer.
pub unsafe fn into_buffer(env: Env, mut block: Block) -> Option<Value> {
    let data = block.as_mut_ptr().cast::<c_void>();
    let len = block.len();
    let lent = Box::into_raw(Box::new(Lent {
        block: Mutex::new(Some(block)),
    }));
    let mut result = ptr::null_mut();
    let status =
        sys::napi_create_external_buffer(env, len, data, Some(finalize), lent.cast(), &mut result);
    if ok(status) {
        lent_insert(data as usize, lent);
        nudge_young_gc(env);
        return Some(result);
    }
    // The runtime forbids external buffers (Electron, V8 sandbox): this is the one path
    // that copies a body twice, because there is no other way to give JS the bytes.
    let lent = Box::from_raw(lent);
    let mut copy_data = ptr::null_mut();
    ok(sys::napi_create_buffer_copy(
        env,
        len,
        data,
        &mut copy_data,
        &mut result,
    ))
    .then(|| {
        drop(lent);
        result
    })
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
/// runs). If V8 drops that
/// heuristic, this costs 0.1 us and changes nothing else.
unsafe fn nudge_young_gc(env: Env) {
    let mut data = ptr::null_mut();
    let mut nudge = ptr::null_mut();
    sys::napi_create_arraybuffer(env, 1, &mut data, &mut nudge);
}

unsafe extern "C" fn finalize(_env: Env, data: *mut c_void, hint: *mut c_void) {
    let lent = hint.cast::<Lent>();
    // Remove the entry only if it is still this Buffer's: after release() the address may
    // already belong to a newer Buffer built on the recycled block.
    if let Ok(mut map) = LENT.lock() {
        if let Some(map) = map.as_mut() {
            if map.get(&(data as usize)) == Some(&(lent as usize)) {
                map.remove(&(data as usize));
            }
        }
    }
    drop(Box::from_raw(lent));
}

/// release(buffer) -> boolean: detaches a Buffer that finish() returned and recycles its
/// memory at once. false (and nothing done) for any other value.
pub unsafe extern "C" fn release(env: Env, info: sys::napi_callback_info) -> Value {
    super::raw::guard(env, || {
        let [value] = super::raw::args::<1>(env, info);
        let mut is_buffer = false;
        sys::napi_is_buffer(env, value, &mut is_buffer);
        if !is_buffer {
            return super::raw::boolean(env, false);
        }
        let (mut kind, mut len, mut offset) = (0, 0usize, 0usize);
        let mut data = ptr::null_mut();
        let mut array_buffer = ptr::null_mut();
        if !ok(sys::napi_get_typedarray_info(
            env,
            value,
            &mut kind,
            &mut len,
            &mut data,
            &mut array_buffer,
            &mut offset,
        )) || offset != 0
        {
            return super::raw::boolean(env, false);
        }
        let Some(lent) = lent_remove(data as usize) else {
            return super::raw::boolean(env, false);
        };
        // Detach first: from here no JS view (the Buffer, its subarrays) can read the
        // memory, so handing it to the next body cannot leak one body into another.
        if !ok(sys::napi_detach_arraybuffer(env, array_buffer)) {
            lent_insert(data as usize, lent);
            return super::raw::boolean(env, false);
        }
        let block = (*lent).block.lock().ok().and_then(|mut b| b.take());
        drop(block);
        super::raw::boolean(env, true)
    })
}
