//! SWAR byte scanning: a machine word of bytes tested at a time.
//!
//! Shared by the JSON scanner (runs of plain string bytes), the emitter
//! (text that needs no escape) and the framer (the next newline).

/// A byte that stands for itself inside a JSON string and needs no escape
/// when written: printable ASCII other than `"` and `\\`.
#[inline]
pub(crate) const fn is_plain(b: u8) -> bool {
    b >= 0x20 && b < 0x80 && b != b'"' && b != b'\\'
}

/// `ONES * b`: `b` in every byte of a machine word.
pub(crate) const ONES: usize = usize::MAX / 0xff;
/// [`ONES`] of a `u64`, for code that takes 8 bytes at a time on every
/// target (the HTTP header names).
pub(crate) const ONES_U64: u64 = u64::MAX / 0xff;
/// The high bit of every byte of a machine word.
const HIGH: usize = ONES * 0x80;

/// A high bit in every byte of `v` that is zero; bytes above the first zero
/// byte may be marked falsely, the lowest mark is exact.
#[inline]
pub(crate) const fn zero_bytes(v: usize) -> usize {
    v.wrapping_sub(ONES) & !v & HIGH
}

/// Index of the first byte of `bytes` that `stop` accepts (`bytes.len()` if
/// none), a machine word at a time (SWAR): `marks(word)` must set the high bit
/// of the lowest such byte of the little-endian `word` (false marks above it
/// are allowed) and mark nothing when there is none.
#[inline]
pub(crate) fn first_stop(
    bytes: &[u8],
    marks: impl Fn(usize) -> usize,
    stop: impl Fn(u8) -> bool,
) -> usize {
    const W: usize = core::mem::size_of::<usize>();
    let mut n = 0;
    let mut chunks = bytes.chunks_exact(W);
    for chunk in &mut chunks {
        let mut word = [0u8; W];
        word.copy_from_slice(chunk);
        let m = marks(usize::from_le_bytes(word));
        if m != 0 {
            return n + (m.trailing_zeros() / 8) as usize;
        }
        n += W;
    }
    let rest = chunks.remainder();
    if rest.is_empty() {
        return n;
    }
    // At least one whole word: the last W bytes, overlapping ones already
    // seen, are one more word. Those hold no stop, so nothing is marked there
    // (false marks only sit above a true one). 64-bit only: on small targets
    // the byte loop below is the smaller code.
    if cfg!(target_pointer_width = "64")
        && let Some(tail) = bytes.len().checked_sub(W).and_then(|at| bytes.get(at..))
    {
        let mut word = [0u8; W];
        word.copy_from_slice(tail);
        let m = marks(usize::from_le_bytes(word));
        return if m == 0 {
            bytes.len()
        } else {
            bytes.len() - W + (m.trailing_zeros() / 8) as usize
        };
    }
    n + rest.iter().position(|&b| stop(b)).unwrap_or(rest.len())
}

/// The high bit of each byte of `x` that is not [`is_plain`] (false marks
/// only above a true one).
#[inline(always)]
const fn not_plain(x: usize) -> usize {
    // Below 0x20, at or above 0x80, `"` or `\\`.
    (x.wrapping_sub(ONES * 0x20) & !x & HIGH)
        | (x & HIGH)
        | zero_bytes(x ^ (ONES * b'"' as usize))
        | zero_bytes(x ^ (ONES * b'\\' as usize))
}

/// Length of the run of [`is_plain`] bytes at the start of `bytes`. Inlined
/// on 64-bit targets (a hot loop); one shared copy on smaller ones (flash).
#[cfg_attr(target_pointer_width = "64", inline)]
#[cfg_attr(not(target_pointer_width = "64"), inline(never))]
pub(crate) fn plain_run(bytes: &[u8]) -> usize {
    first_stop(bytes, not_plain, |b| !is_plain(b))
}

/// The [`not_plain`] marks of 4 to 16 bytes read as two overlapping words
/// (as [`two_words`] reads them), the bytes above a 4-byte word spaces
/// (plain): a stop in the first word is
/// the first; with none there, the second's lowest mark is (the bytes the
/// two share hold none). The one reader of [`all_plain`] and
/// [`plain_run_tail`] (64-bit targets).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn plain_marks(bytes: &[u8]) -> [usize; 2] {
    let n = bytes.len();
    let marks = |w: u64| not_plain(w as usize);
    if n < 8 {
        let pad = (ONES_U64 * 0x20) << 32;
        let half = |at: usize| marks(word_at::<4>(bytes, at) | pad);
        [half(0), half(n.wrapping_sub(4))]
    } else {
        [
            marks(word_at::<8>(bytes, 0)),
            marks(word_at::<8>(bytes, n - 8)),
        ]
    }
}

/// [`plain_run`] of a slice that may end 4 to 7 bytes in (a short string
/// at the end of its slice: an argument's value): there, by
/// [`plain_marks`], inline, instead of the loop's byte steps (64-bit
/// targets).
#[inline(always)]
pub(crate) fn plain_run_tail(bytes: &[u8]) -> usize {
    #[cfg(target_pointer_width = "64")]
    if let n @ 4..8 = bytes.len() {
        return match plain_marks(bytes) {
            [0, 0] => n,
            [0, m] => n - 4 + (m.trailing_zeros() / 8) as usize,
            [m, _] => (m.trailing_zeros() / 8) as usize,
        };
    }
    plain_run(bytes)
}

/// [`plain_run`] with its first two words tested inline (64-bit targets):
/// a string of up to 15 bytes ends there, without the loop's call; a
/// longer one takes the loop ([`plain_run_loop`], never inlined), whose
/// masks then stay in registers. With the whole loop inlined at every
/// string, a 4,096-byte string cost about 940 instructions more
/// (`scripts/registry_scale.sh`); inlined into the validator alone (which
/// LLVM chose once other code changed), 2,560 more.
#[inline(always)]
pub(crate) fn plain_run_short(bytes: &[u8]) -> usize {
    const W: usize = core::mem::size_of::<usize>();
    if cfg!(not(target_pointer_width = "64")) {
        return plain_run(bytes);
    }
    let mut at = 0;
    while at < 2 * W {
        let Some(word) = bytes.get(at..).and_then(|b| b.first_chunk::<W>()) else {
            break;
        };
        let m = not_plain(usize::from_le_bytes(*word));
        if m != 0 {
            return at + (m.trailing_zeros() / 8) as usize;
        }
        at += W;
    }
    at + plain_run_loop(bytes.get(at..).unwrap_or_default())
}

/// [`plain_run`] out of line: the loop of [`plain_run_short`].
#[inline(never)]
fn plain_run_loop(bytes: &[u8]) -> usize {
    plain_run(bytes)
}

/// Whether every byte of `bytes` is [`is_plain`]: on 64-bit targets 4 to
/// 16 bytes (most text a result writes) by [`plain_marks`], without the
/// loop's call; anything else by [`plain_run`].
#[cfg_attr(target_pointer_width = "64", inline(always))]
pub(crate) fn all_plain(bytes: &[u8]) -> bool {
    let n = bytes.len();
    #[cfg(target_pointer_width = "64")]
    if (4..=16).contains(&n) {
        let [a, b] = plain_marks(bytes);
        return a | b == 0;
    }
    plain_run(bytes) == n
}

/// Whether `bytes` holds a backslash: a word at a time on 64-bit targets
/// (the names and values the hot path asks about are short, where
/// `contains`' byte loop is its cost); `contains` on smaller ones, one
/// shared copy (flash).
#[cfg_attr(target_pointer_width = "64", inline)]
#[cfg_attr(not(target_pointer_width = "64"), inline(never))]
pub(crate) fn has_backslash(bytes: &[u8]) -> bool {
    if cfg!(not(target_pointer_width = "64")) {
        return bytes.contains(&b'\\');
    }
    // 4 to 16 bytes (most header values and names the hot path compares):
    // two overlapping words, without the loop's call. A word marks a zero
    // byte only above a true one, so any mark is a backslash.
    // (A word is a `usize` here: the test is `zero_bytes`, as below.)
    #[cfg(target_pointer_width = "64")]
    if (4..=16).contains(&bytes.len()) {
        let marks = |w: u64| zero_bytes(w as usize ^ (ONES * b'\\' as usize));
        let [a, b] = two_words(bytes);
        return marks(a) | marks(b) != 0;
    }
    first_stop(
        bytes,
        |x| zero_bytes(x ^ (ONES * b'\\' as usize)),
        |b| b == b'\\',
    ) < bytes.len()
}

/// Length of the run of visible ASCII bytes (`0x20..0x7f`) at the start of
/// `bytes`, a word at a time.
#[inline]
pub(crate) fn visible_run(bytes: &[u8]) -> usize {
    first_stop(
        bytes,
        // Below 0x20, at or above 0x80, or 0x7f.
        |x| (x.wrapping_sub(ONES * 0x20) & !x & HIGH) | (x & HIGH) | zero_bytes(x ^ (ONES * 0x7f)),
        |b| !(0x20..0x7f).contains(&b),
    )
}

/// The `W` bytes of `x` at `at` (`W` at most 8) as a little-endian `u64`;
/// zero where `x` has none. The one reader of the word-at-a-time
/// comparisons below and of the HTTP header names.
#[inline(always)]
pub(crate) fn word_at<const W: usize>(x: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let (Some(d), Some(s)) = (w.get_mut(..W), x.get(at..at + W)) {
        d.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

/// 4 to 16 bytes as two overlapping words: the first 8 and the last 8 (4
/// and 4 when shorter than 8).
#[inline(always)]
pub(crate) fn two_words(x: &[u8]) -> [u64; 2] {
    let n = x.len();
    if n >= 8 {
        [word_at::<8>(x, 0), word_at::<8>(x, n - 8)]
    } else {
        [word_at::<4>(x, 0), word_at::<4>(x, n.saturating_sub(4))]
    }
}

/// `0x20` in each byte of the ASCII word `w` that is a letter of the case
/// that starts at `first` (`b'a'` or `b'A'`): the high bit marks a byte at
/// least `first` and not past its `z` (ASCII: no byte carries into the
/// next).
#[inline(always)]
pub(crate) const fn case_bits(w: u64, first: u8) -> u64 {
    let from = w.wrapping_add(ONES_U64 * (0x80 - first as u64));
    let past = w.wrapping_add(ONES_U64 * (0x80 - (first as u64 + 26)));
    (from & !past & (ONES_U64 * 0x80)) >> 2
}

/// `a.eq_ignore_ascii_case(b)`, two overlapping words a side for 4 to 16
/// bytes of ASCII on 64-bit targets (host names against the allowed ones).
#[inline]
pub(crate) fn same_ignoring_ascii_case(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if cfg!(not(target_pointer_width = "64")) || !(4..=16).contains(&n) {
        return a.eq_ignore_ascii_case(b);
    }
    let (wa, wb) = (two_words(a), two_words(b));
    if (wa[0] | wa[1] | wb[0] | wb[1]) & (ONES_U64 * 0x80) != 0 {
        // Not ASCII: the byte loop decides.
        return a.eq_ignore_ascii_case(b);
    }
    let lower = |w: u64| w | case_bits(w, b'A');
    lower(wa[0]) == lower(wb[0]) && lower(wa[1]) == lower(wb[1])
}

/// `a == b`, without a `memcmp` call for up to 16 bytes on 64-bit
/// targets: two overlapping words a side (the names and values the hot
/// path compares are short, where the call is most of the cost).
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if cfg!(not(target_pointer_width = "64")) || n > 16 {
        return a == b;
    }
    if n < 4 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    two_words(a) == two_words(b)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// Every length through the two-word cases (4 to 16) and past them,
    /// every byte that is not plain, and its plain neighbours, at every
    /// place: under 8 bytes the padding above the text is never read as
    /// a control byte.
    #[test]
    fn all_plain_is_every_byte_plain() {
        // Three 8-byte words (two and one byte under Miri).
        for len in 0..if cfg!(miri) { 17 } else { 24 } {
            let clean = std::vec![b'a'; len];
            assert!(all_plain(&clean), "{len}");
            for at in 0..len {
                for b in [
                    0x00u8, 0x1f, 0x20, b'"', b'\\', 0x7f, 0x80, 0xff, b'!', b'#',
                ] {
                    let mut v = clean.clone();
                    v[at] = b;
                    assert_eq!(
                        all_plain(&v),
                        v.iter().all(|&c| is_plain(c)),
                        "{b:#x} at {at} of {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn visible_run_matches_the_range() {
        let slow = |b: &[u8]| {
            b.iter()
                .position(|c| !(0x20..0x7f).contains(c))
                .unwrap_or(b.len())
        };
        for len in 0..if cfg!(miri) { 17 } else { 24 } {
            let clean = std::vec![b'a'; len];
            assert_eq!(visible_run(&clean), len);
            for at in 0..len {
                for special in [0x00u8, 0x09, 0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff] {
                    let mut v = clean.clone();
                    v[at] = special;
                    assert_eq!(visible_run(&v), slow(&v), "{special:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn same_ignoring_ascii_case_is_eq_ignore_ascii_case() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..20usize {
            for _ in 0..if cfg!(miri) { 20 } else { 2000 } {
                let mut a = std::vec::Vec::new();
                let mut b = std::vec::Vec::new();
                for _ in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Letters of either case, their neighbours (`@`, `[`,
                    // `` ` ``, `{`), and any byte now and then.
                    let pick = [b'a', b'A', b'z', b'Z', b'@', b'[', b'`', b'{', b'm', b'M'];
                    let c = if x.is_multiple_of(7) {
                        (x >> 8) as u8
                    } else {
                        pick[(x >> 16) as usize % pick.len()]
                    };
                    a.push(c);
                    b.push(match (x >> 24) % 3 {
                        0 => c.to_ascii_uppercase(),
                        1 => c.to_ascii_lowercase(),
                        _ => c ^ 0x20,
                    });
                }
                assert_eq!(
                    same_ignoring_ascii_case(&a, &b),
                    a.eq_ignore_ascii_case(&b),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn same_bytes_is_slice_equality() {
        for len in 0..24usize {
            let a: std::vec::Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_bytes(&a, &a.clone()));
            assert!(!same_bytes(&a, &a[..len.saturating_sub(1)]) || len == 0);
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x01;
                assert!(!same_bytes(&a, &b), "len {len}, at {at}");
            }
        }
    }

    #[test]
    fn has_backslash_matches_contains() {
        for len in 0..24 {
            let clean = std::vec![b'a'; len];
            assert!(!has_backslash(&clean));
            for at in 0..len {
                let mut v = clean.clone();
                v[at] = b'\\';
                assert!(has_backslash(&v), "len {len}, at {at}");
                // Bytes one off a backslash in every bit are not one.
                for near in [b'\\' ^ 1, b'\\' ^ 0x80, b'\\' + 0x80] {
                    v[at] = near;
                    assert!(!has_backslash(&v), "{near:#x} at {at}");
                }
            }
        }
        // Random bytes drawn mostly from around a backslash, zero and
        // 0xff (where a word test would carry or borrow wrongly).
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let pool = [0u8, 1, 0x5b, 0x5c, 0x5d, 0xdc, 0x7f, 0x80, 0xff, b'a'];
        for len in 0..24 {
            for _ in 0..if cfg!(miri) { 3 } else { 500 } {
                let v: std::vec::Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        // Rarely a backslash, so most draws have none.
                        match pool[(x % pool.len() as u64) as usize] {
                            b'\\' if x & 0x300 != 0 => b'a',
                            b => b,
                        }
                    })
                    .collect();
                assert_eq!(has_backslash(&v), v.contains(&b'\\'), "{v:?}");
            }
        }
    }

    #[test]
    fn plain_run_matches_the_table() {
        let slow = |b: &[u8]| b.iter().position(|&c| !is_plain(c)).unwrap_or(b.len());
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for len in 0..40 {
            for _ in 0..if cfg!(miri) { 3 } else { 300 } {
                let mut v = std::vec::Vec::new();
                for _ in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Mostly plain bytes, sometimes any byte.
                    let b = if x.is_multiple_of(5) {
                        (x >> 8) as u8
                    } else {
                        0x20 + ((x >> 8) % 0x60) as u8
                    };
                    v.push(b);
                }
                assert_eq!(plain_run(&v), slow(&v), "{v:?}");
                assert_eq!(plain_run_short(&v), slow(&v), "{v:?}");
                assert_eq!(plain_run_tail(&v), slow(&v), "{v:?}");
            }
        }
        for special in [0x00u8, 0x1f, b'"', b'\\', 0x7f, 0x80, 0xff] {
            for at in 0..20 {
                let mut v = std::vec![b'a'; 20];
                v[at] = special;
                assert_eq!(plain_run(&v), slow(&v), "{special:#x} at {at}");
                assert_eq!(plain_run_short(&v), slow(&v), "{special:#x} at {at}");
            }
            // The half words: each place of 4 to 7 bytes, alone and with a
            // quote after it.
            for len in 4..8 {
                for at in 0..len {
                    let mut v = std::vec![b'a'; len];
                    v[at] = special;
                    assert_eq!(
                        plain_run_tail(&v),
                        slow(&v),
                        "{special:#x} at {at} of {len}"
                    );
                    v[len - 1] = b'"';
                    assert_eq!(
                        plain_run_tail(&v),
                        slow(&v),
                        "{special:#x} at {at} of {len}"
                    );
                }
            }
        }
    }
}
