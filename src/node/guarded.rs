//! What the `#[napi]` exports share. They are the calls made once per process, stream or
//! form (stats, setPoolLimit, streamCreate, multipartCreate), where napi-rs's ~70 ns over
//! a raw callback does not show (raw.rs says what the per-chunk ones cost): written with
//! napi-rs's typed values, they keep every promise raw.rs's `callback` keeps.
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

/// An argument read as a `T` when it is one (a number, a string, a boolean) and as
/// nothing otherwise: any JS value reaches these functions, and each says what it does
/// with a value of the wrong type.
pub type Maybe<'a, T> = Either<T, Unknown<'a>>;

/// The `T` an argument holds, if it is one.
pub fn given<T>(value: Maybe<'_, T>) -> Option<T> {
    match value {
        Either::A(value) => Some(value),
        Either::B(_) => None,
    }
}

/// The numbers the arguments hold, if every one is a number.
pub fn numbers<const N: usize>(values: [Maybe<'_, f64>; N]) -> Option<[f64; N]> {
    let mut numbers = [0.0; N];
    for (n, value) in numbers.iter_mut().zip(values) {
        *n = given(value)?;
    }
    Some(numbers)
}
