//! The per-body functions: a `Body` lives behind a JS external that frees it if the
//! JS side is dropped without finish() or abort().

use napi::bindgen_prelude::{JsValue, Null, Object, Status, Unknown};
use napi::sys;
use napi_derive::napi;

use super::buffer::into_buffer;
use super::external;
use super::guarded::{amount, bool_of, f64_of, guarded, js, string_of};
use super::protocol::{digest as digest_bit, sizes, string_encoding};
use super::raw::*;
use super::string;
use crate::core::digest::{self, Algorithm, DigestOptions, Header};
use crate::core::{text, Body, BodyError, BodyOptions, FinishError, Misuse};

/// A length from JS, where a negative number means "none".
fn length_option(n: f64) -> Option<u64> {
    (n >= 0.0).then_some(n as u64)
}

/// create(contentLength, limit, maxPreallocated, contentEncoding, decode, knownMinimum?,
/// requested?, contentDigest?, reprDigest?, contentMd5?):
/// the JS side has validated and parsed the options; a negative contentLength means
/// unknown. knownMinimum: for an unknown length, bytes about to be pushed. requested: the
/// digests to make (protocol's `digest` bits); when it is a number, the three headers
/// after it (strings, or anything else for none) are the digests the request declared.
#[napi(js_name = "create", catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn create(
    env: napi::Env,
    length: Unknown,
    limit: Unknown,
    max_preallocated: Unknown,
    encoding: Unknown,
    decode: Unknown,
    known_minimum: Unknown,
    requested: Unknown,
    content_digest: Unknown,
    repr_digest: Unknown,
    content_md5: Unknown,
) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        let (Some(length), Some(limit), Some(max_preallocated)) =
            (f64_of(length)?, f64_of(limit)?, f64_of(max_preallocated)?)
        else {
            return Err(type_error(
                "create(contentLength, limit, maxPreallocated): numbers",
            ));
        };
        let options = BodyOptions {
            content_length: length_option(length),
            limit: amount(limit),
            max_preallocated: amount(max_preallocated),
            content_encoding: string_of(encoding)?,
            // Anything but `false` (an omitted argument included) decodes.
            decode: bool_of(decode)? != Some(false),
            // Anything but a positive number is no hint.
            known_minimum: f64_of(known_minimum)?.map_or(0, amount),
            digest: match f64_of(requested)? {
                Some(mask) => digest_options(mask, content_digest, repr_digest, content_md5)?,
                None => DigestOptions::default(),
            },
        };
        external::create(&env, Body::new(&options))
    })
}

/// What create()'s and streamCreate()'s digest arguments ask: the headers parsed (an
/// unparsable one is no digest, as RFC 9530 allows), the mask read as algorithms.
pub(super) fn digest_options(
    requested: f64,
    content_digest: Unknown,
    repr_digest: Unknown,
    content_md5: Unknown,
) -> Result<DigestOptions> {
    let mut declared = Vec::new();
    if let Some(value) = string_of(content_digest)? {
        declared.extend(digest::dictionary(Header::ContentDigest, &value));
    }
    if let Some(value) = string_of(repr_digest)? {
        declared.extend(digest::dictionary(Header::ReprDigest, &value));
    }
    if let Some(value) = string_of(content_md5)? {
        declared.extend(digest::content_md5(&value));
    }
    Ok(DigestOptions {
        declared,
        requested: requested_algorithms(requested),
    })
}

/// The algorithms of a `requested` argument, in the order of protocol's `digest` bits.
pub(super) fn requested_algorithms(requested: f64) -> Vec<Algorithm> {
    // Any number reaches here: out of range is none (`as` saturates, NaN is 0).
    let mask = requested as u32;
    REQUESTED
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|&(_, algorithm)| algorithm)
        .collect()
}

/// create()'s `requested` bits, as algorithms.
const REQUESTED: [(u32, Algorithm); 4] = [
    (digest_bit::SHA256, Algorithm::Sha256),
    (digest_bit::SHA512, Algorithm::Sha512),
    (digest_bit::MD5, Algorithm::Md5),
    (digest_bit::CRC32C, Algorithm::Crc32c),
];

/// digests(body, out) -> the number of bytes written into `out` (a Uint8Array of at least
/// `DIGESTS_MAX` bytes): the requested digests of the bytes the program got, back to back
/// in the order of protocol's `digest` bits; 0 when none were asked or the body has not
/// finished. Written into the caller's memory, not made as an object of Buffers: N-API's
/// objects and Buffers cost more than a small body's hash.
#[napi(js_name = "digests", catch_unwind)]
pub fn digests(env: napi::Env, handle: Unknown, out: Unknown) -> napi::Result<sys::napi_value> {
    digests_answer(&env, handle, "digests", Body::digests, out)
}

/// What digests(), streamDigests() and multipartDigests() do: write the digests `of`
/// finds into `out` (write_digests), and answer how many bytes that took.
pub(super) fn digests_answer<T: external::Tagged>(
    env: &napi::Env,
    handle: Unknown,
    call: &str,
    of: fn(&T) -> &[digest::Digest],
    out: Unknown,
) -> napi::Result<sys::napi_value> {
    guarded(env, || {
        let made = external::with(handle, call, |handle: &mut T| of(handle).to_vec())?;
        js(env, write_digests(env, &made, out)? as f64)
    })
}

/// digestOf(bytes, requested, contentDigest?, reprDigest?, contentMd5?, out) -> the number
/// of bytes written into `out` (as digests()) | { code: 'ERR_BODY_DIGEST_MISMATCH', header,
/// algorithm }: the digests of a whole body the JS tier read (an identity body, so every
/// digest is over the same bytes), checked and made in one call while its bytes are still
/// in cache. The arguments between as create()'s. TypeError for `bytes` that is not a
/// chunk push() would read, or an `out` too small.
#[napi(js_name = "digestOf", catch_unwind)]
pub fn digest_of(
    env: napi::Env,
    bytes: Unknown,
    requested: Unknown,
    content_digest: Unknown,
    repr_digest: Unknown,
    content_md5: Unknown,
    out: Unknown,
) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        let options = digest_options(
            f64_of(requested)?.unwrap_or(0.0),
            content_digest,
            repr_digest,
            content_md5,
        )?;
        let Some(mut digests) = digest::Digests::new(&options, true) else {
            return js(&env, 0.0);
        };
        {
            // SAFETY: napi-rs gives an export its arguments with the env of its own call;
            // the borrow ends in this block, before `out` is written.
            let chunk = unsafe { get_chunk(env.raw(), bytes.raw())? };
            match chunk {
                Chunk::Bytes(bytes) => digests.sent(bytes),
                // lib/body/body-store.js passes an empty body as an empty ArrayBuffer.
                Chunk::Refused => {
                    return Err(type_error(
                        "digestOf(bytes): an ArrayBuffer or a non-empty view",
                    ))
                }
            }
        }
        match digests.finish() {
            Ok(()) => js(&env, write_digests(&env, digests.results(), out)? as f64),
            Err(error) => Ok(error_object(&env, &error)?.raw()),
        }
    })
}

/// The most bytes the digests of one body take (every algorithm asked).
const DIGESTS_MAX: usize = 32 + 64 + 16 + 4;

/// Writes `made` back to back at the front of `out`, a Uint8Array of at least
/// `DIGESTS_MAX` bytes: the number of bytes written.
pub(super) fn write_digests(
    env: &napi::Env,
    made: &[digest::Digest],
    out: Unknown,
) -> Result<usize> {
    if made.is_empty() {
        return Ok(0);
    }
    // SAFETY: napi-rs gives an export its arguments with the env of its own call; no
    // other borrow of JS memory is live (digestOf's chunk ended before).
    let room = unsafe { get_room(env.raw(), out.raw())? }
        .filter(|room| room.len() >= DIGESTS_MAX)
        .ok_or_else(|| type_error("digests: out must be a Uint8Array of 116 bytes or more"))?;
    let mut at = 0;
    for d in made {
        for (o, &b) in room[at..].iter_mut().zip(&d.bytes) {
            o.write(b);
        }
        at += d.bytes.len();
    }
    Ok(at)
}

fn misuse(call: &str, misuse: Misuse) -> Thrown {
    let after = match misuse {
        Misuse::AfterFinish => "finish()",
        Misuse::AfterAbort => "abort()",
    };
    Thrown::Error {
        code: "ERR_BODY_STATE",
        message: format!("BodyAccumulator: {call}() after {after}"),
    }
}

/// push(body, chunk) -> true | false (the body failed: see error()) | null (not a chunk
/// this function reads; lib/body/chunk.js says why, so both tiers throw the same TypeError)
///
/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
pub unsafe extern "C" fn push(env: Env, info: sys::napi_callback_info) -> Value {
    // SAFETY: Node's env and info for this call.
    unsafe {
        callback(env, || {
            let [handle, chunk] = args::<2>(env, info)?;
            let body = external::get::<Body>(env, handle, "push")?;
            let bytes = match get_chunk(env, chunk)? {
                Chunk::Bytes(bytes) => bytes,
                Chunk::Refused => return null(env),
            };
            match body.push(bytes) {
                Ok(accepted) => boolean(env, accepted),
                Err(m) => Err(misuse("push", m)),
            }
        })
    }
}

/// finish(body) -> Buffer | null (empty body) | false (the body failed: see error())
#[napi(js_name = "finish", catch_unwind)]
pub fn finish(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        match external::with(handle, "finish", Body::finish)? {
            Ok(block) if block.is_empty() => js(&env, Null),
            Ok(block) => into_buffer(&env, block),
            Err(FinishError::Body(_)) => js(&env, false),
            Err(FinishError::Misuse(m)) => Err(misuse("finish", m)),
        }
    })
}

/// finishString(body, encoding) -> string | false (the body failed: see error()) | the
/// body's length in bytes (a number: the string would be longer than V8 makes one) | a
/// Buffer of the body (UTF8_OR_BUFFER, for text that is not one-byte).
/// encoding: protocol's `string_encoding` (UTF8 for any other value). The string is built
/// straight from the body's memory, which then goes back to the pool (or, for a one-byte
/// string of string::EXTERNAL_MIN or more, is the string's: src/node/string.rs): no
/// Buffer is made but the one UTF8_OR_BUFFER asks for.
#[napi(js_name = "finishString", catch_unwind)]
pub fn finish_string(
    env: napi::Env,
    handle: Unknown,
    encoding: Unknown,
) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        let finished = external::with(handle, "finishString", Body::finish)?;
        let encoding = f64_of(encoding)?.unwrap_or(f64::from(string_encoding::UTF8)) as u32;
        let mut block = match finished {
            Ok(block) => block,
            Err(FinishError::Body(_)) => return js(&env, false),
            Err(FinishError::Misuse(m)) => return Err(misuse("finishString", m)),
        };
        let length = block.len();
        // UTF-8 whose characters all fit one byte (ASCII, or nearly) is made a one-byte
        // string from its Latin-1 form, rewritten in the block itself: a copy, where V8's
        // UTF-8 decoder is slower (docs/performance.md, row 'UTF-8 decoding').
        let one_byte = match encoding {
            string_encoding::LATIN1 | string_encoding::UTF16LE => None,
            _ => text::utf8_to_latin1_in_place(block.as_mut_slice()),
        };
        if one_byte.is_none() && encoding == string_encoding::UTF8_OR_BUFFER {
            // The caller decodes it: one copy by Buffer.toString, none here.
            return into_buffer(&env, block);
        }
        let latin1_len = match (encoding, one_byte) {
            (_, Some(n)) => Some(n),
            (string_encoding::LATIN1, None) => Some(length),
            _ => None,
        };
        let block = match latin1_len {
            Some(n) if n >= string::EXTERNAL_MIN => match string::external_latin1(&env, block, n) {
                Ok(made) => return Ok(made),
                Err(block) => block,
            },
            _ => block,
        };
        let bytes = block.as_slice();
        let made = match (encoding, latin1_len) {
            (_, Some(n)) => env.create_string_latin1(&bytes[..n]).map(|s| s.raw()),
            (string_encoding::UTF16LE, None) => env
                .create_string_utf16(utf16_units(bytes)?)
                .map(|s| s.raw()),
            _ => string::utf8(&env, bytes),
        };
        match made {
            Ok(made) => Ok(made),
            // V8 refuses a string over its length limit (generic failure; N-API itself
            // refuses over INT_MAX: invalid arg), before allocating, throwing nothing.
            // lib/body/accumulator.js makes that the client's 413.
            Err(e) if matches!(e.status, Status::GenericFailure | Status::InvalidArg) => {
                js(&env, length as f64)
            }
            Err(e) => Err(e.into()),
        }
    })
}

/// The body as UTF-16 code units (little-endian, as Buffer.toString('utf16le') reads it;
/// an odd trailing byte is dropped, as there). Borrowed in place when the memory is
/// aligned for u16 on a little-endian machine, which allocators give in practice;
/// otherwise converted into a new allocation.
fn utf16_units(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u16]>> {
    let bytes = &bytes[..bytes.len() & !1];
    if cfg!(target_endian = "little") && bytes.as_ptr().align_offset(2) == 0 {
        // SAFETY: the pointer is aligned for u16, the length is even, and every bit
        // pattern is a valid u16; the slice borrows `bytes` and lives no longer.
        return Ok(std::borrow::Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(bytes.as_ptr().cast::<u16>(), bytes.len() / 2)
        }));
    }
    let mut units = Vec::new();
    units
        .try_reserve_exact(bytes.len() / 2)
        .map_err(|_| Thrown::Error {
            code: "ERR_BODY_OUT_OF_MEMORY",
            message: "BodyAccumulator.finishString: no memory to convert the body".into(),
        })?;
    units.extend(
        bytes
            .chunks_exact(2)
            .map(|pair| u16::from_le_bytes([pair[0], pair[1]])),
    );
    Ok(std::borrow::Cow::Owned(units))
}

/// abort(body)
#[napi(js_name = "abort", catch_unwind)]
pub fn abort(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    abort_answer(&env, handle, "abort", Body::abort)
}

/// What abort(), streamAbort() and multipartAbort() do: release what the handle holds
/// (idempotent), and answer null.
pub(super) fn abort_answer<T: external::Tagged>(
    env: &napi::Env,
    handle: Unknown,
    call: &str,
    abort: fn(&mut T),
) -> napi::Result<sys::napi_value> {
    guarded(env, || {
        external::with(handle, call, abort)?;
        js(env, Null)
    })
}

/// error(body) -> null | { code, limit?, length?, expected?, received?, encoding?, reason? }
#[napi(js_name = "error", catch_unwind)]
pub fn error(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    error_answer(&env, handle, "error", Body::error)
}

/// What error() and streamError() answer: null, or the fields of the error `of` finds.
pub(super) fn error_answer<T: external::Tagged>(
    env: &napi::Env,
    handle: Unknown,
    call: &str,
    of: fn(&T) -> Option<&BodyError>,
) -> napi::Result<sys::napi_value> {
    guarded(env, || {
        let fields = external::with(handle, call, |handle: &mut T| {
            of(handle).map(|e| error_object(env, e)).transpose()
        })??;
        match fields {
            Some(fields) => Ok(fields.raw()),
            None => js(env, Null),
        }
    })
}

/// A body error's fields, for lib/native/errors.js: `code`, and the numbers or names its kind has.
pub(super) fn error_object<'e>(env: &'e napi::Env, e: &BodyError) -> napi::Result<Object<'e>> {
    let mut o = Object::new(env)?;
    // Status, type and message come from lib/native/errors.js's table, keyed by code, so that
    // errors of the JS tier and of this one cannot drift apart.
    o.set("code", e.code())?;
    let mut put = |key: &str, n: Option<u64>| match n {
        Some(n) => o.set(key, n as f64),
        None => Ok(()),
    };
    match e {
        BodyError::TooLarge {
            limit,
            length,
            received,
        } => {
            put("limit", Some(*limit))?;
            put("length", *length)?;
            put("expected", *length)?;
            put("received", Some(*received))?;
        }
        BodyError::LengthMismatch { expected, received } => {
            put("length", Some(*expected))?;
            put("expected", Some(*expected))?;
            put("received", Some(*received))?;
        }
        BodyError::Aborted { expected, received } => {
            put("length", *expected)?;
            put("expected", *expected)?;
            put("received", Some(*received))?;
        }
        BodyError::EncodingUnsupported { encoding } => o.set("encoding", encoding.as_str())?,
        BodyError::EncodingInvalid { encoding, reason } => {
            o.set("encoding", *encoding)?;
            o.set("reason", reason.name())?;
        }
        BodyError::OutOfMemory { .. } | BodyError::OverBudget { .. } => {}
        BodyError::DigestMismatch { header, algorithm } => {
            o.set("header", *header)?;
            o.set("algorithm", *algorithm)?;
        }
    }
    Ok(o)
}

/// sizes(body) -> [received, length, capacity] (protocol's `sizes` slots)
#[napi(js_name = "sizes", catch_unwind)]
pub fn body_sizes(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        let values = external::with(handle, "sizes", |body: &mut Body| {
            let mut values = vec![0.0; sizes::TABLE.len()];
            values[sizes::RECEIVED] = body.received() as f64;
            values[sizes::LENGTH] = body.length() as f64;
            values[sizes::CAPACITY] = body.capacity() as f64;
            values
        })?;
        js(&env, values)
    })
}
