//! Thin helpers over raw N-API. The hot functions are plain N-API callbacks rather than
//! `#[napi]` items: per perf-findings a hand-written callback costs ~40 ns a call, a
//! `#[napi]` function ~140 ns and a class method ~330 ns, and a body makes one call per
//! chunk.

use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::sys;

pub type Env = sys::napi_env;
pub type Value = sys::napi_value;

pub fn ok(status: sys::napi_status) -> bool {
    status == sys::Status::napi_ok
}

/// Reads up to `N` arguments; missing ones are `undefined`.
pub unsafe fn args<const N: usize>(env: Env, info: sys::napi_callback_info) -> [Value; N] {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    sys::napi_get_cb_info(
        env,
        info,
        &mut argc,
        argv.as_mut_ptr(),
        ptr::null_mut(),
        ptr::null_mut(),
    );
    argv
}

pub unsafe fn throw_type_error(env: Env, message: &str) -> Value {
    let message = CString::new(message).unwrap_or_default();
    sys::napi_throw_type_error(env, ptr::null(), message.as_ptr());
    ptr::null_mut()
}

pub unsafe fn throw_error(env: Env, code: &str, message: &str) -> Value {
    let code = CString::new(code).unwrap_or_default();
    let message = CString::new(message).unwrap_or_default();
    sys::napi_throw_error(env, code.as_ptr(), message.as_ptr());
    ptr::null_mut()
}

/// Runs a callback body so that a Rust panic becomes a JS exception instead of unwinding
/// into Node (which would abort the process).
pub unsafe fn guard(env: Env, body: impl FnOnce() -> Value) -> Value {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => throw_error(env, "ERR_UWS_BODY_INTERNAL", "uws-body: internal error"),
    }
}

pub unsafe fn number(env: Env, n: f64) -> Value {
    let mut result = ptr::null_mut();
    sys::napi_create_double(env, n, &mut result);
    result
}

pub unsafe fn boolean(env: Env, b: bool) -> Value {
    let mut result = ptr::null_mut();
    sys::napi_get_boolean(env, b, &mut result);
    result
}

pub unsafe fn null(env: Env) -> Value {
    let mut result = ptr::null_mut();
    sys::napi_get_null(env, &mut result);
    result
}

pub unsafe fn string(env: Env, s: &str) -> Value {
    let mut result = ptr::null_mut();
    sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut result);
    result
}

pub unsafe fn get_f64(env: Env, value: Value) -> Option<f64> {
    let mut n = 0f64;
    ok(sys::napi_get_value_double(env, value, &mut n)).then_some(n)
}

pub unsafe fn get_bool(env: Env, value: Value) -> Option<bool> {
    let mut b = false;
    ok(sys::napi_get_value_bool(env, value, &mut b)).then_some(b)
}

pub unsafe fn type_of(env: Env, value: Value) -> sys::napi_valuetype {
    let mut t = sys::ValueType::napi_undefined;
    sys::napi_typeof(env, value, &mut t);
    t
}

/// A JS string as Rust, or `None` for anything that is not a string.
pub unsafe fn get_string(env: Env, value: Value) -> Option<String> {
    if type_of(env, value) != sys::ValueType::napi_string {
        return None;
    }
    let mut len = 0usize;
    sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len);
    let mut bytes = vec![0u8; len + 1];
    let mut written = 0usize;
    sys::napi_get_value_string_utf8(env, value, bytes.as_mut_ptr().cast(), len + 1, &mut written);
    bytes.truncate(written);
    String::from_utf8(bytes).ok()
}

pub unsafe fn object(env: Env) -> Value {
    let mut result = ptr::null_mut();
    sys::napi_create_object(env, &mut result);
    result
}

pub unsafe fn set(env: Env, object: Value, key: &str, value: Value) {
    let key = CString::new(key).unwrap_or_default();
    sys::napi_set_named_property(env, object, key.as_ptr(), value);
}

/// The bytes of an ArrayBuffer or any ArrayBufferView, borrowed for this call only.
pub enum Bytes<'a> {
    Slice(&'a [u8]),
    Detached,
    NotBinary,
}

pub unsafe fn get_bytes<'a>(env: Env, value: Value) -> Bytes<'a> {
    let mut data: *mut c_void = ptr::null_mut();
    let mut len = 0usize;
    let mut is = false;
    sys::napi_is_arraybuffer(env, value, &mut is);
    if is {
        sys::napi_get_arraybuffer_info(env, value, &mut data, &mut len);
        if len == 0 {
            let mut detached = false;
            sys::napi_is_detached_arraybuffer(env, value, &mut detached);
            if detached {
                return Bytes::Detached;
            }
        }
    } else {
        sys::napi_is_typedarray(env, value, &mut is);
        if is {
            let mut kind = 0;
            let mut count = 0usize;
            let mut offset = 0usize;
            let mut buffer = ptr::null_mut();
            sys::napi_get_typedarray_info(
                env,
                value,
                &mut kind,
                &mut count,
                &mut data,
                &mut buffer,
                &mut offset,
            );
            len = count * element_size(kind);
        } else {
            sys::napi_is_dataview(env, value, &mut is);
            if !is {
                return Bytes::NotBinary;
            }
            let mut offset = 0usize;
            let mut buffer = ptr::null_mut();
            sys::napi_get_dataview_info(env, value, &mut len, &mut data, &mut buffer, &mut offset);
        }
    }
    if len == 0 || data.is_null() {
        Bytes::Slice(&[])
    } else {
        Bytes::Slice(std::slice::from_raw_parts(data.cast::<u8>(), len))
    }
}

/// Bytes per element of N-API's typed array kinds (11 is Float16Array, which newer Node
/// versions report).
fn element_size(kind: sys::napi_typedarray_type) -> usize {
    match kind {
        3 | 4 | 11 => 2,
        5..=7 => 4,
        8..=10 => 8,
        _ => 1,
    }
}

/// Registers `callback` as `exports[name]`.
pub unsafe fn export(env: Env, exports: Value, name: &str, callback: sys::napi_callback) {
    let mut function = ptr::null_mut();
    sys::napi_create_function(
        env,
        name.as_ptr().cast(),
        name.len() as isize,
        callback,
        ptr::null_mut(),
        &mut function,
    );
    set(env, exports, name, function);
}
