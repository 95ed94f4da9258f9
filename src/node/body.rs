//! The per-body functions: a `Body` lives behind a JS external that frees it if the
//! JS side is dropped without finish() or abort().

use std::ffi::c_void;
use std::ptr;

use napi::sys;

use super::buffer::into_buffer;
use super::raw::*;
use crate::core::{Body, BodyError, BodyOptions, FinishError, Misuse};

unsafe extern "C" fn drop_body(_env: Env, data: *mut c_void, _hint: *mut c_void) {
    drop(Box::from_raw(data.cast::<Body>()));
}

unsafe fn body<'a>(env: Env, value: Value) -> Option<&'a mut Body> {
    let mut data = ptr::null_mut();
    if type_of(env, value) != sys::ValueType::napi_external
        || !ok(sys::napi_get_value_external(env, value, &mut data))
        || data.is_null()
    {
        return None;
    }
    Some(&mut *data.cast::<Body>())
}

fn length_option(n: f64) -> Option<u64> {
    (n >= 0.0).then_some(n as u64)
}

/// create(contentLength, limit, maxPreallocated, contentEncoding, decode): the JS side
/// has validated and parsed the options; a negative contentLength means unknown.
pub unsafe extern "C" fn create(env: Env, info: sys::napi_callback_info) -> Value {
    guard(env, || {
        let [length, limit, max_preallocated, encoding, decode] = args::<5>(env, info);
        let (Some(length), Some(limit), Some(max_preallocated)) = (
            get_f64(env, length),
            get_f64(env, limit),
            get_f64(env, max_preallocated),
        ) else {
            return throw_type_error(env, "create(contentLength, limit, maxPreallocated)");
        };
        let options = BodyOptions {
            content_length: length_option(length),
            limit: limit.max(0.0) as u64,
            max_preallocated: max_preallocated.max(0.0) as u64,
            content_encoding: get_string(env, encoding),
            // Anything but `false` (an omitted argument included) decodes.
            decode: get_bool(env, decode) != Some(false),
        };
        let body = Box::into_raw(Box::new(Body::new(&options)));
        let mut result = ptr::null_mut();
        if !ok(sys::napi_create_external(
            env,
            body.cast(),
            Some(drop_body),
            ptr::null_mut(),
            &mut result,
        )) {
            drop(Box::from_raw(body));
            return throw_error(env, "ERR_UWS_BODY_INTERNAL", "cannot create body");
        }
        result
    })
}

fn misuse(env: Env, call: &str, misuse: Misuse) -> Value {
    let after = match misuse {
        Misuse::AfterFinish => "finish()",
        Misuse::AfterAbort => "abort()",
    };
    let message = format!("BodyAccumulator: {call}() after {after}");
    unsafe { throw_error(env, "ERR_BODY_STATE", &message) }
}

/// push(body, chunk) -> boolean
pub unsafe extern "C" fn push(env: Env, info: sys::napi_callback_info) -> Value {
    guard(env, || {
        let [handle, chunk] = args::<2>(env, info);
        let Some(body) = body(env, handle) else {
            return throw_type_error(env, "push: not a body");
        };
        let bytes = match get_bytes(env, chunk) {
            Bytes::Slice(bytes) => bytes,
            Bytes::Detached => {
                return throw_type_error(
                    env,
                    "BodyAccumulator.push: the ArrayBuffer is detached (uWS neuters it when \
                     onData returns: push it inside the callback)",
                )
            }
            Bytes::NotBinary => {
                return throw_type_error(
                    env,
                    "BodyAccumulator.push: chunk must be an ArrayBuffer or ArrayBufferView",
                )
            }
        };
        match body.push(bytes) {
            Ok(accepted) => boolean(env, accepted),
            Err(m) => misuse(env, "push", m),
        }
    })
}

/// finish(body) -> Buffer | null (empty body) | false (the body failed: see error())
pub unsafe extern "C" fn finish(env: Env, info: sys::napi_callback_info) -> Value {
    guard(env, || {
        let [handle] = args::<1>(env, info);
        let Some(body) = body(env, handle) else {
            return throw_type_error(env, "finish: not a body");
        };
        match body.finish() {
            Ok(block) if block.is_empty() => null(env),
            Ok(block) => into_buffer(env, block).unwrap_or_else(|| {
                throw_error(env, "ERR_UWS_BODY_INTERNAL", "cannot create Buffer")
            }),
            Err(FinishError::Body(_)) => boolean(env, false),
            Err(FinishError::Misuse(m)) => misuse(env, "finish", m),
        }
    })
}

/// finishString(body, encoding) -> string | false (the body failed: see error()).
/// encoding: 0 utf8, 1 latin1, 2 utf16le. The string is built straight from the body's
/// memory, which then goes back to the pool: no Buffer is ever made.
pub unsafe extern "C" fn finish_string(env: Env, info: sys::napi_callback_info) -> Value {
    guard(env, || {
        let [handle, encoding] = args::<2>(env, info);
        let Some(body) = body(env, handle) else {
            return throw_type_error(env, "finishString: not a body");
        };
        let block = match body.finish() {
            Ok(block) => block,
            Err(FinishError::Body(_)) => return boolean(env, false),
            Err(FinishError::Misuse(m)) => return misuse(env, "finishString", m),
        };
        let bytes = block.as_slice();
        let mut result = ptr::null_mut();
        let status = match get_f64(env, encoding).unwrap_or(0.0) as u32 {
            1 => sys::napi_create_string_latin1(
                env,
                bytes.as_ptr().cast(),
                bytes.len() as isize,
                &mut result,
            ),
            2 => {
                // The block comes from the allocator, so it is aligned for u16; an odd
                // trailing byte is dropped, as Buffer.toString('utf16le') does.
                let units: &[u16] = if bytes.len() < 2 {
                    &[]
                } else {
                    std::slice::from_raw_parts(bytes.as_ptr().cast::<u16>(), bytes.len() / 2)
                };
                sys::napi_create_string_utf16(
                    env,
                    units.as_ptr(),
                    units.len() as isize,
                    &mut result,
                )
            }
            _ => sys::napi_create_string_utf8(
                env,
                bytes.as_ptr().cast(),
                bytes.len() as isize,
                &mut result,
            ),
        };
        if !ok(status) {
            return throw_error(
                env,
                "ERR_STRING_TOO_LONG",
                "BodyAccumulator.finishString: the body is too large for a JS string",
            );
        }
        result
    })
}

/// abort(body)
pub unsafe extern "C" fn abort(env: Env, info: sys::napi_callback_info) -> Value {
    guard(env, || {
        let [handle] = args::<1>(env, info);
        if let Some(body) = body(env, handle) {
            body.abort();
        }
        null(env)
    })
}

/// error(body) -> null | { code, limit?, length?, expected?, received?, encoding?, reason? }
pub unsafe extern "C" fn error(env: Env, info: sys::napi_callback_info) -> Value {
    guard(env, || {
        let [handle] = args::<1>(env, info);
        match body(env, handle).and_then(|b| b.error().cloned()) {
            Some(e) => error_object(env, &e),
            None => null(env),
        }
    })
}

unsafe fn error_object(env: Env, e: &BodyError) -> Value {
    let o = object(env);
    // Status, type and message come from lib/errors.js's table, keyed by code, so that
    // errors of the JS tier and of this one cannot drift apart.
    set(env, o, "code", string(env, e.code()));
    let put = |key: &str, n: Option<u64>| {
        if let Some(n) = n {
            set(env, o, key, number(env, n as f64));
        }
    };
    match e {
        BodyError::TooLarge {
            limit,
            length,
            received,
        } => {
            put("limit", Some(*limit));
            put("length", *length);
            put("expected", *length);
            put("received", Some(*received));
        }
        BodyError::LengthMismatch { expected, received } => {
            put("length", Some(*expected));
            put("expected", Some(*expected));
            put("received", Some(*received));
        }
        BodyError::Aborted { expected, received } => {
            put("length", *expected);
            put("expected", *expected);
            put("received", Some(*received));
        }
        BodyError::EncodingUnsupported { encoding } => {
            set(env, o, "encoding", string(env, encoding));
        }
        BodyError::EncodingInvalid { encoding, reason } => {
            set(env, o, "encoding", string(env, encoding));
            set(env, o, "reason", string(env, reason.name()));
        }
    }
    o
}

/// sizes(body) -> [received, length, capacity]
pub unsafe extern "C" fn sizes(env: Env, info: sys::napi_callback_info) -> Value {
    guard(env, || {
        let [handle] = args::<1>(env, info);
        let Some(body) = body(env, handle) else {
            return throw_type_error(env, "sizes: not a body");
        };
        let mut array = ptr::null_mut();
        sys::napi_create_array_with_length(env, 3, &mut array);
        let values = [
            body.received() as f64,
            body.length() as f64,
            body.capacity() as f64,
        ];
        for (i, v) in values.into_iter().enumerate() {
            sys::napi_set_element(env, array, i as u32, number(env, v));
        }
        array
    })
}
