//! The error vocabulary lives in lib/native/errors.js (`KINDS`: code -> status, type, message):
//! every error of both tiers is built from it. The core names codes too (and, for its
//! own tests and fuzzers, statuses and types): this test reads that table and checks that
//! every error the core can report agrees with it, so a code added on one side only, or a
//! status changed on one side only, fails here.

use std::collections::HashMap;

use super::error::{BodyError, Invalid};
use super::multipart::{BoundaryProblem, HeaderProblem, Limit, MultipartError, Where};

const ERRORS_JS: &str = include_str!("../../lib/native/errors.js");

/// `CODE: [status, 'type', ...]` lines of KINDS.
fn table() -> HashMap<&'static str, (u16, &'static str)> {
    let start = ERRORS_JS
        .find("const KINDS = {")
        .expect("KINDS in lib/native/errors.js");
    let end = start + ERRORS_JS[start..].find("\n}\n").expect("the end of KINDS");
    let mut kinds = HashMap::new();
    for line in ERRORS_JS[start..end].lines().map(str::trim) {
        let Some((code, rest)) = line.split_once(": [") else {
            continue;
        };
        let (status, rest) = rest.split_once(", '").expect("a status then a type");
        let kind = rest.split('\'').next().expect("a quoted type");
        kinds.insert(code, (status.parse().expect("a numeric status"), kind));
    }
    kinds
}

fn body_errors() -> Vec<BodyError> {
    vec![
        BodyError::TooLarge {
            limit: 1,
            length: None,
            received: 2,
        },
        BodyError::LengthMismatch {
            expected: 1,
            received: 2,
        },
        BodyError::EncodingUnsupported {
            encoding: "compress".into(),
        },
        BodyError::EncodingInvalid {
            encoding: "gzip",
            reason: Invalid::Corrupt,
        },
        BodyError::Aborted {
            expected: None,
            received: 0,
        },
        BodyError::OutOfMemory { requested: 1 },
        BodyError::DigestMismatch {
            header: "content-digest",
            algorithm: "sha256",
        },
        BodyError::OverBudget { requested: 1 },
    ]
}

fn multipart_errors() -> Vec<MultipartError> {
    let mut all = vec![
        MultipartError::NotFormData,
        MultipartError::Boundary(BoundaryProblem::Missing),
        MultipartError::Header(HeaderProblem::Syntax),
        MultipartError::Truncated(Where::Body),
    ];
    for limit in [
        Limit::PartCount,
        Limit::FileSize,
        Limit::FileCount,
        Limit::FieldKey,
        Limit::FieldValue,
        Limit::FieldCount,
        Limit::HeaderPairs,
        Limit::HeaderSize,
    ] {
        all.push(MultipartError::Limit { limit, max: 1 });
    }
    all
}

#[test]
fn every_core_error_is_in_the_js_table_with_its_status_and_type() {
    let kinds = table();
    assert!(
        kinds.len() > 20,
        "parsed {} codes from lib/native/errors.js",
        kinds.len()
    );
    for e in body_errors() {
        let got = kinds
            .get(e.code())
            .unwrap_or_else(|| panic!("{} is not in lib/native/errors.js", e.code()));
        assert_eq!(*got, (e.status(), e.kind()), "{e:?}");
    }
    for e in multipart_errors() {
        let got = kinds
            .get(e.code())
            .unwrap_or_else(|| panic!("{} is not in lib/native/errors.js", e.code()));
        assert_eq!(got.0, e.status(), "{e:?}");
    }
}
