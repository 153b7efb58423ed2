//! JSON numbers kept as text, with exact integer accessors and comparison.

use core::cmp::Ordering;
use core::fmt;

use super::lex::scan_number;
use crate::wire::swar::{ONES_U64, two_words};

/// Whether validated JSON number text is written without fraction or
/// exponent: the one definition, for [`Number::is_integer_literal`], a
/// request id and a progress token (the last two on the validated frame,
/// without parsing the number again):
/// after an optional `-`, digits only. Of the bytes a number holds, the
/// digits alone have bit 4 set and bit 6 clear (`.`, `e`, `E`, `+` and `-`
/// do not), so 4 to 16 of them are told by two words (64-bit targets:
/// 14 instructions a request of the stdio mix for the id, against a test
/// of each byte for `.`, `e` and `E`, `scripts/stdio_cost.sh`).
#[inline]
pub(crate) fn integer_literal(raw: &[u8]) -> bool {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    let n = digits.len();
    if cfg!(target_pointer_width = "64") && (4..=16).contains(&n) {
        // Two words of 4 bytes (the high ones zero) below 8 bytes.
        let live = if n >= 8 {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        };
        let [a, b] = two_words(digits);
        let want = (ONES_U64 * 0x10) & live;
        let digit_bits = ONES_U64 * 0x50;
        return (a & digit_bits) == want && (b & digit_bits) == want;
    }
    digits.iter().all(|&b| b & 0x50 == 0x10)
}

/// A JSON number token (validated grammar), kept as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Number<'a> {
    raw: &'a str,
}

/// Decomposed number text: `-? int (. frac)? (e exp)?`.
struct Parts<'a> {
    neg: bool,
    int: &'a [u8],
    frac: &'a [u8],
    /// Exponent, saturated to the i64 range.
    exp: i64,
}

/// Length as i64 (saturating; lengths never get near `i64::MAX` in practice).
#[inline]
fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl<'a> Number<'a> {
    /// Check that `text` is exactly one JSON number token and wrap it.
    #[must_use]
    pub fn parse(text: &'a str) -> Option<Number<'a>> {
        match scan_number(text.as_bytes(), 0) {
            Ok(end) if end == text.len() => Some(Number { raw: text }),
            _ => None,
        }
    }

    /// `text` as a number, for `const` bounds: `Number::literal("0.5")`.
    ///
    /// # Panics
    ///
    /// If `text` is not exactly one JSON number token; in a `const` that is
    /// a compile error.
    #[must_use]
    #[allow(
        clippy::panic,
        reason = "a configuration error, caught at compile time in const use"
    )]
    pub const fn literal(text: &'a str) -> Number<'a> {
        if !is_number_text(text.as_bytes()) {
            panic!("not a JSON number");
        }
        Number { raw: text }
    }

    /// The number's text, exactly as in the input.
    #[must_use]
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// True when the text has no fraction and no exponent.
    #[must_use]
    pub fn is_integer_literal(&self) -> bool {
        integer_literal(self.raw.as_bytes())
    }

    fn parts(&self) -> Parts<'a> {
        let mut s = self.raw.as_bytes();
        let neg = s.first() == Some(&b'-');
        if neg {
            s = s.get(1..).unwrap_or_default();
        }
        let int_len = s.iter().take_while(|b| b.is_ascii_digit()).count();
        let (int, mut s) = s.split_at_checked(int_len).unwrap_or((s, &[]));
        let mut frac: &[u8] = &[];
        if let Some(rest) = s.strip_prefix(b".") {
            let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let (f, r) = rest.split_at_checked(n).unwrap_or((rest, &[]));
            frac = f;
            s = r;
        }
        let mut exp: i64 = 0;
        if let Some(rest) = s.strip_prefix(b"e").or_else(|| s.strip_prefix(b"E")) {
            let (eneg, digits) = match rest.first() {
                Some(b'-') => (true, rest.get(1..).unwrap_or_default()),
                Some(b'+') => (false, rest.get(1..).unwrap_or_default()),
                _ => (false, rest),
            };
            for &d in digits.iter().take_while(|b| b.is_ascii_digit()) {
                exp = exp.saturating_mul(10).saturating_add(i64::from(d - b'0'));
            }
            if eneg {
                exp = -exp;
            }
        }
        Parts {
            neg,
            int,
            frac,
            exp,
        }
    }

    /// JSON Schema "integer": the mathematical value is integral (`1`, `-0`,
    /// `1.0`, `1e2`, `2.50e1`, `100e-2` are; `1.5`, `1e-1` are not). Decided
    /// exactly from the text, for any length or exponent.
    #[must_use]
    pub fn is_integral(&self) -> bool {
        let p = self.parts();
        let frac_tz = p.frac.iter().rev().take_while(|&&d| d == b'0').count();
        let frac_sig = p.frac.len() - frac_tz;
        if frac_sig > 0 {
            // Last non-zero digit is 10^-frac_sig: needs exp >= frac_sig.
            return p.exp >= len_i64(frac_sig);
        }
        let int_tz = p.int.iter().rev().take_while(|&&d| d == b'0').count();
        if int_tz == p.int.len() {
            return true; // the value is zero
        }
        // Last non-zero digit is 10^int_tz.
        p.exp.saturating_add(len_i64(int_tz)) >= 0
    }

    /// Sign and magnitude of an integral value, if the magnitude fits u128.
    fn integral_magnitude(&self) -> Option<(bool, u128)> {
        if !self.is_integral() {
            return None;
        }
        let p = self.parts();
        let ndigits = len_i64(p.int.len()).saturating_add(len_i64(p.frac.len()));
        // value = digits(int ++ frac) * 10^scale
        let scale = p.exp.saturating_sub(len_i64(p.frac.len()));
        let keep = if scale < 0 {
            ndigits.saturating_add(scale).max(0)
        } else {
            ndigits
        };
        let keep = usize::try_from(keep).unwrap_or(usize::MAX);
        let mut mag: u128 = 0;
        for &d in p.int.iter().chain(p.frac.iter()).take(keep) {
            mag = mag.checked_mul(10)?.checked_add(u128::from(d - b'0'))?;
        }
        if mag != 0 {
            // Terminates: a non-zero u128 overflows after at most 39 steps.
            let mut s = scale;
            while s > 0 {
                mag = mag.checked_mul(10)?;
                s -= 1;
            }
        }
        Some((p.neg, mag))
    }

    /// The value as i64: `Some` iff integral and in range (exact, also for
    /// forms like `1.0` or `1e2`).
    #[must_use]
    pub fn as_i64(&self) -> Option<i64> {
        // Fast path (64-bit; flash on small targets): a plain integer
        // literal of up to 18 digits fits as is.
        let digits = self.raw.strip_prefix('-').unwrap_or(self.raw);
        if cfg!(target_pointer_width = "64")
            && (1..=18).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
        {
            let mut mag: i64 = 0;
            for b in digits.bytes() {
                mag = mag * 10 + i64::from(b - b'0');
            }
            return Some(if digits.len() < self.raw.len() {
                -mag
            } else {
                mag
            });
        }
        i64::try_from(self.as_i128()?).ok()
    }

    /// The value as u64: `Some` iff integral and in range (`-0` gives 0).
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        u64::try_from(self.as_u128()?).ok()
    }

    /// The value as i128: `Some` iff integral and in range.
    #[must_use]
    pub fn as_i128(&self) -> Option<i128> {
        let (neg, mag) = self.integral_magnitude()?;
        if neg {
            if mag == 1u128 << 127 {
                Some(i128::MIN)
            } else {
                i128::try_from(mag).ok().map(|v| -v)
            }
        } else {
            i128::try_from(mag).ok()
        }
    }

    /// The value as u128: `Some` iff integral and in range (`-0` gives 0).
    #[must_use]
    pub fn as_u128(&self) -> Option<u128> {
        let (neg, mag) = self.integral_magnitude()?;
        if neg && mag != 0 { None } else { Some(mag) }
    }

    /// The numbers compared by their exact decimal values (`1.0 == 1`,
    /// `-0 == 0`, `1e2 == 100`, `0.1 < 0.10000000000000000001`), from the
    /// text alone: no floating point, any number of digits. Exponents are
    /// exact up to ±9.2e18; beyond that they saturate.
    #[must_use]
    pub fn cmp_exact(&self, other: &Number<'_>) -> Ordering {
        let (a, b) = (Exact::of(self), Exact::of(other));
        match (a.zero, b.zero) {
            (true, true) => return Ordering::Equal,
            (true, false) => {
                return if b.neg {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
            }
            (false, true) => {
                return if a.neg {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
            }
            (false, false) => {}
        }
        if a.neg != b.neg {
            return if a.neg {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let magnitude = a.point.cmp(&b.point).then_with(|| {
            let (mut x, mut y) = (a.digits(), b.digits());
            loop {
                match (x.next(), y.next()) {
                    (Some(p), Some(q)) if p == q => {}
                    (Some(p), Some(q)) => return p.cmp(&q),
                    // The longer one is bigger iff it has a non-zero digit left.
                    (Some(p), None) => {
                        return if p != b'0' || x.any(|d| d != b'0') {
                            Ordering::Greater
                        } else {
                            Ordering::Equal
                        };
                    }
                    (None, Some(q)) => {
                        return if q != b'0' || y.any(|d| d != b'0') {
                            Ordering::Less
                        } else {
                            Ordering::Equal
                        };
                    }
                    (None, None) => return Ordering::Equal,
                }
            }
        });
        if a.neg {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// The nearest f64 (overflow gives ±infinity, underflow ±0).
    ///
    /// This links the core library's float parser (about 16 KB of flash on
    /// Cortex-M); picomcp itself never calls it unless a tool's argument
    /// type has a float field.
    #[must_use]
    pub fn as_f64(&self) -> f64 {
        self.raw.parse::<f64>().unwrap_or(f64::NAN)
    }

    /// The nearest f32 (overflow gives ±infinity, underflow ±0).
    #[must_use]
    pub fn as_f32(&self) -> f32 {
        self.raw.parse::<f32>().unwrap_or(f32::NAN)
    }
}

/// `bytes` is exactly one JSON number token.
const fn is_number_text(bytes: &[u8]) -> bool {
    matches!(scan_number(bytes, 0), Ok(n) if n == bytes.len())
}

/// A number's value as `0.DIGITS × 10^point` (significant digits from the
/// first non-zero one), for exact comparison.
struct Exact<'a> {
    neg: bool,
    zero: bool,
    /// The significant digits: the rest of `int` ++ `frac` after `skip`.
    int: &'a [u8],
    frac: &'a [u8],
    skip: usize,
    point: i64,
}

impl<'a> Exact<'a> {
    fn of(n: &Number<'a>) -> Exact<'a> {
        let p = n.parts();
        let lead_int = p.int.iter().take_while(|&&d| d == b'0').count();
        let lead = if lead_int == p.int.len() {
            lead_int + p.frac.iter().take_while(|&&d| d == b'0').count()
        } else {
            lead_int
        };
        let total = p.int.len() + p.frac.len();
        Exact {
            neg: p.neg,
            zero: lead == total,
            int: p.int,
            frac: p.frac,
            skip: lead,
            point: len_i64(p.int.len())
                .saturating_sub(len_i64(lead))
                .saturating_add(p.exp),
        }
    }

    fn digits(&self) -> impl Iterator<Item = u8> + 'a {
        self.int
            .iter()
            .chain(self.frac.iter())
            .skip(self.skip)
            .copied()
    }
}

impl fmt::Display for Number<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.raw)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// Every number of the grammar from 1 to 20 bytes long, with and
    /// without fraction, exponent and sign, against the definition: no
    /// `.`, `e` or `E` in it.
    #[test]
    fn integer_literals_are_told_at_every_length() {
        let mut texts = std::vec::Vec::new();
        for n in 1..=20 {
            let digits: std::string::String =
                (0..n).map(|i| char::from(b'1' + (i % 9) as u8)).collect();
            for (head, tail) in [("", ""), ("-", ""), ("", ".5"), ("-", "e7"), ("", "E+1")] {
                texts.push(std::format!("{head}{digits}{tail}"));
            }
            texts.push(std::format!("0.{digits}"));
            texts.push(std::format!("{}e-{}", &digits[..n / 2 + 1], n));
        }
        texts.push("0".into());
        texts.push("-0".into());
        for text in &texts {
            let raw = text.as_bytes();
            assert!(Number::parse(text).is_some(), "{text}");
            let want = !raw.iter().any(|b| matches!(b, b'.' | b'e' | b'E'));
            assert_eq!(integer_literal(raw), want, "{text}");
        }
    }

    use std::format;
    use std::vec::Vec;

    #[test]
    fn numbers() {
        let n = |s: &'static str| Number::parse(s).expect(s);
        assert_eq!(Number::parse("01"), None);
        assert_eq!(Number::parse("1 "), None);
        assert_eq!(Number::parse(""), None);
        assert_eq!(Number::parse("+1"), None);
        assert!(n("12").is_integer_literal());
        assert!(!n("1.0").is_integer_literal());
        assert!(!n("1e2").is_integer_literal());
        assert!(!n("1E2").is_integer_literal());
        for s in [
            "1",
            "-0",
            "0",
            "1.0",
            "1e2",
            "2.50e1",
            "100e-2",
            "0.0",
            "0e-99999999999999999999",
            "-0.000e5",
            "1.5e1",
            "12345678901234567890123456789012345678901234567890",
            "1e999999999999999999999",
            "1.25e2",
            "10E-1",
        ] {
            assert!(n(s).is_integral(), "{s}");
        }
        for s in [
            "1.5",
            "1e-1",
            "0.1",
            "-2.5",
            "1.25e1",
            "1e-999999999999999999999",
            "101e-2",
        ] {
            assert!(!n(s).is_integral(), "{s}");
        }
        assert_eq!(n("0").as_i64(), Some(0));
        assert_eq!(n("-0").as_i64(), Some(0));
        assert_eq!(n("-0").as_u64(), Some(0));
        // Both sides of the 18-digit fast path.
        assert_eq!(
            n("999999999999999999").as_i64(),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(
            n("-999999999999999999").as_i64(),
            Some(-999_999_999_999_999_999)
        );
        assert_eq!(
            n("1000000000000000000").as_i64(),
            Some(1_000_000_000_000_000_000)
        );
        assert_eq!(n("-42").as_i64(), Some(-42));
        assert_eq!(n("9223372036854775807").as_i64(), Some(i64::MAX));
        assert_eq!(n("9223372036854775808").as_i64(), None);
        assert_eq!(n("-9223372036854775808").as_i64(), Some(i64::MIN));
        assert_eq!(n("-9223372036854775809").as_i64(), None);
        assert_eq!(n("18446744073709551615").as_u64(), Some(u64::MAX));
        assert_eq!(n("18446744073709551616").as_u64(), None);
        assert_eq!(n("-1").as_u64(), None);
        assert_eq!(n("1.0").as_i64(), Some(1));
        assert_eq!(n("1e2").as_u64(), Some(100));
        assert_eq!(n("2.50e1").as_i64(), Some(25));
        assert_eq!(n("100e-2").as_i64(), Some(1));
        assert_eq!(n("-1.5e1").as_i64(), Some(-15));
        assert_eq!(n("0.00e400").as_i64(), Some(0));
        assert_eq!(n("9.223372036854775807e18").as_i64(), Some(i64::MAX));
        assert_eq!(n("9.223372036854775808e18").as_i64(), None);
        assert_eq!(n("1e19").as_u64(), Some(10_000_000_000_000_000_000));
        assert_eq!(n("1e20").as_u64(), None);
        assert_eq!(n("1e400").as_u64(), None);
        assert_eq!(n("1.5").as_i64(), None);
        assert_eq!(n("1.5").as_u64(), None);
        assert_eq!(
            n("170141183460469231731687303715884105727").as_i128(),
            Some(i128::MAX)
        );
        assert_eq!(
            n("-170141183460469231731687303715884105728").as_i128(),
            Some(i128::MIN)
        );
        assert_eq!(n("170141183460469231731687303715884105728").as_i128(), None);
        assert_eq!(
            n("340282366920938463463374607431768211455").as_u128(),
            Some(u128::MAX)
        );
        assert_eq!(n("340282366920938463463374607431768211456").as_u128(), None);
        assert_eq!(n("1.5").as_f64(), 1.5);
        assert_eq!(n("-2e-3").as_f64(), -0.002);
        assert_eq!(n("1e400").as_f64(), f64::INFINITY);
        assert_eq!(n("-1e400").as_f64(), f64::NEG_INFINITY);
        assert_eq!(n("1e-400").as_f64(), 0.0);
        assert_eq!(n("0.1").as_f32(), 0.1f32);
        assert_eq!(format!("{}", n("-1.5e3")), "-1.5e3");
    }

    #[test]
    fn numbers_compare_exactly_from_text() {
        use core::cmp::Ordering::{Equal, Greater, Less};
        fn n(t: &str) -> Number<'_> {
            Number::parse(t).unwrap()
        }
        let cmp = |a: &str, b: &str| n(a).cmp_exact(&n(b));
        for (a, b, want) in [
            ("0", "-0", Equal),
            ("0.000", "0e5", Equal),
            ("1", "1.0", Equal),
            ("1e2", "100", Equal),
            ("100e-2", "1", Equal),
            ("0.0012", "12e-4", Equal),
            ("1.5", "1.50", Equal),
            ("2", "1.5", Greater),
            ("-2", "-1.5", Less),
            ("-0.1", "0", Less),
            ("0", "1e-400", Less),
            ("0", "-1e-400", Greater),
            ("0.1", "0.10000000000000000001", Less),
            ("0.30000000000000001", "0.3", Greater),
            ("9007199254740993", "9007199254740992", Greater),
            ("18446744073709551616", "18446744073709551615", Greater),
            ("1e400", "9e399", Greater),
            ("-1e400", "-9e399", Less),
            ("123.45", "123.4", Greater),
            ("99", "100", Less),
            ("0.99", "1", Less),
            ("1e-7", "0.0000001", Equal),
        ] {
            assert_eq!(cmp(a, b), want, "{a} vs {b}");
            assert_eq!(cmp(b, a), want.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn number_literal_is_const_and_checked() {
        const HALF: Number<'static> = Number::literal("0.5");
        assert_eq!(HALF.raw(), "0.5");
        for good in ["0", "-0", "1.5", "-1e-3", "2E+10", "18446744073709551616"] {
            assert!(is_number_text(good.as_bytes()), "{good}");
            assert_eq!(Number::literal(good).raw(), good);
        }
        for bad in [
            "", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1 ", "0x1", "NaN", "--1",
        ] {
            assert!(!is_number_text(bad.as_bytes()), "{bad}");
            assert!(std::panic::catch_unwind(|| Number::literal(bad)).is_err());
        }
    }

    #[test]
    fn integral_forms_are_exact() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut values: Vec<i64> = std::vec![0, 1, -1, 42, -42, 10, 100, i64::MAX, i64::MIN];
        values.push(1_000_000_000_000_000_000);
        // Fewer under Miri, which checks the same code at ~1,000× the cost.
        for _ in 0..if cfg!(miri) { 8 } else { 200 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x as i64 >> (x % 60));
        }
        for k in values {
            let sign = if k < 0 { "-" } else { "" };
            let digits = format!("{}", k.unsigned_abs());
            let (head, tail) = digits.split_at(1);
            let exp = tail.len();
            let forms = [
                format!("{k}"),
                format!("{k}.0"),
                format!("{k}.000e0"),
                if k == 0 {
                    "0e-2".into()
                } else {
                    format!("{k}00e-2")
                },
                format!("{sign}{head}.{tail}0e{exp}"),
                format!("{sign}{head}.{tail}00E+{exp}"),
                format!("{sign}0.{digits}e{}", exp + 1),
            ];
            for f in forms {
                let n = Number::parse(&f).unwrap_or_else(|| panic!("{f}"));
                assert!(n.is_integral(), "{f}");
                assert_eq!(n.as_i64(), Some(k), "{f}");
                assert_eq!(n.as_i128(), Some(i128::from(k)), "{f}");
                assert_eq!(n.as_u64(), u64::try_from(k).ok(), "{f}");
            }
            let half = format!("{k}.5");
            assert!(!Number::parse(&half).expect("half").is_integral());
            let tenth_text = format!("{k}e-1");
            let tenth = Number::parse(&tenth_text).expect("tenth");
            assert_eq!(tenth.is_integral(), k % 10 == 0, "{k}e-1");
            assert_eq!(tenth.as_i64(), (k % 10 == 0).then_some(k / 10), "{k}e-1");
        }
    }
}
