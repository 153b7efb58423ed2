//! Pagination: opaque, tamper-evident cursors and page writing.
//!
//! A cursor is `INDEX-TAG`, where TAG is HMAC-SHA256 (first 64 bits) of (list, index,
//! list length) under the server's cursor key. A cursor edited by the client,
//! taken from another list, or past the end is rejected with `-32602`.

use super::Server;
use super::out::{Data, Out, Wrote};
use crate::error::INVALID_PARAMS;
use crate::mcp::{Cache, ProtocolVersion};
use crate::wire::emit::Writer;
use crate::wire::json::{JsonStr, Value};

/// Which list a cursor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum List {
    Tools = 1,
    Resources = 2,
    Templates = 3,
    Prompts = 4,
}

/// The key of the cursor tags: 16 bytes of two words, or a secret.
pub(crate) enum TagKey<'s> {
    Bytes([u8; 16]),
    Secret(&'s [u8]),
}

impl TagKey<'_> {
    pub(crate) fn words(key: [u64; 2]) -> Self {
        let mut k = [0u8; 16];
        for (dst, src) in k.chunks_exact_mut(8).zip(key) {
            dst.copy_from_slice(&src.to_le_bytes());
        }
        TagKey::Bytes(k)
    }

    fn bytes(&self) -> &[u8] {
        match self {
            TagKey::Bytes(k) => k,
            TagKey::Secret(k) => k,
        }
    }
}

/// Room kept free while writing items: `],"nextCursor":"<20 digits>-<16 hex>"}`
/// plus the envelope's closing and newline.
const SUFFIX_RESERVE: usize = 72;

fn tag(key: &[u8], list: List, index: usize, total: usize) -> u64 {
    use hmac::Mac;
    let k = key;
    // HMAC-SHA256 (already linked for requestState) truncated to 64 bits:
    // an edited cursor is caught with probability 1 - 2^-64, and with a
    // secret key a forged one too (see `Server::cursor_key`).
    let parts: [&[u8]; 4] = [
        b"picomcp cursor",
        &[list as u8],
        &(index as u64).to_le_bytes(),
        &(total as u64).to_le_bytes(),
    ];
    let Some(m) = crate::seal::mac(k, &parts) else {
        return 0;
    };
    let mac = m.finalize().into_bytes();
    let mut t = [0u8; 8];
    t.copy_from_slice(mac.get(..8).unwrap_or(&[0; 8]));
    u64::from_le_bytes(t)
}

/// Decode a cursor for `list` of `total` items: the start index.
pub(crate) fn decode(key: &[u8], list: List, total: usize, cursor: JsonStr<'_>) -> Option<usize> {
    let mut buf = [0u8; 40];
    let text = cursor.decode_into(&mut buf)?;
    // A byte search: `str`'s `char` patterns link core's searcher.
    let dash = text.bytes().position(|b| b == b'-')?;
    let (index, hex) = (text.get(..dash)?, text.get(dash + 1..)?);
    if index.is_empty() || hex.len() != 16 || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index = index.bytes().try_fold(0usize, |n, d| {
        n.checked_mul(10)?.checked_add(usize::from(d - b'0'))
    })?;
    // Compared as the text we wrote (cursors are opaque: returned verbatim).
    (index > 0 && index < total && hex.as_bytes() == tag_hex(tag(key, list, index, total)))
        .then_some(index)
}

/// A tag as 16 lowercase hex digits.
fn tag_hex(t: u64) -> [u8; 16] {
    crate::codec::hex_encode(&t.to_be_bytes())
}

fn write_cursor(w: &mut Writer<'_>, key: &[u8], list: List, index: usize, total: usize) {
    w.raw(b"\"");
    w.u64(index as u64);
    w.raw(b"-");
    w.raw(&tag_hex(tag(key, list, index, total)));
    w.raw(b"\"");
}

/// The first item alone does not fit the output buffer.
pub(crate) struct TooLarge;

/// Write `{"KEY":[items from start],"nextCursor"?:...}`: a page ends after
/// `page_size` items or before the first item that would not fit. Items
/// are by index (`visible`, `write_item`), so one copy of this serves
/// every list.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_page(
    w: &mut Writer<'_>,
    name: &str,
    total: usize,
    start: usize,
    page_size: Option<usize>,
    key: &[u8],
    list: List,
    visible: &dyn Fn(usize) -> bool,
    write_item: &mut dyn FnMut(&mut Writer<'_>, usize),
) -> Result<Whole, TooLarge> {
    w.raw(b"{");
    w.string(name);
    w.raw(b":[");
    let base = w.reserved();
    w.set_reserve(base + SUFFIX_RESERVE);
    let mut written = 0;
    let mut next = None;
    for i in start..total {
        if !visible(i) {
            continue;
        }
        if page_size.is_some_and(|p| written >= p) {
            next = Some(i);
            break;
        }
        let before = w.len();
        if written > 0 {
            w.raw(b",");
        }
        write_item(w, i);
        if w.is_overflowed() {
            w.set_reserve(base);
            if written == 0 {
                return Err(TooLarge);
            }
            w.truncate(before);
            next = Some(i);
            break;
        }
        written += 1;
    }
    w.set_reserve(base);
    w.raw(b"]");
    if let Some(i) = next {
        w.raw(b",\"nextCursor\":");
        write_cursor(w, key, list, i, total);
    }
    w.raw(b"}");
    Ok(Whole(next.is_none()))
}

/// Whether a written page holds the rest of its list (no `nextCursor`).
pub(crate) struct Whole(pub(crate) bool);

impl<S> Server<'_, S> {
    /// Answer a list request over `items`: a thin typed front for
    /// [`list_page`](Self::list_page).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn list<T>(
        &self,
        resp: Out<'_, '_>,
        cursor: Option<Value<'_>>,
        name: &str,
        items: &[T],
        kind: List,
        cache: Option<Cache>,
        version: ProtocolVersion,
        visible: impl Fn(&T) -> bool,
        mut write_item: impl FnMut(&mut Writer<'_>, &T),
    ) -> Wrote {
        self.list_page(
            resp,
            cursor,
            name,
            items.len(),
            (kind, version),
            cache,
            &|i| items.get(i).is_some_and(&visible),
            &mut |w, i| {
                if let Some(item) = items.get(i) {
                    write_item(w, item);
                }
            },
        )
    }

    /// The one (untyped) copy of list answering.
    #[allow(clippy::too_many_arguments)]
    fn list_page(
        &self,
        resp: Out<'_, '_>,
        cursor: Option<Value<'_>>,
        name: &str,
        total: usize,
        (kind, version): (List, ProtocolVersion),
        cache: Option<Cache>,
        visible: &dyn Fn(usize) -> bool,
        write_item: &mut dyn FnMut(&mut Writer<'_>, usize),
    ) -> Wrote {
        let start = match cursor {
            None => 0,
            Some(c) => match c
                .as_str()
                .and_then(|c| decode(self.cursor_tag_key().bytes(), kind, total, c))
            {
                Some(i) => i,
                None => {
                    return resp.error(INVALID_PARAMS, format_args!("Invalid cursor"), Data::None);
                }
            },
        };
        let mut ok = true;
        let key = self.cursor_tag_key();
        let page = self.page_size;
        // Only a first page can be kept (see `ListCache`).
        let pages = self.id.kept.filter(|_| start == 0);
        let wrote = resp.result_cached(
            |w| {
                if pages.is_some_and(|p| p.write(kind as u8, version, w)) {
                    return;
                }
                let at = w.len();
                ok = match write_page(
                    w,
                    name,
                    total,
                    start,
                    page,
                    key.bytes(),
                    kind,
                    visible,
                    write_item,
                ) {
                    Ok(Whole(whole)) => {
                        if let Some(p) = pages.filter(|_| whole && !w.is_overflowed()) {
                            p.keep(kind as u8, version, w.as_bytes().get(at..).unwrap_or(&[]));
                        }
                        true
                    }
                    Err(TooLarge) => false,
                };
            },
            cache,
        );
        if ok { wrote } else { Wrote::Failed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{Limits, Value};

    #[test]
    fn cursors_round_trip_and_reject_tampering() {
        let key = TagKey::words([1, 2]);
        let key = key.bytes();
        let mut buf = [0u8; 64];
        let mut w = Writer::new(&mut buf);
        write_cursor(&mut w, key, List::Tools, 7, 10);
        let n = w.finish().unwrap_or(0);
        let v = Value::parse(&buf[..n], &Limits::DEFAULT).unwrap();
        let c = v.as_str().unwrap();
        assert_eq!(decode(key, List::Tools, 10, c), Some(7));
        assert_eq!(decode(key, List::Prompts, 10, c), None, "another list");
        assert_eq!(decode(key, List::Tools, 11, c), None, "another length");
        assert_eq!(
            decode(TagKey::words([9, 9]).bytes(), List::Tools, 10, c),
            None,
            "another key"
        );
        assert_eq!(
            decode(
                TagKey::Secret(b"a secret of the application").bytes(),
                List::Tools,
                10,
                c
            ),
            None,
            "a secret key"
        );
        let raw = core::str::from_utf8(c.raw()).unwrap();
        let forged = raw.replacen('7', "8", 1);
        let quoted = std::format!("\"{forged}\"");
        let v = Value::parse(quoted.as_bytes(), &Limits::DEFAULT).unwrap();
        assert_eq!(
            decode(key, List::Tools, 10, v.as_str().unwrap()),
            None,
            "edited index"
        );
    }
}
