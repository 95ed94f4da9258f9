//! What the `#[napi]` exports share. They are the calls made once per process (stats,
//! setPoolLimit), written with napi-rs's safe values (each argument an `Unknown`, read by
//! its type), and they keep every promise raw.rs's `callback` keeps.
//!
//! streamCreate and multipartCreate, made once per stream or form, stay raw callbacks:
//! napi-rs 3.16 runs every `#[napi]` function that takes arguments inside a native-borrow
//! scope (bench/RESULTS.md, "The calls made once per process, stream or form"). stats
//! takes no argument and skips the scope.
// napi-rs registers `#[napi]` items outside test builds only: `cargo test` sees them unused.
#![cfg_attr(test, allow(dead_code))]

use napi::bindgen_prelude::*;

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
