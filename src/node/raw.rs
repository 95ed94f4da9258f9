//! Thin, checked helpers over raw N-API, for the calls made per chunk (push, streamWrite,
//! streamRead, multipartFeed) and per field (multipartField): plain N-API callbacks,
//! because napi-rs's wrapper costs several times the call itself (docs/performance.md,
//! row 'per-chunk calls'). Every other export is `#[napi]` (body.rs, stream.rs,
//! multipart.rs, mod.rs), its body run by guarded.rs's `guarded`.
//!
//! Every export is reachable from any JavaScript (`require('uws-body.node')`), so nothing
//! here trusts an argument: each N-API status that matters is checked through `check`, and
//! every callback runs inside `callback`, which turns a failure or a panic into a JS
//! exception instead of undefined behaviour or an unwind into Node.

use std::ffi::{c_void, CString};
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::sys;

pub type Env = sys::napi_env;
pub type Value = sys::napi_value;
/// A hand-written N-API callback.
pub type Callback = unsafe extern "C" fn(Env, sys::napi_callback_info) -> Value;

/// Why a callback produced no value; `callback` throws it.
#[derive(Debug)]
pub enum Thrown {
    /// The program passed a value the function does not take.
    Type(String),
    /// An Error with a stable `code`.
    Error { code: &'static str, message: String },
    /// An N-API call failed. A JS exception it left pending is thrown instead.
    Status(sys::napi_status),
}

pub type Result<T> = std::result::Result<T, Thrown>;

/// A failed napi-rs call (the safe builders, body.rs's error objects) as a failed N-API
/// call: a JS exception it left pending is thrown instead.
impl From<napi::Error> for Thrown {
    fn from(e: napi::Error) -> Self {
        Thrown::Status(e.status.into())
    }
}

/// `Ok` for `napi_ok`, the status as an error otherwise.
pub fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Thrown::Status(status))
    }
}

pub fn type_error(message: impl Into<String>) -> Thrown {
    Thrown::Type(message.into())
}

/// The error for a call the state does not allow (the program's mistake): `api: call()
/// after the end` or `after abort`.
pub fn misuse(api: &str, call: &str, misuse: crate::core::Misuse) -> Thrown {
    let after = match misuse {
        crate::core::Misuse::AfterFinish => "the end",
        crate::core::Misuse::AfterAbort => "abort",
    };
    Thrown::Error {
        code: "ERR_BODY_STATE",
        message: format!("{api}: {call}() after {after}"),
    }
}

/// Runs the body of an N-API callback. An error becomes a JS exception; a panic becomes
/// one too (unwinding into Node's C++ frames would abort the process).
///
/// # Safety
/// `env` must be the env Node passed to the running callback.
pub unsafe fn callback(env: Env, body: impl FnOnce() -> Result<Value>) -> Value {
    // SAFETY: as the caller promised.
    unsafe { settle(env, body) }.unwrap_or(ptr::null_mut())
}

/// What `callback` does, for a callback of any kind (guarded.rs's `#[napi]` exports run
/// their bodies here too): `body` runs under catch_unwind, the memory its work changed is
/// reported to V8, and its error or panic is thrown; `None` when something was thrown.
///
/// # Safety
/// `env` must be the env Node passed to the running callback.
pub unsafe fn settle<T>(env: Env, body: impl FnOnce() -> Result<T>) -> Option<T> {
    let outcome = catch_unwind(AssertUnwindSafe(body));
    // SAFETY: the caller's env, on the callback's thread.
    unsafe {
        super::accounting::report(env);
        super::decay::arm_if_held(env);
    }
    let thrown = match outcome {
        Ok(Ok(value)) => return Some(value),
        Ok(Err(thrown)) => thrown,
        Err(_) => Thrown::Error {
            code: "ERR_UWS_BODY_INTERNAL",
            message: "uws-body: internal error (a Rust panic, caught)".into(),
        },
    };
    // SAFETY: the caller's env, on the callback's thread.
    unsafe { throw(env, thrown) };
    None
}

/// Runs a finalizer's body. Node calls finalizers from the GC's second pass and at
/// environment teardown, where nothing can be thrown: a panic is contained and dropped.
/// The memory it freed is reported to V8.
///
/// # Safety
/// `env` must be the env Node passed to the running finalizer.
pub unsafe fn finalizer(env: Env, body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
    // SAFETY: the caller's env, on the finalizer's thread.
    unsafe { super::accounting::report(env) };
}

/// # Safety
/// `env` must be a live env on its own thread.
unsafe fn throw(env: Env, thrown: Thrown) {
    let mut pending = false;
    // SAFETY: valid env; `pending` outlives the call.
    let status = unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    // A failed call into V8 may have left its own exception (a RangeError from a
    // too-large Buffer, say): that one says more than a status number.
    if status == sys::Status::napi_ok && pending {
        return;
    }
    let (code, message) = match thrown {
        Thrown::Type(message) => {
            let message = c_string(&message);
            // A throw that fails leaves nothing to report it to: the callback returns no
            // value either way, which JS sees as undefined.
            // SAFETY: valid env and NUL-terminated message; a null code is allowed.
            let _ = unsafe { sys::napi_throw_type_error(env, ptr::null(), message.as_ptr()) };
            return;
        }
        Thrown::Error { code, message } => (code, message),
        Thrown::Status(status) => (
            "ERR_UWS_BODY_NAPI",
            format!("uws-body: an N-API call failed (napi_status {status})"),
        ),
    };
    let (code, message) = (c_string(code), c_string(&message));
    // As above, a failed throw has nowhere to go.
    // SAFETY: valid env and NUL-terminated strings.
    let _ = unsafe { sys::napi_throw_error(env, code.as_ptr(), message.as_ptr()) };
}

/// Interior NULs cannot reach C: they become spaces.
fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

/// Reads up to `N` arguments; missing ones are `undefined`.
///
/// # Safety
/// `env` and `info` must be those of the running callback.
pub unsafe fn args<const N: usize>(env: Env, info: sys::napi_callback_info) -> Result<[Value; N]> {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    // SAFETY: argv has room for argc values; Node fills missing ones with undefined.
    check(unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    })?;
    Ok(argv)
}

/// Defines the value-making helpers: each calls one N-API constructor and checks it.
macro_rules! make {
    ($(#[$doc:meta] $name:ident($($arg:ident: $ty:ty),*) => $call:ident($($pass:expr),*);)*) => {$(
        #[$doc]
        ///
        /// # Safety
        /// `env` must be a live env on its own thread.
        pub unsafe fn $name(env: Env, $($arg: $ty),*) -> Result<Value> {
            let mut result = ptr::null_mut();
            // SAFETY: valid env, plain arguments, and an out-pointer that outlives the call.
            check(unsafe { sys::$call(env, $($pass,)* &mut result) })?;
            Ok(result)
        }
    )*};
}

make! {
    /// A JS number.
    number(n: f64) => napi_create_double(n);
    /// A JS boolean.
    boolean(b: bool) => napi_get_boolean(b);
    /// `null`.
    null() => napi_get_null();
    /// A JS string from UTF-8.
    string(s: &str) => napi_create_string_utf8(s.as_ptr().cast(), s.len() as isize);
}

/// `object[key] = value`.
///
/// # Safety
/// `env` must be live; `object` and `value` values of it.
pub unsafe fn set(env: Env, object: Value, key: &str, value: Value) -> Result<()> {
    let key = c_string(key);
    // SAFETY: valid env and values; NUL-terminated key.
    check(unsafe { sys::napi_set_named_property(env, object, key.as_ptr(), value) })
}

/// # Safety
/// `env` must be live and `value` a value of it.
pub unsafe fn type_of(env: Env, value: Value) -> Result<sys::napi_valuetype> {
    let mut t = sys::ValueType::napi_undefined;
    // SAFETY: valid env and value; `t` outlives the call.
    check(unsafe { sys::napi_typeof(env, value, &mut t) })?;
    Ok(t)
}

/// A JS number as f64; `None` for anything else.
///
/// # Safety
/// `env` must be live and `value` a value of it.
pub unsafe fn get_f64(env: Env, value: Value) -> Result<Option<f64>> {
    // SAFETY: as the caller promised.
    if unsafe { type_of(env, value)? } != sys::ValueType::napi_number {
        return Ok(None);
    }
    let mut n = 0f64;
    // SAFETY: a number value; `n` outlives the call.
    check(unsafe { sys::napi_get_value_double(env, value, &mut n) })?;
    Ok(Some(n))
}

/// A JS boolean; `None` for anything else (probe.rs's hand-written create, multipartField;
/// the `#[napi]` exports read theirs with guarded.rs's `bool_of`).
///
/// # Safety
/// `env` must be live and `value` a value of it.
pub unsafe fn get_bool(env: Env, value: Value) -> Result<Option<bool>> {
    // SAFETY: as the caller promised.
    if unsafe { type_of(env, value)? } != sys::ValueType::napi_boolean {
        return Ok(None);
    }
    let mut b = false;
    // SAFETY: a boolean value; `b` outlives the call.
    check(unsafe { sys::napi_get_value_bool(env, value, &mut b) })?;
    Ok(Some(b))
}

/// A JS string as Rust; `None` for anything that is not a string.
///
/// # Safety
/// `env` must be live and `value` a value of it.
pub unsafe fn get_string(env: Env, value: Value) -> Result<Option<String>> {
    // SAFETY: as the caller promised.
    if unsafe { type_of(env, value)? } != sys::ValueType::napi_string {
        return Ok(None);
    }
    let mut len = 0usize;
    // SAFETY: a string value; a null buffer asks for the length only.
    check(unsafe { sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len) })?;
    let mut bytes = Vec::<u8>::new();
    if bytes.try_reserve_exact(len + 1).is_err() {
        return Err(Thrown::Error {
            code: "ERR_BODY_OUT_OF_MEMORY",
            message: "uws-body: no memory for a string argument".into(),
        });
    }
    let mut written = 0usize;
    // SAFETY: `bytes` has capacity for len + 1 bytes (N-API writes a trailing NUL) and
    // `written` reports how many of them hold the string.
    check(unsafe {
        sys::napi_get_value_string_utf8(
            env,
            value,
            bytes.as_mut_ptr().cast(),
            len + 1,
            &mut written,
        )
    })?;
    // SAFETY: N-API initialized `written` <= len bytes.
    unsafe { bytes.set_len(written.min(len)) };
    Ok(String::from_utf8(bytes).ok())
}

/// Asks one of N-API's `napi_is_*` predicates (a macro: napi-sys declares them as
/// `extern "C"` items on some targets and as Rust wrappers on others).
macro_rules! is {
    ($predicate:ident, $env:expr, $value:expr) => {{
        let mut result = false;
        // SAFETY: valid env and value (the enclosing function's contract); `result`
        // outlives the call.
        check(unsafe { sys::$predicate($env, $value, &mut result) }).map(|()| result)
    }};
}

/// What N-API says of a typed array: its element kind and count, data pointer, buffer
/// and byte offset into that buffer.
pub struct TypedArray {
    pub kind: sys::napi_typedarray_type,
    pub count: usize,
    pub data: *mut c_void,
    pub buffer: Value,
    pub offset: usize,
}

/// napi_get_typedarray_info.
///
/// # Safety
/// `env` must be live and `value` a typed array of it.
pub unsafe fn typed_array(env: Env, value: Value) -> Result<TypedArray> {
    let mut t = TypedArray {
        kind: 0,
        count: 0,
        data: ptr::null_mut(),
        buffer: ptr::null_mut(),
        offset: 0,
    };
    // SAFETY: a typed array of this env; every out-pointer outlives the call.
    check(unsafe {
        sys::napi_get_typedarray_info(
            env,
            value,
            &mut t.kind,
            &mut t.count,
            &mut t.data,
            &mut t.buffer,
            &mut t.offset,
        )
    })?;
    Ok(t)
}

/// What a chunk argument turned out to be.
pub enum Chunk<'a> {
    /// The bytes of a non-shared ArrayBuffer or of a view of one, in bounds.
    Bytes(&'a [u8]),
    /// Anything this function will not read: not binary, shared memory (another thread
    /// may write it while it is copied), detached, a view out of its buffer's bounds, an
    /// empty view, or a typed array kind this build does not know. lib/body/chunk.js decides
    /// what it is: an empty chunk or the TypeError saying why.
    Refused,
}

/// The bytes of an ArrayBuffer or an ArrayBufferView, borrowed for this call only.
///
/// A slice is formed only over memory that no other thread can write: an ArrayBuffer
/// that is not shared belongs to this isolate's thread, and nothing runs JS while it is
/// borrowed. The view's range is checked against its buffer's current length, since a
/// resizable ArrayBuffer may have shrunk under a DataView.
///
/// # Safety
/// `env` must be live and `value` a value of it; the slice must not outlive the callback.
pub unsafe fn get_chunk<'a>(env: Env, value: Value) -> Result<Chunk<'a>> {
    if is!(napi_is_arraybuffer, env, value)? {
        // SAFETY: a non-shared ArrayBuffer of this env.
        return unsafe { array_buffer(env, value, 0, None) };
    }
    let mut data: *mut c_void = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    let mut offset = 0usize;
    let len = if is!(napi_is_typedarray, env, value)? {
        // SAFETY: a typed array of this env.
        let t = unsafe { typed_array(env, value)? };
        (data, buffer, offset) = (t.data, t.buffer, t.offset);
        match element_size(t.kind).and_then(|size| t.count.checked_mul(size)) {
            Some(len) => len,
            None => return Ok(Chunk::Refused),
        }
    } else if is!(napi_is_dataview, env, value)? {
        let mut len = 0usize;
        // SAFETY: a DataView of this env; every out-pointer outlives the call.
        check(unsafe {
            sys::napi_get_dataview_info(env, value, &mut len, &mut data, &mut buffer, &mut offset)
        })?;
        len
    } else {
        return Ok(Chunk::Refused);
    };
    // A view of a SharedArrayBuffer: its buffer is not an ArrayBuffer to N-API. An empty
    // view may be detached or outside a resized buffer, which N-API reports as an empty
    // view too: lib/body/chunk.js tells them apart (it costs nothing on real chunks).
    if len == 0 || buffer.is_null() || !is!(napi_is_arraybuffer, env, buffer)? {
        return Ok(Chunk::Refused);
    }
    let Some(end) = offset.checked_add(len) else {
        return Ok(Chunk::Refused);
    };
    // SAFETY: `buffer` is a non-shared ArrayBuffer of this env.
    let chunk = unsafe { array_buffer(env, buffer, offset, Some(end))? };
    Ok(match chunk {
        // The view's own pointer must be where its buffer says it starts.
        Chunk::Bytes(bytes) if bytes.as_ptr() == data.cast_const().cast() => Chunk::Bytes(bytes),
        _ => Chunk::Refused,
    })
}

/// Room to write into: the memory of a Uint8Array (a Buffer) over a non-shared
/// ArrayBuffer, within its buffer's current bounds, borrowed mutably for this call only;
/// `None` for anything else (not a Uint8Array, shared memory, detached, out of bounds).
/// The slice is made from N-API's own pointer, never from a shared borrow, so writing
/// through it is sound; the caller must not hold another borrow of the same memory (see
/// `overlaps`).
///
/// # Safety
/// `env` must be live and `value` a value of it; the slice must not outlive the callback.
pub unsafe fn get_room<'a>(env: Env, value: Value) -> Result<Option<&'a mut [MaybeUninit<u8>]>> {
    if !is!(napi_is_typedarray, env, value)? {
        return Ok(None);
    }
    // SAFETY: a typed array of this env.
    let t = unsafe { typed_array(env, value)? };
    if t.kind != sys::TypedarrayType::uint8_array {
        return Ok(None);
    }
    // SAFETY: the typed array's own buffer, offset, length and data pointer.
    unsafe { get_room_of(env, t.buffer, t.offset, t.count, t.data) }
}

/// True when `value` is a typed array.
///
/// # Safety
/// `env` must be live and `value` a value of it.
pub unsafe fn is_typedarray(env: Env, value: Value) -> Result<bool> {
    is!(napi_is_typedarray, env, value)
}

/// The `count` bytes at `data`, which a typed array says are at `offset` in `buffer`, as
/// writable room: `None` unless `buffer` is a non-shared, attached ArrayBuffer that holds
/// them within its current bounds at exactly that place.
///
/// # Safety
/// `env` must be live, and `buffer`, `offset`, `count` and `data` those napi_get_typedarray_info
/// gave for one typed array; the slice must not outlive the callback.
pub unsafe fn get_room_of<'a>(
    env: Env,
    buffer: Value,
    offset: usize,
    count: usize,
    data: *mut c_void,
) -> Result<Option<&'a mut [MaybeUninit<u8>]>> {
    // A view of a SharedArrayBuffer has no ArrayBuffer to N-API.
    if buffer.is_null() || !is!(napi_is_arraybuffer, env, buffer)? {
        return Ok(None);
    }
    let mut base: *mut c_void = ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: a non-shared ArrayBuffer of this env; out-pointers outlive the call.
    check(unsafe { sys::napi_get_arraybuffer_info(env, buffer, &mut base, &mut len) })?;
    let in_bounds = offset.checked_add(count).is_some_and(|end| end <= len);
    if count == 0 || !in_bounds || data.is_null() || data != base.wrapping_byte_add(offset) {
        // An empty view may be detached or outside a resized buffer: no room either way.
        return Ok(None);
    }
    // SAFETY: `data` points at `count` bytes inside a non-shared, attached ArrayBuffer
    // owned by this isolate (checked above); no JS runs while the slice lives, and any
    // byte pattern is a valid MaybeUninit<u8>.
    Ok(Some(unsafe {
        std::slice::from_raw_parts_mut(data.cast::<MaybeUninit<u8>>(), count)
    }))
}

/// True when two byte ranges share any byte (a chunk and the room it is decoded into
/// must not: one is read while the other is written).
pub fn overlaps(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a_len != 0 && b_len != 0 && a < b.saturating_add(b_len) && b < a.saturating_add(a_len)
}

/// `buffer[start..end]` (to its end when `end` is `None`), if attached and in bounds.
///
/// # Safety
/// `buffer` must be a non-shared ArrayBuffer of the live `env`.
unsafe fn array_buffer<'a>(
    env: Env,
    buffer: Value,
    start: usize,
    end: Option<usize>,
) -> Result<Chunk<'a>> {
    let mut data: *mut c_void = ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: an ArrayBuffer of this env; out-pointers outlive the call.
    check(unsafe { sys::napi_get_arraybuffer_info(env, buffer, &mut data, &mut len) })?;
    if len == 0 {
        // A detached buffer reads as empty: only then is it worth asking (a chunk-sized
        // buffer is never detached, and this is the hot path).
        let mut detached = false;
        // SAFETY: an ArrayBuffer of this env; `detached` outlives the call.
        check(unsafe { sys::napi_is_detached_arraybuffer(env, buffer, &mut detached) })?;
        if detached {
            return Ok(Chunk::Refused);
        }
    }
    let end = end.unwrap_or(len);
    if start > end || end > len {
        return Ok(Chunk::Refused);
    }
    if start == end || data.is_null() {
        return Ok(Chunk::Bytes(&[]));
    }
    // SAFETY: `data` points at `len` bytes of a non-shared, attached ArrayBuffer owned by
    // this isolate, [start, end) lies within them, and no JS runs while the slice lives.
    Ok(Chunk::Bytes(unsafe {
        std::slice::from_raw_parts(data.cast::<u8>().add(start), end - start)
    }))
}

/// Bytes per element of N-API's typed array kinds; `None` for a kind this build does not
/// know (a guess could read past the view).
fn element_size(kind: sys::napi_typedarray_type) -> Option<usize> {
    use sys::TypedarrayType as T;
    // Newer Node versions have Float16Array; napi-sys does not name it yet.
    const FLOAT16_ARRAY: sys::napi_typedarray_type = 11;
    // Paths, not bare names: a name that failed to resolve would bind anything.
    match kind {
        T::int8_array | T::uint8_array | T::uint8_clamped_array => Some(1),
        T::int16_array | T::uint16_array | FLOAT16_ARRAY => Some(2),
        T::int32_array | T::uint32_array | T::float32_array => Some(4),
        T::float64_array | T::bigint64_array | T::biguint64_array => Some(8),
        _ => None,
    }
}

/// Registers `callback` as `exports[name]`.
///
/// # Safety
/// `env` must be live and `exports` an object of it.
pub unsafe fn export(env: Env, exports: Value, name: &str, callback: Callback) -> Result<()> {
    let mut function = ptr::null_mut();
    // SAFETY: the name's bytes and length describe a valid UTF-8 string.
    check(unsafe {
        sys::napi_create_function(
            env,
            name.as_ptr().cast(),
            name.len() as isize,
            Some(callback),
            ptr::null_mut(),
            &mut function,
        )
    })?;
    // SAFETY: as the caller promised.
    unsafe { set(env, exports, name, function) }
}
