//! zstdCompress(buffer, level) -> Buffer: Node 20 has no zstd encoder, and the tests and
//! the benchmark need zstd bodies. Not part of the public API (index.js does not export it).

use std::ptr;

use napi::sys;

use super::raw::*;

pub unsafe extern "C" fn zstd_compress(env: Env, info: sys::napi_callback_info) -> Value {
    guard(env, || {
        let [input, level] = args::<2>(env, info);
        let Bytes::Slice(input) = get_bytes(env, input) else {
            return throw_type_error(env, "zstdCompress(buffer, level)");
        };
        let level = get_f64(env, level).unwrap_or(3.0) as i32;
        let mut out = vec![0u8; zstd_safe::compress_bound(input.len())];
        let n = match zstd_safe::compress(&mut out[..], input, level) {
            Ok(n) => n,
            Err(_) => return throw_error(env, "ERR_UWS_BODY_INTERNAL", "zstd compression failed"),
        };
        let mut data = ptr::null_mut();
        let mut result = ptr::null_mut();
        sys::napi_create_buffer_copy(env, n, out.as_ptr().cast(), &mut data, &mut result);
        result
    })
}
