//! Bytes <-> text codecs: decimal, base64, hex; imports nothing from the crate.
//!
//! One section per codec. Encoders that produce text for a writer hand it
//! over piece by piece to a `put` callback, so this module needs no writer
//! type of its own.

use core::fmt;

// ---------------------------------------------------------------------------
// Decimal
// ---------------------------------------------------------------------------

/// The decimal digits of `n`, right-aligned in `buf`.
///
/// On 32-bit targets the 64-bit case divides 16-bit limbs with 32-bit
/// arithmetic, so neither the `u64` division routine nor core's integer
/// formatting is linked (about 1.5 KB of flash on a Cortex-M).
pub(crate) fn decimal(n: u64, buf: &mut [u8; 20]) -> &[u8] {
    decimal_with(n, buf, cfg!(not(target_pointer_width = "64")))
}

/// [`decimal`], by 16-bit limbs when `limbs` (the other branch is
/// compiled out, as `limbs` is a constant).
fn decimal_with(n: u64, buf: &mut [u8; 20], limbs: bool) -> &[u8] {
    let mut at = buf.len();
    let mut put = |buf: &mut [u8; 20], d: u32| {
        at = at.saturating_sub(1);
        if let Some(slot) = buf.get_mut(at) {
            *slot = b'0' + (d % 10) as u8;
        }
    };
    let mut rest = n;
    if limbs {
        while rest > u64::from(u32::MAX) {
            // rest / 10_000 by long division over 16-bit limbs: every
            // partial dividend is below 10_000 << 16, so u32 arithmetic
            // suffices.
            let (mut q, mut rem) = (0u64, 0u32);
            for shift in [48u32, 32, 16, 0] {
                let cur = (rem << 16) | ((rest >> shift) as u32 & 0xffff);
                q |= u64::from(cur / 10_000) << shift;
                rem = cur % 10_000;
            }
            rest = q;
            for _ in 0..4 {
                put(buf, rem);
                rem /= 10;
            }
        }
        let mut small = rest as u32;
        loop {
            put(buf, small % 10);
            small /= 10;
            if small == 0 {
                break;
            }
        }
    } else {
        loop {
            put(buf, (rest % 10) as u32);
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
    }
    buf.get(at..).unwrap_or_default()
}

/// An integer for `format_args!` that prints without core's integer
/// formatting: `format_args!("counted {}", Decimal::from(n))`.
///
/// Core's `{}` for integers brings padding support and, for 64-bit values on
/// a 32-bit target, the 64-bit division routine: about 1.5 KB of flash that a
/// firmware image saves when every integer it formats goes through this
/// (picomcp's own messages do). Width and fill flags are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal {
    negative: bool,
    magnitude: u64,
}

macro_rules! decimal_from {
    (unsigned: $($u:ty),*; signed: $($i:ty),*) => {
        $(impl From<$u> for Decimal {
            fn from(n: $u) -> Decimal {
                Decimal { negative: false, magnitude: n as u64 }
            }
        })*
        $(impl From<$i> for Decimal {
            fn from(n: $i) -> Decimal {
                Decimal { negative: n < 0, magnitude: (n as i64).unsigned_abs() }
            }
        })*
    };
}

decimal_from!(unsigned: u8, u16, u32, u64, usize; signed: i8, i16, i32, i64, isize);

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        let mut buf = [0u8; 20];
        let digits = decimal(self.magnitude, &mut buf);
        f.write_str(core::str::from_utf8(digits).unwrap_or("0"))
    }
}

// ---------------------------------------------------------------------------
// Base64
// ---------------------------------------------------------------------------

/// A base64 alphabet (RFC 4648 §4 and §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alphabet {
    /// `+` and `/`.
    Standard,
    /// `-` and `_` (URL- and filename-safe).
    Url,
}

/// The value of one base64 symbol in `alphabet`.
pub(crate) fn base64_value(c: u8, alphabet: Alphabet) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' if alphabet == Alphabet::Standard => 62,
        b'/' if alphabet == Alphabet::Standard => 63,
        b'-' if alphabet == Alphabet::Url => 62,
        b'_' if alphabet == Alphabet::Url => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Encode `data` in base64 (`url`: the URL-safe alphabet; `pad`: with `=`
/// padding), three bytes at a time, handing each group of symbols to `put`
/// (a trait object: one copy of the encoder, whoever receives the symbols).
pub(crate) fn base64_encode(data: &[u8], url: bool, pad: bool, put: &mut dyn FnMut(&[u8])) {
    const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let alphabet = if url { URL } else { STANDARD };
    let sym = |i: u32| alphabet.get((i & 63) as usize).copied().unwrap_or(b'=');
    let mut chunks = data.chunks_exact(3);
    for c in &mut chunks {
        if let [a, b, c] = *c {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c);
            put(&[sym(n >> 18), sym(n >> 12), sym(n >> 6), sym(n)]);
        }
    }
    let group = match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            [sym(n >> 18), sym(n >> 12), b'=', b'=']
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            [sym(n >> 18), sym(n >> 12), sym(n >> 6), b'=']
        }
        _ => return,
    };
    let symbols = if pad {
        4
    } else {
        group.iter().position(|&c| c == b'=').unwrap_or(4)
    };
    put(group.get(..symbols).unwrap_or_default());
}

/// Encode `data` in base64 (standard alphabet, padded).
pub(crate) fn base64(data: &[u8], put: &mut dyn FnMut(&[u8])) {
    base64_encode(data, false, true, put);
}

/// Decode unpadded base64 of `alphabet` in place (each output byte lands
/// at or before the symbols it came from); the decoded length. `None` on a
/// symbol outside the alphabet or a length of 4k + 1 symbols.
pub(crate) fn base64_decode_in_place(buf: &mut [u8], alphabet: Alphabet) -> Option<usize> {
    let (mut acc, mut bits, mut out) = (0u32, 0u8, 0usize);
    for i in 0..buf.len() {
        acc = (acc << 6) | base64_value(*buf.get(i)?, alphabet)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            *buf.get_mut(out)? = (acc >> bits) as u8;
            out += 1;
        }
    }
    // Six bits left over: one symbol too many for a whole byte. Two or four
    // left over must be zero: one text per byte string (canonical), so an
    // edited last symbol is never the same token.
    (bits < 6 && acc & ((1 << bits) - 1) == 0).then_some(out)
}

/// A streaming base64 decoder (trailing `=` ignored); yields `Err(())` on a
/// symbol outside the alphabet, then ends.
#[derive(Clone, Debug)]
pub(crate) struct Base64Decoder<'a> {
    rest: &'a [u8],
    alphabet: Alphabet,
    acc: u32,
    bits: u8,
}

impl<'a> Base64Decoder<'a> {
    pub(crate) fn new(text: &'a [u8], alphabet: Alphabet) -> Self {
        let end = text.iter().rposition(|&b| b != b'=').map_or(0, |p| p + 1);
        Self {
            rest: text.get(..end).unwrap_or_default(),
            alphabet,
            acc: 0,
            bits: 0,
        }
    }
}

impl Iterator for Base64Decoder<'_> {
    type Item = Result<u8, ()>;

    fn next(&mut self) -> Option<Result<u8, ()>> {
        while self.bits < 8 {
            let (&c, rest) = self.rest.split_first()?;
            self.rest = rest;
            let Some(v) = base64_value(c, self.alphabet) else {
                self.rest = &[];
                return Some(Err(()));
            };
            self.acc = (self.acc << 6) | v;
            self.bits += 6;
        }
        self.bits -= 8;
        Some(Ok((self.acc >> self.bits) as u8))
    }
}

// ---------------------------------------------------------------------------
// Hex
// ---------------------------------------------------------------------------

/// The lowercase hex digit of the low four bits of `v`.
pub(crate) fn hex_digit(v: u8) -> u8 {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    DIGITS.get(usize::from(v & 0xf)).copied().unwrap_or(b'0')
}

/// The value of one hex digit, either case.
pub(crate) fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `bytes` as lowercase hex, two digits a byte (`M` = 2 × `N`).
pub(crate) fn hex_encode<const N: usize, const M: usize>(bytes: &[u8; N]) -> [u8; M] {
    let mut text = [b'0'; M];
    for (pair, &byte) in text.chunks_exact_mut(2).zip(bytes) {
        if let [hi, lo] = pair {
            (*hi, *lo) = (hex_digit(byte >> 4), hex_digit(byte));
        }
    }
    text
}

/// `N` bytes from exactly 2 × `N` hex digits (either case).
pub(crate) fn hex_decode<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != 2 * N {
        return None;
    }
    let mut bytes = [0u8; N];
    for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
        let [hi, lo] = *pair else { return None };
        *byte = (hex_value(hi)? << 4) | hex_value(lo)?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    extern crate std;

    #[test]
    fn base64_round_trips_in_every_form() {
        use std::vec::Vec;
        // Every length to past a dozen 3-byte groups (five under Miri).
        for len in 0..if cfg!(miri) { 16 } else { 40usize } {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            for url in [false, true] {
                let mut padded = Vec::new();
                base64_encode(&data, url, true, &mut |s| padded.extend_from_slice(s));
                assert_eq!(padded.len() % 4, 0);
                let mut bare = Vec::new();
                base64_encode(&data, url, false, &mut |s| bare.extend_from_slice(s));
                assert_eq!(
                    bare,
                    padded
                        .iter()
                        .copied()
                        .filter(|&c| c != b'=')
                        .collect::<Vec<_>>()
                );
                let alphabet = if url {
                    Alphabet::Url
                } else {
                    Alphabet::Standard
                };
                let streamed: Result<Vec<u8>, ()> = Base64Decoder::new(&padded, alphabet).collect();
                assert_eq!(streamed.as_deref(), Ok(&data[..]));
                let unpadded: Result<Vec<u8>, ()> = Base64Decoder::new(&bare, alphabet).collect();
                assert_eq!(unpadded.as_deref(), Ok(&data[..]));
                let mut buf = bare.clone();
                let n = base64_decode_in_place(&mut buf, alphabet).unwrap();
                assert_eq!(&buf[..n], &data[..]);
            }
        }
        // The other alphabet's symbols are refused where only one is allowed.
        assert_eq!(
            base64_decode_in_place(&mut b"a+b/".to_vec(), Alphabet::Url),
            None
        );
        assert_eq!(
            base64_decode_in_place(&mut b"a-b_".to_vec(), Alphabet::Standard),
            None
        );
        // Unused trailing bits must be zero: "AA" is one zero byte, "AB"
        // (the same byte with a low bit set that no byte holds) is refused.
        for (text, want) in [
            (&b"AA"[..], Some(1)),
            (b"AB", None),
            (b"AAA", Some(2)),
            (b"AAB", None),
        ] {
            assert_eq!(
                base64_decode_in_place(&mut text.to_vec(), Alphabet::Url),
                want,
                "{text:?}"
            );
        }
        // 4k + 1 symbols cannot be whole bytes.
        assert_eq!(
            base64_decode_in_place(&mut b"abcde".to_vec(), Alphabet::Url),
            None
        );
        let mut bad = Base64Decoder::new(b"a!bc", Alphabet::Standard);
        assert_eq!(bad.next(), Some(Err(())));
        assert_eq!(bad.next(), None);
    }

    #[test]
    fn hex_round_trips() {
        let bytes = [0x00, 0x7f, 0xab, 0xff];
        let text: [u8; 8] = hex_encode(&bytes);
        assert_eq!(&text, b"007fabff");
        assert_eq!(hex_decode::<4>(b"007FABff"), Some(bytes));
        assert_eq!(hex_decode::<4>(b"007fabf"), None);
        assert_eq!(hex_decode::<4>(b"007fabfg"), None);
        assert_eq!((0..=255u8).filter(|&b| hex_value(b).is_some()).count(), 22);
    }

    use super::*;

    #[test]
    fn decimal_digits_both_ways() {
        let mut values = vec![0, 9, 10, 99, 100, 9_999, 10_000, 65_535, 65_536];
        values.extend([
            u64::from(u32::MAX) - 1,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
        ]);
        values.extend([10_000_000_000, 99_999_999_999_999, u64::MAX - 1, u64::MAX]);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..if cfg!(miri) { 40 } else { 2000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        for n in values {
            let want = n.to_string();
            for limbs in [false, true] {
                let mut buf = [0u8; 20];
                assert_eq!(
                    decimal_with(n, &mut buf, limbs),
                    want.as_bytes(),
                    "{n} limbs={limbs}"
                );
            }
            assert_eq!(Decimal::from(n).to_string(), want);
        }
        assert_eq!(Decimal::from(i64::MIN).to_string(), i64::MIN.to_string());
        assert_eq!(Decimal::from(-7i8).to_string(), "-7");
    }
}
