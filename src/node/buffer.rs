//! Handing a body's memory to JS as a Buffer without copying it.

use std::ffi::c_void;
use std::ptr;

use napi::sys;

use super::raw::{ok, Env, Value};
use crate::core::Block;

/// Wraps `block` in a Buffer that owns it; the block is dropped (and uncounted) when V8
/// collects the Buffer. `None` only if N-API refused both ways of making a Buffer.
pub unsafe fn into_buffer(env: Env, block: Block) -> Option<Value> {
    let mut block = Box::new(block);
    let data = block.as_mut_ptr().cast::<c_void>();
    let len = block.len();
    let hint = Box::into_raw(block);
    let mut result = ptr::null_mut();
    let status = sys::napi_create_external_buffer(
        env,
        len,
        data,
        Some(release_block),
        hint.cast(),
        &mut result,
    );
    if ok(status) {
        return Some(result);
    }
    // The runtime forbids external buffers (Electron, V8 sandbox): this is the one path
    // that copies a body twice, because there is no other way to give JS the bytes.
    let block = Box::from_raw(hint);
    let mut copy_data = ptr::null_mut();
    ok(sys::napi_create_buffer_copy(
        env,
        len,
        block.as_slice().as_ptr().cast(),
        &mut copy_data,
        &mut result,
    ))
    .then_some(result)
}

unsafe extern "C" fn release_block(_env: Env, _data: *mut c_void, hint: *mut c_void) {
    drop(Box::from_raw(hint.cast::<Block>()));
}
