//! The per-stream functions behind `bodyStream` (lib/api/stream.js): a `BodyStream` lives
//! behind a JS external, tagged as a stream's, that frees it if the JS side is dropped
//! without an end or an abort. Decoded bytes are written straight into a Buffer the JS
//! side allocated (the one copy), so nothing here hands memory to V8.

use std::mem::MaybeUninit;

use napi::bindgen_prelude::{Null, Unknown};
use napi::sys;
use napi_derive::napi;

use super::body::{abort_answer, digest_options, digests_answer, error_answer};
use super::external;
use super::guarded::{amount, bool_of, f64_of, guarded, js, string_of};
use super::raw::*;
use crate::core::{BodyOptions, BodyStream, Read};

/// streamCreate(contentLength, limit, contentEncoding, decode, requested?, contentDigest?,
/// reprDigest?, contentMd5?): the JS side has validated and parsed the options; a
/// negative contentLength means unknown. contentEncoding: a string, else none; decode:
/// anything but `false` decodes. The digest arguments as create()'s (body.rs).
#[napi(js_name = "streamCreate", catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn stream_create(
    env: napi::Env,
    length: Unknown,
    limit: Unknown,
    encoding: Unknown,
    decode: Unknown,
    requested: Unknown,
    content_digest: Unknown,
    repr_digest: Unknown,
    content_md5: Unknown,
) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        let (Some(length), Some(limit)) = (f64_of(length)?, f64_of(limit)?) else {
            return Err(type_error("streamCreate(contentLength, limit): numbers"));
        };
        let options = BodyOptions {
            content_length: (length >= 0.0).then_some(length as u64),
            limit: amount(limit),
            max_preallocated: 0,
            content_encoding: string_of(encoding)?,
            decode: bool_of(decode)? != Some(false),
            known_minimum: 0,
            digest: match f64_of(requested)? {
                Some(mask) => digest_options(mask, content_digest, repr_digest, content_md5)?,
                None => Default::default(),
            },
        };
        external::create(&env, BodyStream::new(&options))
    })
}

/// `out[offset..]`: the room the caller offers (a Uint8Array and an index into it).
///
/// # Safety
/// As `get_room`.
unsafe fn room_at<'a>(
    env: Env,
    out: Value,
    offset: Value,
    call: &str,
) -> Result<&'a mut [MaybeUninit<u8>]> {
    let bad = || {
        type_error(format!(
            "{call}: out must be a Uint8Array and offset an index into it"
        ))
    };
    // SAFETY: as the caller promised.
    let room = unsafe { get_room(env, out)? }.ok_or_else(bad)?;
    // SAFETY: as the caller promised.
    let offset = unsafe { get_f64(env, offset)? }.ok_or_else(bad)?;
    if !(offset >= 0.0 && offset <= room.len() as f64 && offset.fract() == 0.0) {
        return Err(bad());
    }
    Ok(&mut room[offset as usize..])
}

/// What a `Read` is in JS: a number of bytes written (0: nothing until the next chunk),
/// `true` once the body ended and every rule held, `false` once it failed (see
/// streamError()).
///
/// # Safety
/// `env` must be the running callback's.
unsafe fn read_value(env: Env, read: Read) -> Result<Value> {
    // SAFETY: the caller's env.
    unsafe {
        match read {
            Read::Data(n) => number(env, n as f64),
            Read::NeedInput => number(env, 0.0),
            Read::Done => boolean(env, true),
            Read::Failed => boolean(env, false),
        }
    }
}

/// streamWrite(stream, chunk, out, offset) -> true (an unencoded chunk, accepted: the
/// caller copies it on) | n (an encoded one: n decoded bytes written at out[offset..];
/// the rest of the chunk is held for streamRead) | false (failed) | null (not a chunk
/// this function reads: lib/body/chunk.js says why). `out` is read only for an encoded body.
///
/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
pub unsafe extern "C" fn stream_write(env: Env, info: sys::napi_callback_info) -> Value {
    // SAFETY: Node's env and info for this call.
    unsafe {
        callback(env, || {
            let [handle, chunk, out, offset] = args::<4>(env, info)?;
            let stream = external::get::<BodyStream>(env, handle, "streamWrite")?;
            let bytes = match get_chunk(env, chunk)? {
                Chunk::Bytes(bytes) => bytes,
                Chunk::Refused => return null(env),
            };
            let mut none: [MaybeUninit<u8>; 0] = [];
            let room = if stream.is_identity() {
                &mut none[..]
            } else {
                room_at(env, out, offset, "streamWrite")?
            };
            if overlaps(
                bytes.as_ptr(),
                bytes.len(),
                room.as_ptr().cast(),
                room.len(),
            ) {
                return Err(type_error("streamWrite: out overlaps the chunk"));
            }
            match stream.write(bytes, room) {
                Ok(Read::NeedInput) if stream.is_identity() => boolean(env, true),
                Ok(read) => read_value(env, read),
                Err(m) => Err(misuse("bodyStream", "streamWrite", m)),
            }
        })
    }
}

/// streamRead(stream, out, offset) -> n (decoded bytes written at out[offset..]; 0:
/// nothing until the next chunk) | true (ended, every rule held) | false (failed).
///
/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
pub unsafe extern "C" fn stream_read(env: Env, info: sys::napi_callback_info) -> Value {
    // SAFETY: Node's env and info for this call.
    unsafe {
        callback(env, || {
            let [handle, out, offset] = args::<3>(env, info)?;
            let stream = external::get::<BodyStream>(env, handle, "streamRead")?;
            let mut none: [MaybeUninit<u8>; 0] = [];
            let room = if stream.is_identity() {
                &mut none[..]
            } else {
                room_at(env, out, offset, "streamRead")?
            };
            match stream.read(room) {
                Ok(read) => read_value(env, read),
                Err(m) => Err(misuse("bodyStream", "streamRead", m)),
            }
        })
    }
}

/// streamEnd(stream): the last chunk was written (uWS's isLast).
#[napi(js_name = "streamEnd", catch_unwind)]
pub fn stream_end(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        match external::with(handle, "streamEnd", BodyStream::end)? {
            Ok(()) => js(&env, Null),
            Err(m) => Err(misuse("bodyStream", "streamEnd", m)),
        }
    })
}

/// streamAbort(stream): releases everything now. Idempotent.
#[napi(js_name = "streamAbort", catch_unwind)]
pub fn stream_abort(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    abort_answer(&env, handle, "streamAbort", BodyStream::abort)
}

/// streamError(stream) -> null | the error's fields, as body.rs's error().
#[napi(js_name = "streamError", catch_unwind)]
pub fn stream_error(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    error_answer(&env, handle, "streamError", BodyStream::error)
}

/// streamDigests(stream, out) -> bytes written into `out`: as digests() (body.rs), once
/// streamRead reported the end.
#[napi(js_name = "streamDigests", catch_unwind)]
pub fn stream_digests(
    env: napi::Env,
    handle: Unknown,
    out: Unknown,
) -> napi::Result<sys::napi_value> {
    digests_answer(&env, handle, "streamDigests", BodyStream::digests, out)
}
