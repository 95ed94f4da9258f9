//! A large one-byte string made from a body's own memory, without copying it. V8 then
//! reads the block in place (an external string), and it comes back to the pool through
//! the string's finalizer, once the string is garbage.
//!
//! Why: a string V8 copies into its heap above 128 KiB gets a fresh mapping of its own,
//! faulted in page by page and unmapped at the next GC (Buffer.toString() makes its
//! strings of ~1 MB and more external for that reason).

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU8, Ordering};

use napi::sys;

use super::raw::{finalizer, Value};
use crate::core::Block;

/// From this many bytes a one-byte string is made external. V8 copies a string of more
/// than 128 KiB into a mapping of its own, which the external string avoids
/// (docs/performance.md, row 'external strings').
pub const EXTERNAL_MIN: usize = 256 << 10;

/// 0: not yet known; 1: node_api_create_external_string_latin1 exists; 2: it does not.
static AVAILABLE: AtomicU8 = AtomicU8::new(0);

/// Whether this Node has node_api_create_external_string_latin1 (Node 20.4 on: N-API 10
/// made it stable, and Node 20 exports it as experimental). Where it is missing, napi-rs
/// binds a stub that prints to stderr: it must not be called there.
fn available(env: &napi::Env) -> bool {
    match AVAILABLE.load(Ordering::Relaxed) {
        1 => return true,
        2 => return false,
        _ => {}
    }
    let mut version = ptr::null();
    // SAFETY: a live env (napi-rs's); the version struct Node returns is static.
    let ok = unsafe { sys::napi_get_node_version(env.raw(), &mut version) } == sys::Status::napi_ok
        && !version.is_null()
        // SAFETY: non-null, and Node's static struct lives as long as the process.
        && unsafe { (*version).major > 20 || ((*version).major == 20 && (*version).minor >= 4) };
    AVAILABLE.store(if ok { 1 } else { 2 }, Ordering::Relaxed);
    ok
}

/// A JS string of `bytes` read as UTF-8, invalid sequences as U+FFFD (V8's decoder, as
/// Buffer's toString('utf8')): napi-rs's `create_string` takes valid UTF-8 only.
pub fn utf8(env: &napi::Env, bytes: &[u8]) -> napi::Result<Value> {
    let mut result = ptr::null_mut();
    // SAFETY: a live env (napi-rs's); the pointer and length describe `bytes`, which
    // napi_create_string_utf8 reads as UTF-8 of any validity.
    napi::check_status!(unsafe {
        sys::napi_create_string_utf8(
            env.raw(),
            bytes.as_ptr().cast(),
            bytes.len() as isize,
            &mut result,
        )
    })?;
    Ok(result)
}

/// The first `len` bytes of `block`, Latin-1, as an external string that owns the block.
/// `Err(block)` gives the block back when this Node cannot make one (too old, or a status
/// other than napi_ok: then Node never took the block); the caller copies instead.
pub fn external_latin1(env: &napi::Env, mut block: Block, len: usize) -> Result<Value, Block> {
    if len > block.len() || !available(env) {
        return Err(block);
    }
    // The string is the program's (on a refusal below, the caller's copy is).
    block.hand_out();
    let data = block.as_mut_ptr().cast::<std::os::raw::c_char>();
    let owner = Box::into_raw(Box::new(block));
    let mut result = ptr::null_mut();
    let mut copied = false;
    // SAFETY: `data` points at `len` initialized bytes owned by `*owner`, which lives
    // until `drop_string_block` frees it; moving the Box does not move the bytes.
    let status = unsafe {
        sys::node_api_create_external_string_latin1(
            env.raw(),
            data,
            len as isize,
            Some(drop_string_block),
            owner.cast(),
            &mut result,
            &mut copied,
        )
    };
    if status == sys::Status::napi_ok {
        // The string owns the block: its finalizer frees it, at the string's GC, or at
        // once if Node copied instead (`copied`: a V8 sandbox build).
        return Ok(result);
    }
    // Every other status comes before V8 took the resource: an argument Node refused (a
    // length over INT_MAX) or a string over V8's length limit, which V8 refuses without
    // disposing of the resource. The finalizer will not run: the block is ours alone.
    // SAFETY: Node never took `owner`.
    Err(*unsafe { Box::from_raw(owner) })
}

/// The external string's finalizer: the string is garbage, its block goes to the pool.
///
/// # Safety
/// Called by Node only, once, as the finalizer of the string it was registered with.
unsafe extern "C" fn drop_string_block(
    env: sys::node_api_basic_env,
    _data: *mut c_void,
    hint: *mut c_void,
) {
    let free = || {
        // SAFETY: `hint` is the Box that external_latin1 gave to this string alone, and
        // Node calls a string's finalizer once.
        drop(unsafe { Box::from_raw(hint.cast::<Block>()) });
    };
    // SAFETY: Node's env for this finalizer (a basic env is the same pointer; the
    // finalizer only reports memory through it, which a basic finalizer may do).
    unsafe { finalizer(env.cast(), free) };
}
