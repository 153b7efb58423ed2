//! Reading a request's `params` in two phases: spans found under a shared
//! borrow of the frame (phase 1), then split into disjoint mutable slices for
//! in-place unescaping (phase 2).

use core::ops::Range;

use crate::context::MAX_PROGRESS_TOKEN;
use crate::wire::json::{self, JsonStr, Kind, Value};

/// Where `part` (a sub-slice of `whole`) lies in `whole`.
pub(super) fn span(whole: &[u8], part: &[u8]) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    start..start + part.len()
}

/// Split `frame` into the disjoint `spans` (in any order) as mutable slices.
pub(super) fn split_spans<'f, const N: usize>(
    frame: &'f mut [u8],
    mut spans: [Option<Range<usize>>; N],
) -> [Option<&'f mut [u8]>; N] {
    let mut out: [Option<&'f mut [u8]>; N] = core::array::from_fn(|_| None);
    split_into(frame, &mut spans, &mut out);
    out
}

/// `split_spans`' body, one copy for every `N`: takes the spans in order of
/// their start (each consumed span is set to `None`), skipping any that
/// overlap one already taken or lie outside `frame`.
#[inline(never)]
fn split_into<'f>(
    frame: &'f mut [u8],
    spans: &mut [Option<Range<usize>>],
    out: &mut [Option<&'f mut [u8]>],
) {
    // One span (a call without request state, most calls): no split.
    let mut given = spans.iter_mut().enumerate().filter(|(_, s)| s.is_some());
    if let (Some((i, only)), None) = (given.next(), given.next()) {
        if let (Some(r), Some(slot)) = (only.take(), out.get_mut(i)) {
            *slot = frame.get_mut(r);
        }
        return;
    }
    let mut rest: &'f mut [u8] = frame;
    let mut offset = 0;
    loop {
        let mut next: Option<(usize, Range<usize>)> = None;
        for (i, span) in spans.iter().enumerate() {
            if let Some(r) = span
                && next.as_ref().is_none_or(|(_, n)| r.start < n.start)
            {
                next = Some((i, r.clone()));
            }
        }
        let Some((i, r)) = next else {
            break;
        };
        if let Some(span) = spans.get_mut(i) {
            *span = None;
        }
        let taken = core::mem::take(&mut rest);
        if r.start < offset || r.end < r.start || r.end - offset > taken.len() {
            rest = taken;
            continue;
        }
        let base = offset;
        let (head, tail) = taken.split_at_mut(r.end - base);
        rest = tail;
        offset = r.end;
        if let Some(slot) = out.get_mut(i) {
            *slot = head.get_mut(r.start - base..);
        }
    }
}

/// JSON-decode several disjoint string spans of `frame` in place.
pub(super) fn decode_spans<const N: usize>(
    frame: &mut [u8],
    spans: [Option<Range<usize>>; N],
) -> [Option<&str>; N] {
    split_spans(frame, spans).map(|region| region.and_then(|r| json::unescape_str_in_place(r).ok()))
}

/// The progress token of a request (`params._meta.progressToken`, found by
/// [`MetaKeys`](crate::mcp::envelope::MetaKeys)), as written.
pub(super) fn progress_token(
    token: Option<Value<'_>>,
) -> Option<heapless::Vec<u8, MAX_PROGRESS_TOKEN>> {
    let token = token?;
    let ok = match token.kind() {
        Kind::String => true,
        Kind::Number => json::integer_literal(token.raw()),
        _ => false,
    };
    if !ok {
        return None;
    }
    heapless::Vec::from_slice(token.raw()).ok()
}

/// Where `name`, `arguments`, `requestState` and `inputResponses` of
/// `params` are in the frame (as `u32` offsets: it rides in every
/// request's facts, moved several times).
#[derive(Clone, Default)]
pub(super) struct NamedSpans {
    /// What the request is about: `name` (`tools/call`, `prompts/get`), or
    /// `uri` for `resources/read`, `resources/subscribe` and
    /// `resources/unsubscribe`.
    pub(super) name: Option<Span>,
    pub(super) arguments: Option<Span>,
    pub(super) state: Option<Span>,
    pub(super) responses: Option<Span>,
}

impl NamedSpans {
    /// From the outline of `frame`'s validation (its inner slots are
    /// [`PARAMS_KEYS`](crate::mcp::envelope::PARAMS_KEYS)'s: the first of
    /// each member, as `Value::get` would find it); `uri` in place of
    /// `name` for the `resources/` methods that name a resource.
    pub(super) fn outlined(outline: &json::Outline, uri: bool) -> Self {
        use crate::mcp::envelope::{
            PARAM_ARGUMENTS, PARAM_NAME, PARAM_RESPONSES, PARAM_STATE, PARAM_URI,
        };
        let at = |i| outline.inner_span(i).map(|(s, e)| Span(s, e));
        NamedSpans {
            name: at(if uri { PARAM_URI } else { PARAM_NAME }),
            arguments: at(PARAM_ARGUMENTS),
            state: at(PARAM_STATE),
            responses: at(PARAM_RESPONSES),
        }
    }
}

/// A compact span of the frame: start and end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span(u32, u32);

impl Span {
    /// The bytes of `frame` it covers.
    pub(super) fn get(self, frame: &[u8]) -> Option<&[u8]> {
        frame.get(self.0 as usize..self.1 as usize)
    }
}

/// The `params` of `tools/call` and `prompts/get`: `name` (a string) and
/// `arguments` (an object, or absent/null); `None` when malformed.
pub(super) fn named_call<'f>(
    frame: &'f [u8],
    params: Option<Range<usize>>,
    named: &NamedSpans,
) -> Option<(JsonStr<'f>, Option<Value<'f>>)> {
    frame.get(params?)?;
    let name = Value::trusted(named.name?.get(frame)?).as_str()?;
    let arguments = match named.arguments {
        Some(r) => Some(Value::trusted(r.get(frame)?)),
        None => None,
    };
    let args = match arguments {
        None => None,
        Some(a) if a.is_null() => None,
        Some(a) if a.kind() == Kind::Object => Some(a),
        Some(_) => return None,
    };
    Some((name, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans_of(frame: &[u8], parts: &[&str]) -> std::vec::Vec<Option<Range<usize>>> {
        let text = core::str::from_utf8(frame).unwrap();
        parts
            .iter()
            .map(|p| text.find(p).map(|i| i..i + p.len()))
            .collect()
    }

    #[test]
    fn span_is_the_offset_of_a_sub_slice() {
        let whole = b"0123456789";
        assert_eq!(span(whole, &whole[3..7]), 3..7);
        assert_eq!(span(whole, &whole[..0]), 0..0);
        assert_eq!(span(whole, &whole[10..]), 10..10);
    }

    #[test]
    fn split_spans_in_any_order() {
        let mut frame = *b"aaa-bbbb-cc-d";
        let s = spans_of(&frame, &["cc", "aaa", "d", "bbbb"]);
        let [c, a, d, b] = split_spans(
            &mut frame,
            [s[0].clone(), s[1].clone(), s[2].clone(), s[3].clone()],
        );
        assert_eq!(a.as_deref(), Some(&b"aaa"[..]));
        assert_eq!(b.as_deref(), Some(&b"bbbb"[..]));
        assert_eq!(c.as_deref(), Some(&b"cc"[..]));
        assert_eq!(d.as_deref(), Some(&b"d"[..]));
        // The slices are the frame's own bytes.
        c.unwrap()[0] = b'X';
        assert_eq!(&frame, b"aaa-bbbb-Xc-d");
    }

    #[test]
    fn split_spans_absent_empty_and_adjacent() {
        let mut frame = *b"abcdef";
        let [x, none, y, empty] =
            split_spans(&mut frame, [Some(0..3), None, Some(3..6), Some(6..6)]);
        assert_eq!(x.as_deref(), Some(&b"abc"[..]));
        assert_eq!(none, None);
        assert_eq!(y.as_deref(), Some(&b"def"[..]));
        assert_eq!(empty.as_deref(), Some(&b""[..]));
    }

    #[test]
    fn split_spans_refuses_overlap_reversal_and_overrun() {
        let mut frame = *b"abcdef";
        // Overlapping: the second (by start) is dropped, the first kept.
        let [a, b] = split_spans(&mut frame, [Some(0..4), Some(2..6)]);
        assert_eq!(a.as_deref(), Some(&b"abcd"[..]));
        assert_eq!(b, None);
        // Reversed and out-of-range spans yield nothing and do not disturb
        // the others.
        #[allow(clippy::reversed_empty_ranges)]
        let [r, over, ok] = split_spans(&mut frame, [Some(4..2), Some(5..99), Some(0..1)]);
        assert_eq!((r, over), (None, None));
        assert_eq!(ok.as_deref(), Some(&b"a"[..]));
        // Every span of an empty frame but the empty one is refused.
        let [e, f] = split_spans(&mut [], [Some(0..0), Some(0..1)]);
        assert_eq!((e.as_deref(), f), (Some(&b""[..]), None));
    }

    #[test]
    fn decode_spans_unescapes_in_place() {
        let mut frame = *br#"{"a":"x\u0041y","b":"\n"}"#;
        // String spans are the characters between the quotes.
        let s = spans_of(&frame, &[r#"x\u0041y"#, r#"\n"#]);
        let [a, b] = decode_spans(&mut frame, [s[0].clone(), s[1].clone()]);
        assert_eq!(a, Some("xAy"));
        assert_eq!(b, Some("\n"));
    }

    #[test]
    fn named_spans_take_the_first_of_each() {
        let frame = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"a","x":1,"_meta":{},"name":"b","arguments":{"k":2},"uri":"u"}}"#;
        let mut outline = json::Outline::new(&crate::mcp::envelope::OUTLINE_KEYS);
        json::validate_outlined(frame, &json::Limits::DEFAULT, &mut outline).unwrap();
        let named = NamedSpans::outlined(&outline, false);
        let text = |s: Option<Span>| s.and_then(|s| s.get(frame));
        assert_eq!(text(named.name), Some(&br#""a""#[..]));
        assert_eq!(text(named.arguments), Some(&br#"{"k":2}"#[..]));
        assert!(named.state.is_none() && named.responses.is_none());
        let by_uri = NamedSpans::outlined(&outline, true);
        assert_eq!(text(by_uri.name), Some(&br#""u""#[..]));
    }

    #[test]
    fn progress_tokens_strings_and_integers_only() {
        let meta = |raw: &'static [u8]| {
            crate::mcp::envelope::MetaKeys::of(Some(Value::trusted(raw))).progress
        };
        assert_eq!(
            progress_token(meta(br#"{"progressToken":"t1"}"#)).as_deref(),
            Some(&br#""t1""#[..])
        );
        assert_eq!(
            progress_token(meta(br#"{"progressToken":-7}"#)).as_deref(),
            Some(&b"-7"[..])
        );
        assert_eq!(progress_token(meta(br#"{"progressToken":1.5}"#)), None);
        assert_eq!(progress_token(meta(br#"{"progressToken":null}"#)), None);
        assert_eq!(progress_token(None), None);
    }
}
