//! Probes for bench/call-cost.js (`--features call-cost` builds only): functions that do
//! nothing but take two arguments and answer `true`, one of each kind an export can be,
//! so that what a call costs by kind is measured, not assumed. The `tagged` ones also
//! find the value behind an external, as push finds its body: by our type tag
//! (external.rs) or by napi-rs's `External<T>`.
// napi-rs registers `#[napi]` items outside test builds only.
#![cfg_attr(test, allow(dead_code))]

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::accounting;
use super::external;
use super::raw::{self, args, boolean, callback};

/// A hand-written callback, as push is (raw.rs's `callback`: catch_unwind, then the
/// memory report).
///
/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
unsafe extern "C" fn probe_raw(env: raw::Env, info: sys::napi_callback_info) -> raw::Value {
    // SAFETY: Node's env and info for this call.
    unsafe {
        callback(env, || {
            let [_a, _b] = args::<2>(env, info)?;
            boolean(env, true)
        })
    }
}

/// probeTagged() -> an external of ours, tagged, holding 7.
///
/// # Safety
/// Called by Node only, as an N-API callback: `env` is that call's.
unsafe extern "C" fn probe_tagged(env: raw::Env, _info: sys::napi_callback_info) -> raw::Value {
    // SAFETY: Node's env for this call.
    unsafe { callback(env, || external::create(env, 7u64)) }
}

/// A hand-written callback that finds the u64 behind its first argument, as push does.
///
/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
unsafe extern "C" fn probe_raw_tagged(env: raw::Env, info: sys::napi_callback_info) -> raw::Value {
    // SAFETY: Node's env and info for this call; the reference dies with the closure.
    unsafe {
        callback(env, || {
            let [handle, _b] = args::<2>(env, info)?;
            let n: &mut u64 = external::get(env, handle, "probeRawTagged")?;
            boolean(env, *n == 7)
        })
    }
}

/// The hand-written probes, for mod.rs to export.
pub const RAW: [(&str, raw::Callback); 3] = [
    ("probeRaw", probe_raw),
    ("probeTagged", probe_tagged),
    ("probeRawTagged", probe_raw_tagged),
];

/// What a `#[napi]` export must run its body in to keep the promises raw.rs's `callback`
/// keeps: a panic caught (napi-rs catches one only under `#[napi(catch_unwind)]`) and
/// the memory the call changed reported to V8. (Only the success path is timed.)
fn guarded<T>(env: &Env, body: impl FnOnce() -> raw::Result<T>) -> Result<T> {
    let outcome = catch_unwind(AssertUnwindSafe(body));
    // SAFETY: napi-rs hands a function the env of its own call, on its thread.
    unsafe { accounting::report(env.raw()) };
    match outcome {
        Ok(Ok(value)) => Ok(value),
        _ => Err(Error::from_reason("uws-body: a probe failed")),
    }
}

/// A plain `#[napi]` function.
#[napi]
pub fn probe_napi(_a: Unknown, _b: Unknown) -> bool {
    true
}

/// A `#[napi(catch_unwind)]` function.
#[napi(catch_unwind)]
pub fn probe_napi_catch(_a: Unknown, _b: Unknown) -> bool {
    true
}

/// A `#[napi]` function whose body runs in `guarded`.
#[napi]
pub fn probe_guarded(env: Env, _a: Unknown, _b: Unknown) -> Result<bool> {
    guarded(&env, || Ok(true))
}

/// A `#[napi]` function in `guarded` that finds the u64 behind its first argument by our
/// type tag.
#[napi]
pub fn probe_guarded_tagged(env: Env, handle: Unknown, _b: Unknown) -> Result<bool> {
    guarded(&env, || {
        // SAFETY: this call's env and value; the reference dies with the closure.
        let n: &mut u64 = unsafe { external::get(env.raw(), handle.raw(), "probeGuardedTagged")? };
        Ok(*n == 7)
    })
}

/// probeExternal() -> napi-rs's External<u64>, holding 7.
#[napi]
pub fn probe_external() -> External<u64> {
    External::new(7)
}

/// A `#[napi]` function taking napi-rs's `&External<u64>`.
#[napi]
pub fn probe_napi_external(handle: &External<u64>, _b: Unknown) -> bool {
    **handle == 7
}

/// A class, for a method's cost.
#[napi]
pub struct ProbeClass {}

#[napi]
impl ProbeClass {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        ProbeClass {}
    }

    /// A method.
    #[napi]
    pub fn method(&self, _a: Unknown, _b: Unknown) -> bool {
        true
    }
}
