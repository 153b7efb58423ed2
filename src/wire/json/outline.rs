//! The outline: the first two levels of members of a top-level object,
//! recorded by the validation pass.

use super::string::JsonStr;
use super::value::Value;

/// Members recorded by an [`Outline`] (of the top-level object and of the
/// objects that are its members' values).
const OUTLINE_MEMBERS: usize = 16;

/// One recorded member: offsets into the validated input.
#[derive(Clone, Copy, Debug, Default)]
struct OutlineMember {
    /// Index of the depth-1 member whose value holds this one (depth 2), or
    /// `u8::MAX` (depth 1).
    parent: u8,
    /// Key contents (inside the quotes).
    key: (u32, u32),
    value: (u32, u32),
}

/// The first two levels of members of a validated top-level object, found
/// by the validation pass itself, so the envelope and `params` can be read
/// without walking the frame again. Up to 16 members; past that (or for
/// anything but a top-level object) it is incomplete and readers walk the
/// JSON as usual.
#[derive(Clone, Debug)]
pub(crate) struct Outline {
    members: [OutlineMember; OUTLINE_MEMBERS],
    len: u8,
    /// The last depth-1 member (parent of depth-2 members), if open.
    top: Option<u8>,
    /// Members recorded but whose value has not ended, per depth 1 and 2.
    open: [Option<u8>; 2],
    complete: bool,
}

impl Outline {
    pub(crate) const fn new() -> Self {
        Outline {
            members: [OutlineMember {
                parent: 0,
                key: (0, 0),
                value: (0, 0),
            }; OUTLINE_MEMBERS],
            len: 0,
            top: None,
            open: [None, None],
            complete: true,
        }
    }

    /// Forget what was recorded (the members past `len` are never read, so
    /// only the bookkeeping is cleared: cheaper than a new outline).
    pub(crate) fn reset(&mut self) {
        self.len = 0;
        self.top = None;
        self.open = [None, None];
        self.complete = true;
    }

    /// The members of the top-level object (`parent` `None`) or of the
    /// object that is the value of a top-level member at `value` (its
    /// offsets in `input`); `None` if the outline is incomplete or has no
    /// such member.
    pub(crate) fn members<'a>(
        &self,
        input: &'a [u8],
        parent: Option<core::ops::Range<usize>>,
    ) -> Option<impl Iterator<Item = (JsonStr<'a>, Value<'a>)> + use<'_, 'a>> {
        if !self.complete {
            return None;
        }
        let recorded = self.members.get(..usize::from(self.len))?;
        let parent = match parent {
            None => u8::MAX,
            Some(r) => {
                let at = recorded.iter().position(|m| {
                    m.parent == u8::MAX
                        && (m.value.0 as usize, m.value.1 as usize) == (r.start, r.end)
                })?;
                u8::try_from(at).ok()?
            }
        };
        Some(
            recorded
                .iter()
                .filter(move |m| m.parent == parent)
                .filter_map(move |m| {
                    let key = input.get(m.key.0 as usize..m.key.1 as usize)?;
                    let value = input.get(m.value.0 as usize..m.value.1 as usize)?;
                    Some((JsonStr { raw: key }, Value { raw: value }))
                }),
        )
    }
}

/// What the validator tells the outline: members of objects at nesting
/// depth 1 and 2, and where values end.
impl Outline {
    /// A member of an object at `depth` (1: the top-level object's): its
    /// key at `key..key_end` (quotes included), its value from `value`.
    #[inline]
    pub(super) fn member(&mut self, depth: usize, key: usize, key_end: usize, value: usize) {
        if depth > 2 || !self.complete {
            return;
        }
        let parent = if depth == 1 {
            u8::MAX
        } else {
            match self.top {
                Some(t) if self.open[0] == Some(t) => t,
                // Members of an object that is not a top-level member's
                // value (the top level is an array): not outlined.
                _ => {
                    self.complete = false;
                    return;
                }
            }
        };
        let (Ok(k0), Ok(k1), Ok(v0)) = (
            u32::try_from(key + 1),
            u32::try_from(key_end.saturating_sub(1)),
            u32::try_from(value),
        ) else {
            self.complete = false;
            return;
        };
        let index = self.len;
        let Some(slot) = self.members.get_mut(usize::from(index)) else {
            self.complete = false;
            return;
        };
        *slot = OutlineMember {
            parent,
            key: (k0, k1),
            value: (v0, v0),
        };
        self.len += 1;
        if depth == 1 {
            self.top = Some(index);
        }
        if let Some(open) = self.open.get_mut(depth - 1) {
            *open = Some(index);
        }
    }

    /// A value inside a container at `depth` ended just before `pos`.
    #[inline]
    pub(super) fn value_end(&mut self, depth: usize, pos: usize) {
        if depth == 0 || depth > 2 {
            return;
        }
        let Some(open) = self.open.get_mut(depth - 1) else {
            return;
        };
        if let Some(index) = open.take()
            && let Some(m) = self.members.get_mut(usize::from(index))
        {
            match u32::try_from(pos) {
                Ok(end) => m.value.1 = end,
                Err(_) => self.complete = false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::wire::json::{Limits, validate_outlined};
    use std::format;

    /// A pseudo-random JSON value of bounded depth, with whitespace.
    fn rnd(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    fn random_json(x: &mut u64, depth: u32, out: &mut std::string::String) {
        let next = |x: &mut u64| rnd(x);
        let ws = ["", " ", "\n\t "];
        let pick = next(x) % if depth == 0 { 4 } else { 6 };
        match pick {
            0 => out.push_str(["null", "true", "-1.5e3", "0"][(next(x) % 4) as usize]),
            1 => out
                .push_str(["\"a\"", "\"\"", "\"x\\\"y\"", "\"\\u00e9}\""][(next(x) % 4) as usize]),
            2 | 3 => out.push_str("12"),
            4 => {
                out.push('[');
                for i in 0..next(x) % 4 {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(ws[(next(x) % 3) as usize]);
                    random_json(x, depth - 1, out);
                }
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..next(x) % 6 {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(ws[(next(x) % 3) as usize]);
                    out.push_str(
                        ["\"k\"", "\"name\"", "\"a\\\"b\"", "\"\""][(next(x) % 4) as usize],
                    );
                    out.push_str(ws[(next(x) % 3) as usize]);
                    out.push(':');
                    out.push_str(ws[(next(x) % 3) as usize]);
                    random_json(x, depth - 1, out);
                    out.push_str(ws[(next(x) % 3) as usize]);
                }
                out.push('}');
            }
        }
    }

    #[test]
    fn outline_agrees_with_walking() {
        let mut x: u64 = 0x5eed_1234_abcd_9876;
        let mut complete = 0;
        // Fewer under Miri, which is about a thousand times slower.
        let rounds = if cfg!(miri) { 60 } else { 3000 };
        for _ in 0..rounds {
            let mut text = std::string::String::from(" ");
            random_json(&mut x, 4, &mut text);
            text.push(' ');
            let input = text.as_bytes();
            let mut outline = Outline::new();
            validate_outlined(input, &Limits::DEFAULT, &mut outline).unwrap();
            let whole = Value::parse(input, &Limits::DEFAULT).unwrap();
            let Some(top) = outline.members(input, None) else {
                continue;
            };
            complete += 1;
            let top: std::vec::Vec<_> = top.collect();
            let want: std::vec::Vec<_> = whole.members().collect();
            assert_eq!(top, want, "{text}");
            for (_, v) in want {
                let start = v.raw().as_ptr() as usize - input.as_ptr() as usize;
                let children = outline
                    .members(input, Some(start..start + v.raw().len()))
                    .unwrap_or_else(|| panic!("{text}"));
                let got: std::vec::Vec<_> = children.collect();
                let want: std::vec::Vec<_> = v.members().collect();
                assert_eq!(got, want, "{text}");
            }
        }
        assert!(
            complete * 4 > rounds,
            "{complete} of {rounds} outlines complete"
        );
        // Past 16 members, or members under a top-level array: incomplete.
        let many = format!(
            "{{{}}}",
            (0..17)
                .map(|i| format!("\"k{i}\":1"))
                .collect::<std::vec::Vec<_>>()
                .join(",")
        );
        let mut o = Outline::new();
        validate_outlined(many.as_bytes(), &Limits::DEFAULT, &mut o).unwrap();
        assert!(o.members(many.as_bytes(), None).is_none());
        let batch = br#"[{"a":{"b":1}}]"#;
        validate_outlined(batch, &Limits::DEFAULT, &mut o).unwrap();
        assert!(o.members(batch, None).is_none());
    }
}
