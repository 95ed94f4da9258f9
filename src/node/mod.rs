//! The N-API layer: converts between JS values and `core`, nothing more.

mod body;
mod buffer;
mod raw;
mod testing;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use raw::{export, number, object, set};

unsafe extern "C" fn stats(env: raw::Env, _info: napi::sys::napi_callback_info) -> raw::Value {
    let s = crate::core::stats();
    let o = object(env);
    set(env, o, "bytesInUse", number(env, s.bytes_in_use as f64));
    set(env, o, "blocksInUse", number(env, s.blocks_in_use as f64));
    set(env, o, "bytesPooled", number(env, s.bytes_pooled as f64));
    set(env, o, "poolLimit", number(env, s.pool_limit as f64));
    o
}

/// setPoolLimit(bytes)
unsafe extern "C" fn set_pool_limit(
    env: raw::Env,
    info: napi::sys::napi_callback_info,
) -> raw::Value {
    let [bytes] = raw::args::<1>(env, info);
    match raw::get_f64(env, bytes).filter(|b| *b >= 0.0) {
        Some(b) => {
            crate::core::pool::set_limit(b as u64);
            raw::null(env)
        }
        None => raw::throw_type_error(
            env,
            "setPoolLimit(bytes): bytes must be a non-negative number",
        ),
    }
}

#[napi(module_exports)]
pub fn init(exports: Object) -> Result<()> {
    let env = exports.value().env;
    let exports = exports.raw();
    unsafe {
        export(env, exports, "create", Some(body::create));
        export(env, exports, "push", Some(body::push));
        export(env, exports, "finish", Some(body::finish));
        export(env, exports, "abort", Some(body::abort));
        export(env, exports, "error", Some(body::error));
        export(env, exports, "sizes", Some(body::sizes));
        export(env, exports, "finishString", Some(body::finish_string));
        export(env, exports, "release", Some(buffer::release));
        export(env, exports, "stats", Some(stats));
        export(env, exports, "setPoolLimit", Some(set_pool_limit));
        export(env, exports, "zstdCompress", Some(testing::zstd_compress));
    }
    Ok(())
}
