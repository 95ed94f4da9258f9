//! What the `#[napi]` exports share. They are the calls made once per process, stream or
//! form (stats, setPoolLimit, streamCreate, multipartCreate), where napi-rs's ~70 ns over
//! a raw callback does not show (raw.rs says what the per-chunk ones cost): written with
//! napi-rs's safe values (each argument an `Unknown`, read by its type), they keep every
//! promise raw.rs's `callback` keeps.
// napi-rs registers `#[napi]` items outside test builds only: `cargo test` sees them unused.
#![cfg_attr(test, allow(dead_code))]

use napi::bindgen_prelude::*;

use super::external;
use super::raw;

/// Runs the body of a `#[napi]` export as `callback` runs a raw one's: under
/// catch_unwind, the memory its work changed reported to V8, and its error thrown as the
/// same exception (a TypeError or an Error with a `code`), which napi-rs then leaves
/// pending as it is.
pub fn guarded<T>(env: &Env, body: impl FnOnce() -> raw::Result<T>) -> Result<T> {
    // SAFETY: napi-rs hands an export the env of its own call, on the call's thread.
    unsafe { raw::settle(env.raw(), body) }
        .ok_or_else(|| Error::new(Status::PendingException, "uws-body: thrown"))
}

/// A value that lives behind our tagged externals (external.rs), with its tag.
///
/// # Safety
/// `TAG` must mark externals holding this type and no other.
pub unsafe trait Tagged: Sized + 'static {
    const TAG: sys::napi_type_tag;
}

/// A `#[napi]` export's answer that becomes a new external owning the value, tagged with
/// its type's tag, for the raw per-chunk functions to find again with `external::get`.
pub struct Handle<T: Tagged>(pub T);

impl<T: Tagged> ToNapiValue for Handle<T> {
    unsafe fn to_napi_value(env: sys::napi_env, handle: Self) -> Result<sys::napi_value> {
        // SAFETY: napi-rs converts an export's answer with the env of its call; T::TAG
        // marks externals of T only (the Tagged contract). Should the external not be
        // made, the value is dropped here: what that frees is reported on the next call.
        unsafe { external::create(env, handle.0, &T::TAG) }
            .map_err(|_| Error::new(Status::GenericFailure, "uws-body: cannot make a handle"))
    }
}

/// The number an argument holds, if it is one. Any JS value reaches these functions, and
/// each says what it does with a value of the wrong type: the type is read first (one
/// napi_typeof), so such a value costs nothing more. (napi-rs's `Either<f64, Unknown>`
/// would try the number first and, for any other value, build an Error to throw away.)
pub fn f64_of(value: Unknown) -> raw::Result<Option<f64>> {
    if value.get_type()? != ValueType::Number {
        return Ok(None);
    }
    Ok(Some(f64::from_unknown(value)?))
}

/// The boolean an argument holds, if it is one (read as `f64_of` reads a number).
pub fn bool_of(value: Unknown) -> raw::Result<Option<bool>> {
    if value.get_type()? != ValueType::Boolean {
        return Ok(None);
    }
    Ok(Some(bool::from_unknown(value)?))
}

/// The string an argument holds, if it is one, as raw.rs's `get_string` reads it: napi-rs's
/// `String` would take the room for a huge string with an allocation that aborts the
/// process when it fails, where `get_string` answers ERR_BODY_OUT_OF_MEMORY.
pub fn string_of(value: Unknown) -> raw::Result<Option<String>> {
    // SAFETY: an Unknown holds a live env and a value of it while it lives (napi-rs makes
    // one from nothing else), and it is not Send: this is that env's thread.
    unsafe { raw::get_string(value.value().env, value.raw()) }
}

/// The numbers the arguments hold, if every one is a number.
pub fn numbers<const N: usize>(values: [Unknown; N]) -> raw::Result<Option<[f64; N]>> {
    let mut numbers = [0.0; N];
    for (n, value) in numbers.iter_mut().zip(values) {
        match f64_of(value)? {
            Some(value) => *n = value,
            None => return Ok(None),
        }
    }
    Ok(Some(numbers))
}
