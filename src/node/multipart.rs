//! The per-body functions behind lib/multipart (readMultipart, multipart()): an `Upload`
//! lives behind a JS external tagged as a multipart body's. The JS side drives it one
//! outcome at a time and says, for each part, where its data goes (core's `Sink`).

use std::mem::MaybeUninit;
use std::ptr;

use napi::bindgen_prelude::{JsValue, Null, Object, Unknown};
use napi::sys;
use napi_derive::napi;

use super::body::{
    abort_answer, digest_options, digests_answer, error_object as body_error_object,
    requested_algorithms,
};
use super::buffer::into_buffer;
use super::external;
use super::guarded::{amount, guarded, js, string_of};
use super::protocol::{form as slot_of, head as slot, outcome, sink};
use super::raw::*;
use crate::core::decode::Decoder;
use crate::core::encoding;
use crate::core::multipart::{
    Boundary, Decoding, Limits, Multipart, MultipartError, NameEncoding, Outcome, PartHead, Sink,
    Upload,
};

/// multipartCreate(contentType, form, contentEncoding, contentDigest, reprDigest,
/// contentMd5) -> the upload's external, or, for a content-type without a usable boundary
/// or a content-encoding this build does not decode, an object `{ code, ... }` (error()'s
/// form). `form`: a Float64Array whose slots are protocol's `form` (the limits the parser
/// applies, core's `Limits`; fieldNameSize and parts are the engine's alone,
/// lib/multipart/engine.js, checked when multer checks them). An encoded form
/// (contentEncoding a string other than identity) is parsed from its decoded bytes.
/// contentDigest, reprDigest, contentMd5: the request's digest headers (strings, or
/// anything else for none), checked over the whole body at its end.
#[napi(js_name = "multipartCreate", catch_unwind)]
pub fn multipart_create(
    env: napi::Env,
    content_type: Unknown,
    form: Unknown,
    content_encoding: Unknown,
    content_digest: Unknown,
    repr_digest: Unknown,
    content_md5: Unknown,
) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        let Some(content_type) = string_of(content_type)? else {
            return Err(type_error("multipartCreate: contentType must be a string"));
        };
        let form = {
            let value = form.value();
            // SAFETY: napi-rs gives an export its arguments with the env of its own call;
            // the slice is read here, before anything can run JS.
            let slots = unsafe { get_f64s(value.env, value.value, slot_of::SLOTS)? };
            let Some(slots) = slots else {
                return Err(type_error(
                    "multipartCreate(contentType, form): form must be a Float64Array of protocol's FORM.SLOTS",
                ));
            };
            let mut form = [0.0; slot_of::SLOTS];
            for (n, slot) in form.iter_mut().zip(slots.iter()) {
                // SAFETY: a Float64Array's elements are initialized, and any bits are an f64.
                *n = unsafe { slot.assume_init() };
            }
            form
        };
        let at = |slot: usize| amount(form[slot]);
        let limits = Limits {
            field_name_size: u64::MAX,
            field_size: at(slot_of::FIELD_SIZE),
            fields: at(slot_of::FIELDS),
            file_size: at(slot_of::FILE_SIZE),
            files: at(slot_of::FILES),
            parts: u64::MAX,
            header_pairs: at(slot_of::HEADER_PAIRS),
            header_size: usize::try_from(at(slot_of::HEADER_SIZE)).unwrap_or(usize::MAX),
        };
        let boundary = match Boundary::from_content_type(content_type.as_bytes()) {
            Ok(boundary) => boundary,
            Err(e) => return Ok(error_object(&env, &e)?.raw()),
        };
        let preallocate = usize::try_from(at(slot_of::PREALLOCATE)).unwrap_or(usize::MAX);
        let expected = (form[slot_of::EXPECTED] >= 0.0).then(|| at(slot_of::EXPECTED));
        let codings = match encoding::parse(string_of(content_encoding)?.as_deref(), true) {
            Ok(codings) => codings,
            Err(e) => return Ok(body_error_object(&env, &e)?.raw()),
        };
        let parser = Multipart::new(&boundary, limits);
        let upload = if codings.is_empty() {
            Upload::new(parser, preallocate, expected)
        } else {
            let decoder = match Decoder::reserved(&codings, at(slot_of::DECODED_LIMIT)) {
                Ok(decoder) => decoder.expect("codings are not empty"),
                Err(over) => return Ok(body_error_object(&env, &over.into())?.raw()),
            };
            Upload::with_decoding(parser, preallocate, Decoding::new(decoder))
        };
        let requested = requested_algorithms(form[slot_of::REQUESTED]);
        let declared = digest_options(0.0, content_digest, repr_digest, content_md5)?.declared;
        external::create(
            &env,
            upload
                .with_part_digests(&requested)
                .with_declared_digests(declared),
        )
    })
}

/// The error's fields for lib/multipart/errors.js: `code`, and `reason` (a 400's
/// problem) or `max` (a broken limit's value).
fn error_object<'e>(env: &'e napi::Env, e: &MultipartError) -> napi::Result<Object<'e>> {
    let mut o = Object::new(env)?;
    o.set("code", e.code())?;
    if let Some(reason) = e.reason() {
        o.set("reason", reason)?;
    }
    if let MultipartError::Limit { max, .. } = e {
        o.set("max", *max as f64)?;
    }
    Ok(o)
}

/// What an `Outcome` is in JS.
fn outcome_number(fed: Outcome) -> f64 {
    f64::from(match fed {
        Outcome::Part => outcome::PART,
        Outcome::Data => outcome::DATA,
        Outcome::PartEnd => outcome::PART_END,
        Outcome::NeedInput => outcome::NEED_INPUT,
        Outcome::Done => outcome::DONE,
        Outcome::Failed => outcome::FAILED,
    })
}

/// The `Sink` a JS number names; `None` for any other value.
fn sink_of(n: Option<f64>) -> Option<Sink> {
    let n = n?;
    [
        (sink::SKIP, Sink::Skip),
        (sink::FIELD, Sink::Field),
        (sink::ARENA, Sink::Arena),
        (sink::STREAM, Sink::Room),
        (sink::PENDING, Sink::Pending),
    ]
    .into_iter()
    .find_map(|(code, sink)| (f64::from(code) == n).then_some(sink))
}

/// multipartFeed(upload, chunk, offset, sink, room, state) -> an outcome (protocol's
/// `outcome`, DATA to FAILED) | a new part's head (head_array) | null (not a chunk this
/// function reads: lib/body/chunk.js says why).
/// Parses chunk[offset..] to the next outcome; the current part's data goes to `sink`
/// (protocol's `sink`: SKIP, FIELD, ARENA, STREAM into `room`, a Uint8Array, else
/// ignored; PENDING the same room, the part's size limit not applied meanwhile:
/// `Sink::Pending`). Writes into `state` (a Float64Array of 2): the offset in the chunk
/// reached, then the bytes written into the room (STREAM, PENDING) or the arena's length
/// (ARENA). A part of sink SKIP or ARENA that ends is parsed on from: the next part's
/// head then says so (its slot `ENDED`).
///
/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
pub unsafe extern "C" fn multipart_feed(env: Env, info: sys::napi_callback_info) -> Value {
    // SAFETY: Node's env and info for this call.
    unsafe {
        callback(env, || {
            let [handle, chunk, offset, sink, room, state] = args::<6>(env, info)?;
            let upload = external::get::<Upload>(env, handle, "multipartFeed")?;
            let bytes = match get_chunk(env, chunk)? {
                Chunk::Bytes(bytes) => bytes,
                Chunk::Refused => return null(env),
            };
            let bad = || {
                type_error("multipartFeed: offset must be an index into the chunk, sink 0-4, room a Uint8Array and state a Float64Array(2)")
            };
            let offset = get_f64(env, offset)?.ok_or_else(bad)?;
            if !(offset >= 0.0 && offset <= bytes.len() as f64 && offset.fract() == 0.0) {
                return Err(bad());
            }
            let offset = offset as usize;
            let sink = sink_of(get_f64(env, sink)?).ok_or_else(bad)?;
            let state = get_f64s(env, state, 2)?.ok_or_else(bad)?;
            let mut none: [MaybeUninit<u8>; 0] = [];
            let room = match sink {
                Sink::Room | Sink::Pending => get_room(env, room)?.ok_or_else(bad)?,
                _ => &mut none[..],
            };
            for (a, a_len) in [
                (bytes.as_ptr(), bytes.len()),
                (state.as_ptr().cast::<u8>(), 16),
            ] {
                if overlaps(a, a_len, room.as_ptr().cast(), room.len()) {
                    return Err(type_error(
                        "multipartFeed: room overlaps the chunk or state",
                    ));
                }
            }
            let feed_misuse = |m| misuse("multipart", "multipartFeed", m);
            let mut fed = upload
                .feed(&bytes[offset..], sink, room)
                .map_err(feed_misuse)?;
            let mut consumed = fed.consumed;
            // Taken now: a failure further on releases the arena.
            let second = match sink {
                Sink::Arena => upload.arena_len(),
                _ => fed.written,
            };
            let mut ended = None;
            if fed.outcome == Outcome::PartEnd && matches!(sink, Sink::Arena | Sink::Skip) {
                // The caller's next call, made here: from a part's end its data goes
                // nowhere (Sink::Skip) to the next outcome. When that is the next part,
                // the end comes with its head: one crossing per part instead of two.
                // (Not after a field: its value and charset are read at its end.)
                ended = Some(second);
                fed = upload
                    .feed(&bytes[offset + consumed..], Sink::Skip, &mut none[..])
                    .map_err(feed_misuse)?;
                consumed += fed.consumed;
                if fed.outcome != Outcome::Part {
                    // The part's end alone; the caller's next call finds the outcome
                    // again (NeedInput, Done and Failed are the parser's state).
                    fed.outcome = Outcome::PartEnd;
                    ended = None;
                }
            }
            state[0].write((offset + consumed) as f64);
            state[1].write(second as f64);
            match fed.outcome {
                // The head with the outcome: one call less per part.
                Outcome::Part => head_array(env, upload.parser().head(), ended),
                other => number(env, outcome_number(other)),
            }
        })
    }
}

/// The first `n` elements of a Float64Array of at least `n` over a non-shared
/// ArrayBuffer, in bounds; None for anything else.
///
/// # Safety
/// As `get_room`: the slice must not outlive the callback.
unsafe fn get_f64s<'a>(
    env: Env,
    value: Value,
    n: usize,
) -> Result<Option<&'a mut [MaybeUninit<f64>]>> {
    // SAFETY: the caller's env and value.
    if !unsafe { is_typedarray(env, value)? } {
        return Ok(None);
    }
    // SAFETY: a typed array of this env.
    let TypedArray {
        kind,
        count,
        data,
        buffer,
        offset,
    } = unsafe { typed_array(env, value)? };
    // Read and written as f64s, so its address must be aligned for them.
    let aligned = (data as usize).is_multiple_of(std::mem::align_of::<f64>());
    let Some(len) = count.checked_mul(8) else {
        return Ok(None);
    };
    if kind != sys::TypedarrayType::float64_array || count < n || data.is_null() || !aligned {
        return Ok(None);
    }
    // SAFETY: the typed array's own buffer, offset, byte length and data pointer.
    let Some(bytes) = (unsafe { get_room_of(env, buffer, offset, len, data)? }) else {
        return Ok(None);
    };
    // SAFETY: `bytes` is 8 * count >= 8 * n writable bytes at an address aligned for f64
    // (checked above), and any bit pattern is a valid MaybeUninit<f64>.
    Ok(Some(unsafe {
        std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<MaybeUninit<f64>>(), n)
    }))
}

/// A part's head as an array, its slots protocol's `head`: name, filename, filenameUtf8,
/// mimeType, charset, encoding, isFile, ended (lib/multipart/upload.js makes the object: an
/// array needs no property keys made per part, which were a fifth of the time of a form
/// of 100 small files).
/// Names the client sent as plain parameters come as latin1 strings (their bytes, one
/// char each: JS re-reads them as it is told to); `filename*` (RFC 8187) comes decoded,
/// with `filenameUtf8` true. `ended`: the part before ended in the same call, its sink
/// Arena or Skip; with the arena's length then (null: it did not).
///
/// # Safety
/// `env` must be the running callback's.
unsafe fn head_array(env: Env, head: &PartHead, ended: Option<usize>) -> Result<Value> {
    // SAFETY: the caller's env, for every call below.
    unsafe {
        let name = match &head.name {
            Some(name) => latin1(env, name)?,
            None => null(env)?,
        };
        let (filename, utf8) = match &head.filename {
            Some(f) if f.encoding == NameEncoding::Utf8 => (utf8_lossy(env, &f.bytes)?, true),
            Some(f) => (latin1(env, &f.bytes)?, false),
            None => (null(env)?, false),
        };
        let charset = match &head.charset {
            Some(c) => latin1(env, c)?,
            None => null(env)?,
        };
        let mut values = [ptr::null_mut(); slot::TABLE.len()];
        values[slot::NAME] = name;
        values[slot::FILENAME] = filename;
        values[slot::FILENAME_UTF8] = boolean(env, utf8)?;
        values[slot::MIME_TYPE] = string(env, head.mime_type())?;
        values[slot::CHARSET] = charset;
        values[slot::ENCODING] = latin1(env, head.encoding())?;
        values[slot::IS_FILE] = boolean(env, head.is_file)?;
        values[slot::ENDED] = match ended {
            Some(at) => number(env, at as f64)?,
            None => null(env)?,
        };
        let mut array = ptr::null_mut();
        check(sys::napi_create_array_with_length(
            env,
            values.len(),
            &mut array,
        ))?;
        for (i, value) in values.into_iter().enumerate() {
            check(sys::napi_set_element(env, array, i as u32, value))?;
        }
        Ok(array)
    }
}

/// busboy's decoders: these charsets read as UTF-8, these as latin1 (one byte a char);
/// any other comes back as a Buffer for the JS side's TextDecoder.
fn field_charset(charset: Option<&[u8]>) -> Option<bool> {
    let Some(c) = charset else {
        return Some(true);
    };
    match c {
        b"utf-8" | b"utf8" => Some(true),
        b"latin1" | b"ascii" | b"us-ascii" | b"iso-8859-1" | b"iso8859-1" | b"iso88591"
        | b"iso_8859-1" | b"windows-1252" | b"iso_8859-1:1987" | b"cp1252" | b"x-cp1252" => {
            Some(false)
        }
        _ => None,
    }
}

/// multipartField(upload, bytes) -> the value of the field that just ended: a string (UTF-8
/// or latin1 by its charset, as busboy decodes) or, for another charset, a Buffer; with
/// `bytes` true a field without a charset is a Buffer too (the application's `defCharset`
/// decodes it on the JS side).
///
/// # Safety
/// Called by Node only, as an N-API callback: `env` and `info` are that call's.
pub unsafe extern "C" fn multipart_field(env: Env, info: sys::napi_callback_info) -> Value {
    // SAFETY: Node's env and info for this call; the upload's reference dies with the
    // closure, and no JS runs while it lives.
    unsafe {
        callback(env, || {
            let [handle, bytes] = args::<2>(env, info)?;
            let upload = external::get::<Upload>(env, handle, "multipartField")?;
            let charset = upload.parser().head().charset.as_deref();
            let utf8 = if charset.is_none() && get_bool(env, bytes)? == Some(true) {
                None
            } else {
                field_charset(charset)
            };
            let value = upload.take_field();
            match utf8 {
                Some(true) => utf8_lossy(env, &value),
                Some(false) => latin1(env, &value),
                None => {
                    let mut data = ptr::null_mut();
                    let mut result = ptr::null_mut();
                    check(sys::napi_create_buffer_copy(
                        env,
                        value.len(),
                        value.as_ptr().cast(),
                        &mut data,
                        &mut result,
                    ))?;
                    Ok(result)
                }
            }
        })
    }
}

/// multipartArena(upload) -> every arena file's bytes, back to back, as one Buffer that
/// owns them (files are ranges of it: see multipartFeed's state), or null when empty.
/// The upload's arena is empty after.
#[napi(js_name = "multipartArena", catch_unwind)]
pub fn multipart_arena(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        let arena = external::with(handle, "multipartArena", Upload::take_arena)?;
        if arena.is_empty() {
            return js(&env, Null);
        }
        into_buffer(&env, arena)
    })
}

/// multipartEnd(upload): the last chunk was fed (uWS's isLast).
#[napi(js_name = "multipartEnd", catch_unwind)]
pub fn multipart_end(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        match external::with(handle, "multipartEnd", Upload::end)? {
            Ok(()) => js(&env, Null),
            Err(m) => Err(misuse("multipart", "multipartEnd", m)),
        }
    })
}

/// multipartAbort(upload): releases everything now. Idempotent.
#[napi(js_name = "multipartAbort", catch_unwind)]
pub fn multipart_abort(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    abort_answer(&env, handle, "multipartAbort", Upload::abort)
}

/// multipartError(upload) -> null | `{ code, reason?, max? }` | a body error's fields
/// (body.rs's form): `ERR_BODY_OUT_OF_MEMORY` when memory for a field or the arena could
/// not be had, `ERR_BODY_ENCODING_INVALID` or `ERR_BODY_TOO_LARGE` for an encoded form.
#[napi(js_name = "multipartError", catch_unwind)]
pub fn multipart_error(env: napi::Env, handle: Unknown) -> napi::Result<sys::napi_value> {
    guarded(&env, || {
        let fields = external::with(handle, "multipartError", |upload: &mut Upload| {
            match (upload.body_error(), upload.error()) {
                (Some(e), _) => body_error_object(&env, e).map(Some),
                (None, Some(e)) => error_object(&env, e).map(Some),
                (None, None) => Ok(None),
            }
        })??;
        match fields {
            Some(fields) => Ok(fields.raw()),
            None => js(&env, Null),
        }
    })
}

/// The N-API function that makes a string of bytes in one encoding.
type MakeString = unsafe fn(
    sys::napi_env,
    *const std::ffi::c_char,
    isize,
    *mut sys::napi_value,
) -> sys::napi_status;

/// A JS string of `bytes` through `make`.
///
/// # Safety
/// `env` must be the running callback's.
unsafe fn make_string(env: Env, bytes: &[u8], make: MakeString) -> Result<Value> {
    let mut result = ptr::null_mut();
    // SAFETY: valid env; the pointer and length describe `bytes`.
    check(unsafe {
        make(
            env,
            bytes.as_ptr().cast(),
            bytes.len() as isize,
            &mut result,
        )
    })?;
    Ok(result)
}

/// A JS string of `bytes` read one char per byte.
///
/// # Safety
/// `env` must be the running callback's.
unsafe fn latin1(env: Env, bytes: &[u8]) -> Result<Value> {
    // SAFETY: as the caller promised.
    unsafe { make_string(env, bytes, sys::napi_create_string_latin1) }
}

/// A JS string of `bytes` read as UTF-8, invalid sequences as U+FFFD (V8's decoder, as
/// Buffer's toString('utf8')).
///
/// # Safety
/// `env` must be the running callback's.
unsafe fn utf8_lossy(env: Env, bytes: &[u8]) -> Result<Value> {
    // SAFETY: as the caller promised.
    unsafe { make_string(env, bytes, sys::napi_create_string_utf8) }
}

/// multipartDigests(upload, out) -> bytes written into `out`: the digests of the part that
/// ended last, as digests() writes them (body.rs).
#[napi(js_name = "multipartDigests", catch_unwind)]
pub fn multipart_digests(
    env: napi::Env,
    handle: Unknown,
    out: Unknown,
) -> napi::Result<sys::napi_value> {
    digests_answer(&env, handle, "multipartDigests", Upload::part_digests, out)
}
