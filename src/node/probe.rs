//! Probes for bench/call-cost.js (`--features call-cost` builds only): functions that do
//! nothing but take two arguments and answer `true`, one of each kind an export can be,
//! so that what a call costs by kind is measured, not assumed. The `tagged` ones also
//! find the value behind an external, as push finds its body: by our type tag
//! (external.rs) or by napi-rs's `External<T>`.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::buffer;
use super::external;
use super::guarded::{self, guarded};
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
    unsafe { callback(env, || external::create(&Env::from_raw(env), 7u64)) }
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

// The shapes of the once-per-body exports (bench/call-cost.js's second table), each as a
// hand-written callback and as a `#[napi]` function written as those exports are
// (guarded.rs's `guarded`, external.rs's `with`): a handle in and null, a Buffer or a
// string out; and numbers, a string and a boolean in and a new handle out (the creates).

const TEXT: &[u8; 16] = b"0123456789abcdef";

/// A Buffer of TEXT made as finish makes one (a pool block handed to V8).
fn block() -> raw::Result<crate::core::Block> {
    let mut block = crate::core::Block::with_capacity(TEXT.len()).map_err(|_| {
        raw::type_error("probe: no memory") // never taken in a bench
    })?;
    block.append(TEXT);
    Ok(block)
}

/// The six arguments of `create` read, and a new handle made.
fn created(length: Option<f64>, encoding: Option<String>, decode: Option<bool>) -> u64 {
    length.unwrap_or(0.0) as u64
        + encoding.map_or(0, |e| e.len() as u64)
        + u64::from(decode == Some(true))
}

/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
unsafe extern "C" fn probe_raw_null(env: raw::Env, info: sys::napi_callback_info) -> raw::Value {
    // SAFETY: Node's env and info for this call; the reference dies with the closure.
    unsafe {
        callback(env, || {
            let [handle] = args::<1>(env, info)?;
            let _: &mut u64 = external::get(env, handle, "probeRawNull")?;
            raw::null(env)
        })
    }
}

/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
unsafe extern "C" fn probe_raw_buffer(env: raw::Env, info: sys::napi_callback_info) -> raw::Value {
    // SAFETY: Node's env and info for this call; the reference dies with the closure.
    unsafe {
        callback(env, || {
            let [handle] = args::<1>(env, info)?;
            let _: &mut u64 = external::get(env, handle, "probeRawBuffer")?;
            buffer::into_buffer(&Env::from_raw(env), block()?)
        })
    }
}

/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
unsafe extern "C" fn probe_raw_string(env: raw::Env, info: sys::napi_callback_info) -> raw::Value {
    // SAFETY: Node's env and info for this call; the reference dies with the closure.
    unsafe {
        callback(env, || {
            let [handle] = args::<1>(env, info)?;
            let _: &mut u64 = external::get(env, handle, "probeRawString")?;
            let mut result = std::ptr::null_mut();
            raw::check(sys::napi_create_string_latin1(
                env,
                TEXT.as_ptr().cast(),
                TEXT.len() as isize,
                &mut result,
            ))?;
            Ok(result)
        })
    }
}

/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
unsafe extern "C" fn probe_raw_create(env: raw::Env, info: sys::napi_callback_info) -> raw::Value {
    // SAFETY: Node's env and info for this call.
    unsafe {
        callback(env, || {
            let [a, b, c, encoding, decode, f] = args::<6>(env, info)?;
            for n in [a, b, c, f] {
                raw::get_f64(env, n)?;
            }
            let n = created(
                raw::get_f64(env, a)?,
                raw::get_string(env, encoding)?,
                raw::get_bool(env, decode)?,
            );
            external::create(&Env::from_raw(env), n)
        })
    }
}

/// The hand-written probes, for mod.rs to export.
pub const RAW: [(&str, raw::Callback); 7] = [
    ("probeRaw", probe_raw),
    ("probeTagged", probe_tagged),
    ("probeRawTagged", probe_raw_tagged),
    ("probeRawNull", probe_raw_null),
    ("probeRawBuffer", probe_raw_buffer),
    ("probeRawString", probe_raw_string),
    ("probeRawCreate", probe_raw_create),
];

/// A handle in, null out (abort, streamEnd, ...).
#[napi(catch_unwind)]
pub fn probe_napi_null(env: Env, handle: Unknown) -> Result<sys::napi_value> {
    guarded(&env, || {
        external::with(handle, "probeNapiNull", |_: &mut u64| ())?;
        guarded::js(&env, Null)
    })
}

/// A handle in, a Buffer out (finish).
#[napi(catch_unwind)]
pub fn probe_napi_buffer(env: Env, handle: Unknown) -> Result<sys::napi_value> {
    guarded(&env, || {
        external::with(handle, "probeNapiBuffer", |_: &mut u64| ())?;
        buffer::into_buffer(&env, block()?)
    })
}

/// A handle in, a string out (finishString).
#[napi(catch_unwind)]
pub fn probe_napi_string(env: Env, handle: Unknown) -> Result<sys::napi_value> {
    guarded(&env, || {
        external::with(handle, "probeNapiString", |_: &mut u64| ())?;
        Ok(env.create_string_latin1(TEXT)?.raw())
    })
}

/// Numbers, a string and a boolean in, a new handle out (create).
#[napi(catch_unwind)]
pub fn probe_napi_create(
    env: Env,
    a: Unknown,
    b: Unknown,
    c: Unknown,
    encoding: Unknown,
    decode: Unknown,
    f: Unknown,
) -> Result<sys::napi_value> {
    guarded(&env, || {
        for n in [a, b, c, f] {
            guarded::f64_of(n)?;
        }
        let n = created(
            guarded::f64_of(a)?,
            guarded::string_of(encoding)?,
            guarded::bool_of(decode)?,
        );
        external::create(&env, n)
    })
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

/// A `#[napi]` function whose body runs in guarded.rs's `guarded`, as the `#[napi]` exports'
/// do (catch_unwind and the memory report, as raw.rs's `callback`).
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
