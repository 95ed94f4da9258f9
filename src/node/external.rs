//! Rust values owned by JS externals, and finding them again. Any JS value can reach the
//! native functions, so a value is read back only from an external carrying the tag it
//! was created with: another addon's external, or one holding another type, is refused.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::sys;

use super::raw::{check, finalizer, type_error, type_of, Env, Result, Thrown, Value};
use crate::core::multipart::Upload;
use crate::core::{Body, BodyStream};

/// A type whose values JS holds through externals tagged as this type's (`create`), and
/// hands back to the native functions (`get`).
///
/// # Safety
/// `TAG` must be this type's alone: `get` reads any external carrying it as a `Self`.
pub unsafe trait Tagged: Sized + 'static {
    /// A random 128-bit value, as N-API's type tags are meant to be.
    const TAG: &'static sys::napi_type_tag;
    /// What a value of this type is called in the TypeError for any other value
    /// (`push: not a body`).
    const WHAT: &'static str;
}

// SAFETY: a random tag, no other type's (checked below, with the crate's other tags).
unsafe impl Tagged for Body {
    const TAG: &'static sys::napi_type_tag = &sys::napi_type_tag {
        lower: 0x5f3c_9a1e_77d2_4b08,
        upper: 0xb4e1_06c3_2a9f_d815,
    };
    const WHAT: &'static str = "a body";
}

// SAFETY: a random tag, no other type's (checked below, with the crate's other tags).
unsafe impl Tagged for BodyStream {
    const TAG: &'static sys::napi_type_tag = &sys::napi_type_tag {
        lower: 0x2d91_c4e7_0b5a_f316,
        upper: 0x8a07_e3d2_5f6c_19b4,
    };
    const WHAT: &'static str = "a body stream";
}

// SAFETY: a random tag, no other type's (checked below, with the crate's other tags).
unsafe impl Tagged for Upload {
    const TAG: &'static sys::napi_type_tag = &sys::napi_type_tag {
        lower: 0x7c2e_51a9_d04b_36f8,
        upper: 0x13f6_a88d_e950_2c7b,
    };
    const WHAT: &'static str = "a multipart body";
}

// probe.rs's externals (`--features call-cost` builds only).
#[cfg(feature = "call-cost")]
// SAFETY: a random tag, no other type's (checked below, with the crate's other tags).
unsafe impl Tagged for u64 {
    const TAG: &'static sys::napi_type_tag = &sys::napi_type_tag {
        lower: 0x0c7d_21f4_9e36_a85b,
        upper: 0x5b19_e6a0_3f82_d4c7,
    };
    const WHAT: &'static str = "a probe";
}

// `Tagged`'s promise, checked when the crate compiles: no two of its tags are equal.
const _: () = {
    let tags = [
        Body::TAG,
        BodyStream::TAG,
        Upload::TAG,
        #[cfg(feature = "call-cost")]
        u64::TAG,
    ];
    let mut i = 0;
    while i < tags.len() {
        let mut j = i + 1;
        while j < tags.len() {
            let same = tags[i].lower == tags[j].lower && tags[i].upper == tags[j].upper;
            assert!(!same, "two Tagged types share a tag");
            j += 1;
        }
        i += 1;
    }
};

/// A new external owning `value`, tagged as a `T`'s; the value is dropped when the
/// external is collected.
pub fn create<T: Tagged>(env: &napi::Env, value: T) -> Result<Value> {
    let env = env.raw();
    let data = Box::into_raw(Box::new(value));
    let mut result = ptr::null_mut();
    // SAFETY: a live env (napi-rs's); `data` is a live Box that the finalizer will own.
    let status = unsafe {
        sys::napi_create_external(
            env,
            data.cast(),
            Some(drop_boxed::<T>),
            ptr::null_mut(),
            &mut result,
        )
    };
    if status != sys::Status::napi_ok {
        // No external exists, so no finalizer will run: the value is still ours.
        // SAFETY: `data` came from Box::into_raw above and was not handed to Node.
        drop(unsafe { Box::from_raw(data) });
        return Err(Thrown::Status(status));
    }
    // From here the external owns the value: on any failure its finalizer frees it.
    // SAFETY: valid env, an external just made, a static tag.
    check(unsafe { sys::napi_type_tag_object(env, result, T::TAG) })?;
    Ok(result)
}

thread_local! {
    /// True while `with` lends a value out: building a JS value can run JS (a setter on
    /// Object.prototype), and that JS must not reach the value lent.
    static LENT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on the `T` behind `value`, for a `#[napi]` export's argument: a TypeError
/// `{call}: not {T::WHAT}` for any other value, and an internal error if JS that `f`
/// ran calls back into this one.
pub fn with<T: Tagged, R>(
    value: Unknown<'_>,
    call: &str,
    f: impl FnOnce(&mut T) -> R,
) -> Result<R> {
    let value = value.value();
    // SAFETY: napi-rs gives an export its arguments with the env of its own call, on its
    // thread; the reference lives while `f` runs, and `LENT` refuses any other meanwhile.
    let lent = unsafe { get::<T>(value.env, value.value, call)? };
    struct Lent;
    impl Drop for Lent {
        fn drop(&mut self) {
            LENT.set(false); // on a panic too
        }
    }
    LENT.set(true);
    let _lent = Lent;
    Ok(f(lent))
}

fn internal() -> Thrown {
    Thrown::Error {
        code: "ERR_UWS_BODY_INTERNAL",
        message: "uws-body: internal error (a handle reached while it was in use)".into(),
    }
}

/// The `T` behind an external tagged as a `T`'s; for any other value a TypeError,
/// `{call}: not {T::WHAT}`.
///
/// # Safety
/// `env` must be the running callback's, and the reference must not outlive the callback
/// nor live while JS runs.
pub unsafe fn get<'a, T: Tagged>(env: Env, value: Value, call: &str) -> Result<&'a mut T> {
    if LENT.get() {
        return Err(internal());
    }
    let refused = || type_error(format!("{call}: not {}", T::WHAT));
    // SAFETY: valid env and value.
    if unsafe { type_of(env, value)? } != sys::ValueType::napi_external {
        return Err(refused());
    }
    let mut tagged = false;
    // SAFETY: valid env, an external value, a static tag; `tagged` outlives the call.
    check(unsafe { sys::napi_check_object_type_tag(env, value, T::TAG, &mut tagged) })?;
    if !tagged {
        return Err(refused());
    }
    let mut data = ptr::null_mut();
    // SAFETY: an external; `data` outlives the call.
    check(unsafe { sys::napi_get_value_external(env, value, &mut data) })?;
    if data.is_null() {
        return Err(refused());
    }
    // SAFETY: only create::<T> tags externals with `T::TAG` (no other type's: `Tagged`),
    // and their data is a live Box<T> until the external's finalizer, which cannot run
    // while JS holds `value`. JS is single-threaded and none runs during this callback, so
    // this is the only reference.
    Ok(unsafe { &mut *data.cast::<T>() })
}

/// The finalizer of create::<T>'s externals.
///
/// # Safety
/// Called by Node only, once, as the finalizer of the external `data` was given to.
unsafe extern "C" fn drop_boxed<T>(env: Env, data: *mut c_void, _hint: *mut c_void) {
    let free = || {
        // SAFETY: `data` is the Box that create::<T> gave to this external alone, and Node
        // calls an external's finalizer once.
        drop(unsafe { Box::from_raw(data.cast::<T>()) });
    };
    // SAFETY: Node's env for this finalizer.
    unsafe { finalizer(env, free) };
}
