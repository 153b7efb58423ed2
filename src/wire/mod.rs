//! The wire layer: framing, JSON scanning, JSON-RPC envelopes, output.
//!
//! Parsing never panics on any input; emitting never writes past the buffer
//! it was given (overflow is reported, never a partial message sent).

pub mod de;
pub mod emit;
pub mod envelope;
pub mod frame;
pub mod json;
pub(crate) mod swar;

/// `buf.copy_within(src, dest)` for a move towards the front (`dest <=
/// src.start`), without a panic path: out-of-range arguments move nothing.
///
/// `copy_within` is `#[track_caller]` and not inlined at `opt-level = "z"`,
/// so every call of it puts a panic location, with this crate's absolute
/// source path, into the firmware's flash: its size would then depend on
/// where the checkout lies. The loop below cannot panic (`get` and
/// `get_mut` in place of indexing). Moves here are short: the partial
/// last line of the framer, a stash, a cut tail.
pub(crate) fn move_front(buf: &mut [u8], src: core::ops::Range<usize>, dest: usize) {
    let (Some(region), Some(offset)) = (buf.get_mut(dest..src.end), src.start.checked_sub(dest))
    else {
        return;
    };
    if offset == 0 {
        return;
    }
    for i in offset..region.len() {
        if let Some(&b) = region.get(i)
            && let Some(slot) = region.get_mut(i - offset)
        {
            *slot = b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::move_front;

    #[test]
    fn move_front_matches_copy_within() {
        for len in 0..8 {
            for start in 0..=len + 1 {
                for end in 0..=len + 1 {
                    for dest in 0..=len + 1 {
                        let orig: [u8; 8] = core::array::from_fn(|i| i as u8 + 1);
                        let mut ours = orig;
                        move_front(&mut ours[..len], start..end, dest);
                        let mut theirs = orig;
                        if dest <= start && start <= end && end <= len {
                            theirs[..len].copy_within(start..end, dest);
                        }
                        assert_eq!(ours, theirs, "len {len} {start}..{end} -> {dest}");
                    }
                }
            }
        }
    }
}
