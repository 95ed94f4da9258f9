//! The numbers the JS layer and the addon pass each other, each named once here; lib/
//! names them once too, in lib/native/protocol.js. The addon exports these tables as the frozen
//! object `protocol` ({ SINK: { SKIP: 0, ... }, ... }) so that __test__/protocol.test.js
//! checks the two sides agree, name for name and value for value. The callbacks use the
//! constants themselves: nothing is looked up per call.

use napi::bindgen_prelude::*;

/// Defines one table: a module of constants, and `TABLE`, its names and values for JS.
macro_rules! table {
    ($(#[$doc:meta])* $group:ident: $ty:ty { $($(#[$item_doc:meta])* $name:ident = $value:expr,)* }) => {
        $(#[$doc])*
        pub mod $group {
            $($(#[$item_doc])* pub const $name: $ty = $value;)*
            /// The names and values, for the addon's `protocol` export.
            pub const TABLE: &[(&str, f64)] = &[$((stringify!($name), $name as f64),)*];
        }
    };
}

table! {
    /// multipartFeed's `sink` argument: where the current part's data goes (core's `Sink`).
    sink: u32 {
        SKIP = 0,
        FIELD = 1,
        ARENA = 2,
        /// core's `Sink::Room`: into the `room` Uint8Array.
        STREAM = 3,
        PENDING = 4,
    }
}

table! {
    /// multipartFeed's answer (core's `Outcome`); PART comes as the part's head instead.
    outcome: u32 {
        PART = 1,
        DATA = 2,
        PART_END = 3,
        NEED_INPUT = 4,
        DONE = 5,
        FAILED = 6,
    }
}

table! {
    /// finishString's `encoding` argument; any other number reads as UTF8.
    string_encoding: u32 {
        UTF8 = 0,
        LATIN1 = 1,
        UTF16LE = 2,
        // UTF-8, but text that is not one-byte comes back as the body's Buffer, for
        // Buffer.toString (simdutf from Node 24, where V8's own decoder is slower).
        UTF8_OR_BUFFER = 3,
    }
}

table! {
    /// The slots of the array multipartFeed gives for a new part's head.
    head: usize {
        NAME = 0,
        FILENAME = 1,
        FILENAME_UTF8 = 2,
        MIME_TYPE = 3,
        CHARSET = 4,
        ENCODING = 5,
        IS_FILE = 6,
        /// The part before ended in the same call (a SKIP or ARENA part): the arena's
        /// length at its end; null when none did.
        ENDED = 7,
    }
}

table! {
    /// The slots of the array sizes() gives.
    sizes: usize {
        RECEIVED = 0,
        LENGTH = 1,
        CAPACITY = 2,
    }
}

table! {
    /// The bits of create()'s and streamCreate()'s `requested` digests.
    digest: u32 {
        SHA256 = 1,
        SHA512 = 2,
        MD5 = 4,
        CRC32C = 8,
    }
}

table! {
    /// The slots of multipartCreate's `form` Float64Array: the limits the native parser
    /// applies (inclusive maxima, Infinity: none), the arena's first capacity, the declared
    /// length (< 0: unknown), an encoded form's decoded limit, each part's digests to make
    /// (`digest` bits). SLOTS: how many there are.
    form: usize {
        FIELD_SIZE = 0,
        FIELDS = 1,
        FILE_SIZE = 2,
        FILES = 3,
        HEADER_PAIRS = 4,
        HEADER_SIZE = 5,
        PREALLOCATE = 6,
        EXPECTED = 7,
        DECODED_LIMIT = 8,
        REQUESTED = 9,
        SLOTS = 10,
    }
}

/// Every table, by the name lib/native/protocol.js gives it.
const TABLES: [(&str, &[(&str, f64)]); 7] = [
    ("SINK", sink::TABLE),
    ("OUTCOME", outcome::TABLE),
    ("STRING_ENCODING", string_encoding::TABLE),
    ("HEAD", head::TABLE),
    ("SIZES", sizes::TABLE),
    ("DIGEST", digest::TABLE),
    ("FORM", form::TABLE),
];

/// The `protocol` export: every table as a frozen object of frozen objects.
pub fn export(env: &Env) -> Result<Object<'_>> {
    let mut protocol = Object::new(env)?;
    for (group, table) in TABLES {
        let mut names = Object::new(env)?;
        for (name, value) in table {
            names.set_named_property(name, *value)?;
        }
        names.freeze()?;
        protocol.set_named_property(group, names)?;
    }
    protocol.freeze()?;
    Ok(protocol)
}
