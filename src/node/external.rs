//! Rust values owned by JS externals, and finding them again. Any JS value can reach the
//! native functions, so a value is read back only from an external carrying the tag it
//! was created with: another addon's external, or one holding another type, is refused.

use std::ffi::c_void;
use std::ptr;

use napi::sys;

use super::raw::{check, finalizer, type_of, Env, Result, Thrown, Value};

/// A new external owning `value`, tagged with `tag` (unique to `T`); the value is dropped
/// when the external is collected.
///
/// # Safety
/// `env` must be the running callback's, and `tag` must be used for externals of `T` only.
pub unsafe fn create<T>(env: Env, value: T, tag: &'static sys::napi_type_tag) -> Result<Value> {
    let data = Box::into_raw(Box::new(value));
    let mut result = ptr::null_mut();
    // SAFETY: valid env; `data` is a live Box that the finalizer will own.
    let status = unsafe {
        sys::napi_create_external(
            env,
            data.cast(),
            Some(drop_boxed::<T>),
            ptr::null_mut(),
            &mut result,
        )
    };
    if status != sys::Status::napi_ok {
        // No external exists, so no finalizer will run: the value is still ours.
        // SAFETY: `data` came from Box::into_raw above and was not handed to Node.
        drop(unsafe { Box::from_raw(data) });
        return Err(Thrown::Status(status));
    }
    // From here the external owns the value: on any failure its finalizer frees it.
    // SAFETY: valid env, an external just made, a static tag.
    check(unsafe { sys::napi_type_tag_object(env, result, tag) })?;
    Ok(result)
}

/// The `T` behind an external tagged with `tag`; `refused()` for any other value.
///
/// # Safety
/// `env` must be the running callback's, `tag` the one `create::<T>` used, and the
/// reference must not outlive the callback.
pub unsafe fn get<'a, T>(
    env: Env,
    value: Value,
    tag: &'static sys::napi_type_tag,
    refused: impl Fn() -> Thrown,
) -> Result<&'a mut T> {
    // SAFETY: valid env and value.
    if unsafe { type_of(env, value)? } != sys::ValueType::napi_external {
        return Err(refused());
    }
    let mut tagged = false;
    // SAFETY: valid env, an external value, a static tag; `tagged` outlives the call.
    check(unsafe { sys::napi_check_object_type_tag(env, value, tag, &mut tagged) })?;
    if !tagged {
        return Err(refused());
    }
    let mut data = ptr::null_mut();
    // SAFETY: an external; `data` outlives the call.
    check(unsafe { sys::napi_get_value_external(env, value, &mut data) })?;
    if data.is_null() {
        return Err(refused());
    }
    // SAFETY: only create::<T> tags externals with `tag`, and their data is a live Box<T>
    // until the external's finalizer, which cannot run while JS holds `value`. JS is
    // single-threaded and none runs during this callback, so this is the only reference.
    Ok(unsafe { &mut *data.cast::<T>() })
}

/// The finalizer of create::<T>'s externals.
///
/// # Safety
/// Called by Node only, once, as the finalizer of the external `data` was given to.
unsafe extern "C" fn drop_boxed<T>(env: Env, data: *mut c_void, _hint: *mut c_void) {
    let free = || {
        // SAFETY: `data` is the Box that create::<T> gave to this external alone, and Node
        // calls an external's finalizer once.
        drop(unsafe { Box::from_raw(data.cast::<T>()) });
    };
    // SAFETY: Node's env for this finalizer.
    unsafe { finalizer(env, free) };
}
