//! A body's UTF-8 made one-byte when it can be. V8 stores a string whose characters are
//! all U+0000-U+00FF in one byte each, and makes one from such bytes with a copy (N-API's
//! latin1 strings); from UTF-8 it decodes byte by byte, which on Node 24 is slower than
//! Node's own Buffer.toString('utf8') (simdutf; docs/performance.md, row 'UTF-8 decoding'). Most text bodies are ASCII (then the
//! bytes are the string's already) or nearly (a few U+0080-U+00FF characters, two bytes
//! each in UTF-8, one in Latin-1). Anything else, invalid UTF-8 included, is left to V8's
//! decoder, so the string is always the one it would make.

/// The length of the one-byte (Latin-1) form of the UTF-8 in `bytes`, which is rewritten
/// in place to it (ASCII is its own form: nothing is written); `None` if `bytes` is not
/// valid UTF-8 whose characters are all at most U+00FF (then `bytes` is unchanged).
pub fn utf8_to_latin1_in_place(bytes: &mut [u8]) -> Option<usize> {
    let Some(first) = first_non_ascii(bytes) else {
        return Some(bytes.len());
    };
    // One pass, rewriting as it checks; a body that turns out not to fit is put back as it
    // was (undo). Checking the whole body first cost about as much as the rewrite, for the
    // rare body that does not fit (docs/performance.md, row 'one-pass Latin-1 rewrite').
    let (mut read, mut write) = (first, first);
    while read < bytes.len() {
        let b = bytes[read];
        if b < 0x80 {
            let run = 1 + ascii_run(&bytes[read + 1..]);
            bytes.copy_within(read..read + run, write);
            read += run;
            write += run;
        } else if (b == 0xC2 || b == 0xC3) && bytes.get(read + 1).is_some_and(|c| c & 0xC0 == 0x80)
        {
            // 110x_xxyy 10yy_yyyy with x = 0001 or 0011: the code point's low 8 bits.
            bytes[write] = ((b & 0x03) << 6) | (bytes[read + 1] & 0x3F);
            read += 2;
            write += 1;
        } else {
            undo(&mut bytes[first..read], write - first);
            return None;
        }
    }
    Some(write)
}

/// Puts back the UTF-8 the rewrite made into Latin-1: `bytes[..latin1]` is the Latin-1 of
/// what was all of `bytes`. Each byte >= 0x80 becomes its two UTF-8 bytes again, working
/// from the end: the UTF-8 still to come is as long as the Latin-1 before it plus one byte
/// per character >= 0x80 among them, so every write lands on a byte already read.
fn undo(bytes: &mut [u8], latin1: usize) {
    let (mut from, mut to) = (latin1, bytes.len());
    while from > 0 {
        let run = ascii_run_back(&bytes[..from]);
        bytes.copy_within(from - run..from, to - run);
        from -= run;
        to -= run;
        if from == 0 {
            break;
        }
        from -= 1;
        let c = bytes[from];
        to -= 2;
        bytes[to] = 0xC0 | (c >> 6);
        bytes[to + 1] = 0x80 | (c & 0x3F);
    }
}

/// The index of the first byte >= 0x80; `None` when every byte is ASCII. Blocks of 64
/// bytes at a time, which the compiler turns into vector ORs.
fn first_non_ascii(bytes: &[u8]) -> Option<usize> {
    let mut blocks = bytes.chunks_exact(64);
    let mut at = 0;
    for block in blocks.by_ref() {
        if block.iter().fold(0u8, |acc, &b| acc | b) & 0x80 != 0 {
            return Some(at + ascii_run(block));
        }
        at += 64;
    }
    let rest = blocks.remainder();
    let run = ascii_run(rest);
    (run < rest.len()).then_some(at + run)
}

/// How many bytes at the start of `bytes` are ASCII: 8 at a time, then one by one.
fn ascii_run(bytes: &[u8]) -> usize {
    let mut n = 0;
    for word in bytes.chunks_exact(8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        if w & 0x8080_8080_8080_8080 != 0 {
            return n + (w & 0x8080_8080_8080_8080).trailing_zeros() as usize / 8;
        }
        n += 8;
    }
    n + bytes[n..].iter().take_while(|&&b| b < 0x80).count()
}

/// How many bytes at the end of `bytes` are ASCII: 8 at a time, then one by one.
fn ascii_run_back(bytes: &[u8]) -> usize {
    let mut n = 0;
    for word in bytes.rchunks_exact(8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        if w & 0x8080_8080_8080_8080 != 0 {
            return n + (w & 0x8080_8080_8080_8080).leading_zeros() as usize / 8;
        }
        n += 8;
    }
    n + bytes[..bytes.len() - n]
        .iter()
        .rev()
        .take_while(|&&b| b < 0x80)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What V8 would make of the bytes, as Latin-1 bytes, if it is one-byte text.
    fn expected(bytes: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(bytes).ok()?;
        text.chars()
            .map(|c| u8::try_from(u32::from(c)).ok())
            .collect()
    }

    fn check(bytes: &[u8]) {
        let mut copy = bytes.to_vec();
        let got = utf8_to_latin1_in_place(&mut copy);
        match expected(bytes) {
            Some(latin1) => assert_eq!(got.map(|n| &copy[..n]), Some(&latin1[..]), "{bytes:?}"),
            None => {
                assert_eq!(got, None, "{bytes:?}");
                assert_eq!(copy, bytes, "unchanged when it does not fit");
            }
        }
    }

    #[test]
    fn one_byte_text_is_compacted_and_anything_else_left_alone() {
        for s in [
            "",
            "a",
            "café",
            "ÿ",
            "\u{80}",
            "déjà vu",
            "naïve — no",
            "漢字",
            "a\u{100}",
        ] {
            check(s.as_bytes());
        }
        // Invalid: a lone lead byte, a bad continuation, overlong (C0/C1), a truncated end,
        // a lone continuation byte.
        for bytes in [
            &b"\xC3"[..],
            b"a\xC3a",
            b"\xC0\x80",
            b"\xC1\xBF",
            b"caf\xC3",
            b"\x80",
            b"\xC3\xC3\xA9",
        ] {
            check(bytes);
        }
    }

    proptest::proptest! {
        /// Any mix of ASCII runs, one-byte characters, wider ones and invalid bytes, in
        /// any order: the Latin-1 V8 would make, or the bytes untouched.
        #[test]
        fn any_text_is_compacted_exactly_or_left_as_it_was(
            pieces in proptest::collection::vec((0usize..6, 0usize..20), 0..40)
        ) {
            let mut bytes = Vec::new();
            for (kind, n) in pieces {
                match kind {
                    0 | 1 => bytes.extend(std::iter::repeat_n(b'a' + (n as u8 % 26), n)),
                    2 => bytes.extend_from_slice("é".as_bytes()),
                    3 => bytes.extend_from_slice("\u{80}\u{FF}".as_bytes()),
                    4 => bytes.extend_from_slice(if n % 2 == 0 { "€" } else { "\u{100}" }.as_bytes()),
                    _ => bytes.push([0x80, 0xC3, 0xC0, 0xFF][n % 4]),
                }
            }
            check(&bytes);
        }
    }

    #[test]
    fn a_body_that_stops_fitting_late_is_put_back_whole() {
        // Accents and ASCII runs of every length around the word size, then a character
        // past U+00FF or an invalid byte: everything before it was rewritten, and undone.
        for run in [0usize, 1, 7, 8, 9, 16, 17, 40] {
            for accents in [1usize, 2, 9, 30] {
                let mut s = String::new();
                for i in 0..accents {
                    s.push_str(&"a".repeat(run));
                    s.push(if i % 2 == 0 { 'é' } else { '\u{FF}' });
                }
                for end in ["€", "漢", "\u{100}"] {
                    check(format!("{s}{end}").as_bytes());
                    check(format!("{s}{end}{s}").as_bytes());
                }
                let mut bad = s.clone().into_bytes();
                bad.extend_from_slice(b"\xC3x");
                check(&bad);
                let mut bad = s.into_bytes();
                bad.push(0xC3);
                check(&bad);
            }
        }
    }

    #[test]
    fn every_position_and_length_around_the_blocks() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 200] {
            for at in (0..len).step_by(5) {
                for insert in ["é", "\u{FF}", "\u{100}", "\u{7F}"] {
                    let mut s = "x".repeat(len);
                    s.insert_str(at, insert);
                    check(s.as_bytes());
                    let mut bad = s.clone().into_bytes();
                    bad.insert(at, 0xC3);
                    check(&bad);
                }
            }
        }
    }
}
