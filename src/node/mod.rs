//! The N-API layer: converts between JS values and `core`, nothing more.
// napi-rs registers `#[napi]` items outside test builds only: `cargo test` sees them, and
// what only they call, unused.
#![cfg_attr(test, allow(dead_code))]

mod accounting;
mod body;
mod buffer;
mod decay;
mod external;
mod guarded;
mod lease;
mod multipart;
#[cfg(feature = "call-cost")]
mod probe;
mod protocol;
mod raw;
mod stream;
mod string;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::core::budget;
use guarded::{bytes_of, guarded};
use raw::{export, type_error};

/// What stats() answers (index.d.ts's `Stats`).
#[napi(object)]
pub struct Stats {
    pub bytes_in_use: f64,
    pub blocks_in_use: f64,
    pub bytes_pooled: f64,
    pub pool_limit: f64,
    pub bytes_reported: f64,
    /// The memory budget (Infinity: none), the bytes reserved under it (the JS tier's
    /// leases included: lib/body/budget.js takes this thread's idle share off) and the
    /// reservations refused.
    pub memory_budget: f64,
    pub budget_reserved: f64,
    pub budget_refusals: f64,
}

/// stats()
#[napi(js_name = "stats", catch_unwind)]
pub fn stats(env: Env) -> Result<Stats> {
    guarded(&env, || {
        // What this thread reports is part of the answer: brought up to date first.
        // SAFETY: napi-rs hands an export the env of its own call, on the call's thread.
        unsafe { accounting::report(env.raw()) };
        let s = crate::core::stats();
        let b = budget::stats();
        Ok(Stats {
            bytes_in_use: s.bytes_in_use as f64,
            blocks_in_use: s.blocks_in_use as f64,
            bytes_pooled: s.bytes_pooled as f64,
            pool_limit: s.pool_limit as f64,
            bytes_reported: accounting::reported() as f64,
            memory_budget: budget_f64(b.limit),
            budget_reserved: b.reserved as f64,
            budget_refusals: b.refusals as f64,
        })
    })
}

fn budget_f64(limit: u64) -> f64 {
    if limit == budget::UNLIMITED {
        f64::INFINITY
    } else {
        limit as f64
    }
}

/// setMemoryBudget(bytes): Infinity is none. The process's default is set once
/// (`budgetDefault`), unless a budget was set first.
#[napi(js_name = "setMemoryBudget", catch_unwind)]
pub fn set_memory_budget(env: Env, bytes: Unknown) -> Result<Null> {
    guarded(&env, || match bytes_of(bytes)? {
        Some(b) => {
            lease::set_budget(b);
            Ok(Null)
        }
        None => Err(type_error(
            "setMemoryBudget(bytes): bytes must be a non-negative number or Infinity",
        )),
    })
}

/// budgetDefault(bytes): the default budget, set by the first thread that loads the
/// package, unless setMemoryBudget came first.
#[napi(js_name = "budgetDefault", catch_unwind)]
pub fn budget_default(env: Env, bytes: Unknown) -> Result<Null> {
    guarded(&env, || {
        if let Some(b) = bytes_of(bytes)? {
            lease::set_default(b);
        }
        Ok(Null)
    })
}

/// budgetLease(min): reserves bytes for this thread's JS tier (lib/body/budget.js): `min` and
/// a lease ahead when they fit, else `min` alone, else 0 (a refusal). Answers the bytes
/// granted.
#[napi(js_name = "budgetLease", catch_unwind)]
pub fn budget_lease(env: Env, min: Unknown) -> Result<f64> {
    guarded(
        &env,
        || Ok(lease::lease(bytes_of(min)?.unwrap_or(0)) as f64),
    )
}

/// budgetReturn(bytes): gives back bytes of this thread's lease; answers the lease ahead
/// the next budgetLease would take.
#[napi(js_name = "budgetReturn", catch_unwind)]
pub fn budget_return(env: Env, bytes: Unknown) -> Result<f64> {
    guarded(&env, || {
        Ok(lease::give_back(bytes_of(bytes)?.unwrap_or(0)) as f64)
    })
}

/// setPoolLimit(bytes)
#[napi(js_name = "setPoolLimit", catch_unwind)]
pub fn set_pool_limit(env: Env, bytes: Unknown) -> Result<Null> {
    guarded(&env, || match bytes_of(bytes)? {
        Some(b) => {
            crate::core::pool::set_limit(b);
            Ok(Null)
        }
        None => Err(type_error(
            "setPoolLimit(bytes): bytes must be a non-negative number",
        )),
    })
}

/// poolDefault(bytes): lowers the pool's default bound to `bytes`, unless setPoolLimit
/// was called (lib/body/budget.js: a share of the memory the process may use).
#[napi(js_name = "poolDefault", catch_unwind)]
pub fn pool_default(env: Env, bytes: Unknown) -> Result<Null> {
    guarded(&env, || {
        if let Some(b) = bytes_of(bytes)? {
            crate::core::pool::lower_default_limit(b);
        }
        Ok(Null)
    })
}

/// poolDecay(): a decay step of the pool, if one is due; answers the ms until the next,
/// or 0 when nothing is held and the timer stops (src/node/decay.rs).
#[napi(js_name = "poolDecay", catch_unwind)]
pub fn pool_decay(env: Env) -> Result<f64> {
    guarded(&env, || Ok(decay::tick()))
}

/// poolDecayHook(arm): `arm(ms)` starts this thread's decay timer (lib/body/pool-decay.js).
#[napi(js_name = "poolDecayHook", catch_unwind)]
pub fn pool_decay_hook(env: Env, arm: Unknown) -> Result<Null> {
    guarded(&env, || {
        if arm.get_type()? != ValueType::Function {
            return Err(type_error("poolDecayHook(arm): arm must be a function"));
        }
        // SAFETY: napi-rs hands an export its env and arguments, on the call's thread.
        unsafe { decay::set_arm(env.raw(), arm.value().value) }?;
        Ok(Null)
    })
}

/// injectFault(kind): arms one of buffer::fault's failures (test builds only).
#[cfg(feature = "fault-injection")]
#[napi(js_name = "injectFault", catch_unwind)]
pub fn inject_fault(env: Env, kind: Unknown) -> Result<Null> {
    guarded(&env, || {
        buffer::fault::arm(guarded::f64_of(kind)?.unwrap_or(0.0) as u32);
        Ok(Null)
    })
}

#[napi(module_exports)]
pub fn init(exports: Object) -> Result<()> {
    let env = exports.value().env;
    let exports = exports.raw();
    // The calls made per chunk or per field, hand-written for their per-call cost
    // (docs/performance.md, row 'per-chunk calls'); the rest are `#[napi]` exports.
    let functions: [(&str, raw::Callback); 5] = [
        ("push", body::push),
        ("streamWrite", stream::stream_write),
        ("streamRead", stream::stream_read),
        ("multipartFeed", multipart::multipart_feed),
        ("multipartField", multipart::multipart_field),
    ];
    #[cfg(feature = "call-cost")]
    let functions = functions.into_iter().chain(probe::RAW);
    for (name, function) in functions {
        // SAFETY: the env and exports object Node passed to module init.
        unsafe { export(env, exports, name, function) }
            .map_err(|_| Error::from_reason(format!("uws-body: cannot export {name}")))?;
    }
    let mut exports = Object::from_raw(env, exports);
    exports.set_named_property("protocol", protocol::export(&Env::from_raw(env))?)?;
    Ok(())
}
