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

/// Encode `data` in base64 (standard alphabet, padded), three bytes at a
/// time, handing each four-symbol group to `put`.
pub(crate) fn base64(data: &[u8], mut put: impl FnMut(&[u8])) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let sym = |i: u32| ALPHABET.get((i & 63) as usize).copied().unwrap_or(b'=');
    let mut chunks = data.chunks_exact(3);
    for c in &mut chunks {
        if let [a, b, c] = *c {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c);
            put(&[sym(n >> 18), sym(n >> 12), sym(n >> 6), sym(n)]);
        }
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            put(&[sym(n >> 18), sym(n >> 12), b'=', b'=']);
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            put(&[sym(n >> 18), sym(n >> 12), sym(n >> 6), b'=']);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
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
