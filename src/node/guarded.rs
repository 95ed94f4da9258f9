//! What the `#[napi]` exports share: every export but the calls made per chunk or per
//! field (raw.rs) is one, each argument an `Unknown` read by its type, and each keeps every
//! promise raw.rs's `callback` keeps. What that costs a body: docs/performance.md,
//! "Once-per-body calls".

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

/// A string argument as Rust; `None` for anything that is not a string.
pub fn string_of(value: Unknown) -> raw::Result<Option<String>> {
    let value = value.value();
    // SAFETY: napi-rs gives an export its arguments with the env of its own call.
    unsafe { raw::get_string(value.env, value.value) }
}

/// A boolean argument; `None` for anything else.
pub fn bool_of(value: Unknown) -> raw::Result<Option<bool>> {
    if value.get_type()? != ValueType::Boolean {
        return Ok(None);
    }
    Ok(Some(bool::from_unknown(value)?))
}

/// `value` as the JS value an export answers.
pub fn js<V: ToNapiValue>(env: &Env, value: V) -> raw::Result<sys::napi_value> {
    Ok(value.into_unknown(env)?.raw())
}

/// A limit, count or size from JS: `Infinity` (or anything past 2^64) is "no limit", the
/// one way JS says it (lib/plan/limits.js `parseLimit`); NaN and negatives are refused by the
/// JS side before they get here, and read as 0.
pub fn amount(n: f64) -> u64 {
    // `as` saturates: NaN is 0, Infinity is u64::MAX.
    n.max(0.0) as u64
}

/// A byte count argument: a non-negative number as `amount` reads it (Infinity: no
/// limit), `None` for anything else.
pub fn bytes_of(value: Unknown) -> raw::Result<Option<u64>> {
    Ok(f64_of(value)?.filter(|b| *b >= 0.0).map(amount))
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
