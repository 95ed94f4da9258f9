//! The body rules table (__test__/fixtures/body-rules.json), run through the core's `Body`:
//! __test__/body-rules.test.js runs the same cases through lib/accumulator.js, so the rules
//! written in each language give the same outcome, case by case. A case of a rule only JS
//! applies (an invalid content-length header, which the core never sees) has no place in
//! the table.

use std::collections::BTreeMap;

use uws_body::core::{Body, BodyError, BodyOptions, FinishError};

const TABLE: &str = include_str!("../__test__/fixtures/body-rules.json");

/// lib/plan/limits.js's default `maxPreallocated`, as BodyAccumulator passes it.
const MAX_PREALLOCATED: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(map) => map.get(key).filter(|v| **v != Json::Null),
            _ => None,
        }
    }

    fn number(&self) -> u64 {
        match self {
            Json::Number(n) => *n as u64,
            other => panic!("a number, got {other:?}"),
        }
    }

    fn str(&self) -> &str {
        match self {
            Json::String(s) => s,
            other => panic!("a string, got {other:?}"),
        }
    }
}

/// Enough JSON for the table: no escapes in its strings, no exponents in its numbers.
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) {
        self.skip_space();
        assert_eq!(self.text[self.at], byte, "at byte {}", self.at);
        self.at += 1;
    }

    fn string(&mut self) -> String {
        self.expect(b'"');
        let start = self.at;
        while self.text[self.at] != b'"' {
            assert_ne!(self.text[self.at], b'\\', "no escapes in the table");
            self.at += 1;
        }
        self.at += 1;
        String::from_utf8(self.text[start..self.at - 1].to_vec()).expect("UTF-8")
    }

    fn value(&mut self) -> Json {
        self.skip_space();
        match self.text[self.at] {
            b'{' => {
                self.at += 1;
                let mut map = BTreeMap::new();
                while !self.done(b'}') {
                    let key = self.string();
                    self.expect(b':');
                    map.insert(key, self.value());
                }
                Json::Object(map)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                while !self.done(b']') {
                    items.push(self.value());
                }
                Json::Array(items)
            }
            b'"' => Json::String(self.string()),
            _ => {
                let start = self.at;
                while self.text[self.at].is_ascii_alphanumeric() || self.text[self.at] == b'.' {
                    self.at += 1;
                }
                match &self.text[start..self.at] {
                    b"null" => Json::Null,
                    b"true" => Json::Bool(true),
                    b"false" => Json::Bool(false),
                    n => Json::Number(std::str::from_utf8(n).unwrap().parse().expect("a number")),
                }
            }
        }
    }

    /// True at the closing `end` (consumed); else past the comma before the next item.
    fn done(&mut self, end: u8) -> bool {
        self.skip_space();
        match self.text[self.at] {
            b',' => {
                self.at += 1;
                false
            }
            b if b == end => {
                self.at += 1;
                true
            }
            _ => false,
        }
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The fields lib/errors.js gives a body error (src/node/body.rs error_object), as JSON.
fn fields(error: &BodyError) -> BTreeMap<String, Json> {
    let n = |v: u64| Json::Number(v as f64);
    let mut out = BTreeMap::new();
    let mut put = |key: &str, value: Option<Json>| {
        if let Some(value) = value {
            out.insert(key.to_string(), value);
        }
    };
    match error {
        BodyError::TooLarge {
            limit,
            length,
            received,
        } => {
            put("limit", Some(n(*limit)));
            put("length", length.map(n));
            put("expected", length.map(n));
            put("received", Some(n(*received)));
        }
        BodyError::LengthMismatch { expected, received } => {
            put("length", Some(n(*expected)));
            put("expected", Some(n(*expected)));
            put("received", Some(n(*received)));
        }
        BodyError::DigestMismatch { header, algorithm } => {
            put("header", Some(Json::String((*header).to_string())));
            put("algorithm", Some(Json::String((*algorithm).to_string())));
        }
        BodyError::Aborted { expected, received } => {
            put("length", expected.map(n));
            put("expected", expected.map(n));
            put("received", Some(n(*received)));
        }
        BodyError::EncodingUnsupported { encoding } => {
            put("encoding", Some(Json::String(encoding.clone())));
        }
        BodyError::EncodingInvalid { encoding, reason } => {
            put("encoding", Some(Json::String(encoding.to_string())));
            put("reason", Some(Json::String(reason.name().to_string())));
        }
        BodyError::OutOfMemory { requested } => put("requested", Some(n(*requested))),
        BodyError::OverBudget { requested } => put("requested", Some(n(*requested))),
    }
    out
}

/// The case run through a `Body`: where its error showed, the error, and the body's length.
fn run(case: &Json) -> (Option<String>, Option<BodyError>, Option<usize>) {
    let options = BodyOptions {
        content_length: case.get("length").map(Json::number),
        limit: case.get("limit").expect("a limit").number(),
        max_preallocated: MAX_PREALLOCATED,
        content_encoding: case.get("encoding").map(|e| e.str().to_string()),
        decode: case.get("inflate") != Some(&Json::Bool(false)),
        known_minimum: 0,
        digest: Default::default(),
    };
    let mut body = Body::new(&options);
    let mut at = body.error().map(|_| "create".to_string());
    let Some(Json::Array(chunks)) = case.get("chunks") else {
        panic!("chunks")
    };
    for (i, chunk) in chunks.iter().enumerate() {
        let bytes = match chunk {
            Json::Number(n) => vec![b'a'; *n as usize],
            other => hex(other.str()),
        };
        let accepted = body.push(&bytes).expect("no misuse");
        if at.is_some() {
            assert!(!accepted, "push {} after the error", i + 1);
        } else if !accepted {
            at = Some(format!("push {}", i + 1));
        }
    }
    let mut length = None;
    if case.get("end").map(Json::str) == Some("abort") {
        body.abort();
        at = at.or_else(|| Some("abort".to_string()));
    } else {
        match body.finish() {
            Ok(block) => length = Some(block.len()),
            Err(FinishError::Body(error)) => {
                assert_eq!(Some(&error), body.error(), "finish gives the body's error");
                at = at.or_else(|| Some("finish".to_string()));
            }
            Err(FinishError::Misuse(m)) => panic!("{m:?}"),
        }
    }
    (at, body.error().cloned(), length)
}

#[test]
fn the_core_gives_every_outcome_of_the_body_rules_table() {
    let table = Parser {
        text: TABLE.as_bytes(),
        at: 0,
    }
    .value();
    let Some(Json::Array(cases)) = table.get("cases") else {
        panic!("cases")
    };
    assert!(cases.len() > 20, "the whole table was read");
    for case in cases {
        let name = case.get("name").expect("a name").str();
        let (at, error, length) = run(case);
        match case.get("error") {
            None => {
                assert_eq!(error, None, "{name}");
                assert_eq!(
                    length,
                    Some(case.get("body").expect("body").number() as usize),
                    "{name}"
                );
            }
            Some(expected) => {
                let error = error.unwrap_or_else(|| panic!("{name}: no error"));
                assert_eq!(
                    at.as_deref(),
                    Some(expected.get("at").unwrap().str()),
                    "{name}: where"
                );
                assert_eq!(error.code(), expected.get("code").unwrap().str(), "{name}");
                assert_eq!(
                    u64::from(error.status()),
                    expected.get("status").unwrap().number(),
                    "{name}"
                );
                let Some(Json::Object(want)) = expected.get("fields") else {
                    panic!("{name}: fields")
                };
                assert_eq!(&fields(&error), want, "{name}: the error's fields");
            }
        }
    }
}
