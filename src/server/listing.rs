//! Listings written once: [`ListCache`], memory the caller gives the server
//! ([`Server::list_cache`](crate::Server::list_cache)) to keep the first page
//! of each list, per protocol version, as the bytes it was written as.
//!
//! A registry is `const` data, so `tools/list` (and the resource, template
//! and prompt lists) give the same page every time for a given protocol
//! version: the descriptors and schemas are written as JSON once, the first
//! time a page is asked for, and copied from then on.
//!
//! No lock and no `unsafe`: the bytes are kept in atomic words. The first
//! request for a page claims an entry and room for it, writes the page as
//! usual, copies it in and publishes the entry (a release store); a request
//! that finds the entry published (an acquire load) copies the page out. A
//! request that finds it not yet published writes the page itself. Entries
//! are never evicted: when the entries or the words are used up, further
//! pages are written every time, as without a cache (and on targets without
//! atomic read-modify-write, ARMv6-M, nothing is kept). Only a whole first
//! page (no cursor given, none needed) is kept; a page that does not fit the
//! writer it is copied into is written afresh (and then fails or is cut the
//! usual way).

use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Bytes per word of page text: a machine word.
const W: usize = core::mem::size_of::<usize>();

/// Words copied per turn of the unrolled copy out of the cache.
const BLOCK: usize = 8;

use crate::mcp::ProtocolVersion;
use crate::wire::emit::Writer;

/// Room for the first page of each list of a server, per protocol version:
/// `WORDS` machine words of page text (4 bytes each on 32-bit targets, 8 on
/// 64-bit ones) and `ENTRIES` pages: `WORDS` + 3 × `ENTRIES` + 2 words, in a
/// `static`:
///
/// ```
/// use picomcp::server::ListCache;
/// use picomcp::{Server, ServerInfo};
/// // 16 KiB of page text on a 64-bit target (2,048 words): the bookshop's
/// // four lists under each of the five protocol versions, and its
/// // 2026-07-28 stamp, take about 11 KB and 21 of the 24 entries.
/// static LISTS: ListCache<2048, 24> = ListCache::new();
/// static SERVER: Server<'static, ()> =
///     Server::new(ServerInfo::new("Bookshop", "1.0.0"), ()).list_cache(&LISTS);
/// ```
///
/// What a page costs to keep is its length in bytes ([`ListCache::kept`]
/// tells how much a server's pages took). A server that answers
/// 2026-07-28 requests keeps one more entry: the `_meta` with its identity
/// that stamps every result (about 100 bytes for the bookshop). Give each
/// server its own cache: what is kept is that server's.
#[derive(Debug)]
pub struct ListCache<const WORDS: usize, const ENTRIES: usize> {
    words: [AtomicUsize; WORDS],
    /// Words claimed so far.
    #[cfg_attr(not(target_has_atomic = "ptr"), allow(dead_code))]
    used: AtomicUsize,
    entries: [Entry; ENTRIES],
    /// Entries claimed so far.
    claimed: AtomicUsize,
}

/// One kept page: its key (0 while not published), first word and length.
#[derive(Debug)]
struct Entry {
    key: AtomicU32,
    start: AtomicUsize,
    len: AtomicUsize,
}

impl<const WORDS: usize, const ENTRIES: usize> ListCache<WORDS, ENTRIES> {
    /// An empty cache.
    pub const fn new() -> Self {
        Self {
            words: [const { AtomicUsize::new(0) }; WORDS],
            used: AtomicUsize::new(0),
            entries: [const {
                Entry {
                    key: AtomicU32::new(0),
                    start: AtomicUsize::new(0),
                    len: AtomicUsize::new(0),
                }
            }; ENTRIES],
            claimed: AtomicUsize::new(0),
        }
    }
}

impl<const WORDS: usize, const ENTRIES: usize> ListCache<WORDS, ENTRIES> {
    /// Pages kept so far, and the bytes of page text they take (to size
    /// `WORDS` and `ENTRIES`: a page that finds no room is written every
    /// time).
    pub fn kept(&self) -> (usize, usize) {
        let claimed = self.claimed.load(Ordering::Acquire).min(ENTRIES);
        let mut bytes = 0;
        let mut pages = 0;
        for e in self.entries.get(..claimed).unwrap_or(&[]) {
            if e.key.load(Ordering::Acquire) != 0 {
                pages += 1;
                bytes += e.len.load(Ordering::Relaxed);
            }
        }
        (pages, bytes)
    }
}

impl<const WORDS: usize, const ENTRIES: usize> Default for ListCache<WORDS, ENTRIES> {
    fn default() -> Self {
        Self::new()
    }
}

/// A page's key: nonzero. `list` tells the lists apart (the server's
/// list kind, as a number).
fn key(list: u8, version: ProtocolVersion) -> u32 {
    u32::from(list) << 8 | (version as u32 + 1)
}

/// What the server asks of a [`ListCache`], whatever its sizes.
pub(crate) trait Pages {
    /// Copy the kept page for `(list, version)` to `w`: `false` if there is
    /// none (or it does not fit `w`; then `w` is as it was).
    fn write(&self, list: u8, version: ProtocolVersion, w: &mut Writer<'_>) -> bool;
    /// Keep `page` for `(list, version)` if there is room.
    fn keep(&self, list: u8, version: ProtocolVersion, page: &[u8]);
}

impl<const WORDS: usize, const ENTRIES: usize> Pages for ListCache<WORDS, ENTRIES> {
    fn write(&self, list: u8, version: ProtocolVersion, w: &mut Writer<'_>) -> bool {
        let want = key(list, version);
        let claimed = self.claimed.load(Ordering::Acquire).min(ENTRIES);
        let Some(entry) = self
            .entries
            .get(..claimed)
            .and_then(|es| es.iter().find(|e| e.key.load(Ordering::Acquire) == want))
        else {
            return false;
        };
        let (start, len) = (
            entry.start.load(Ordering::Relaxed),
            entry.len.load(Ordering::Relaxed),
        );
        let whole = len / W;
        let Some((full, last)) = self
            .words
            .get(start..start + len.div_ceil(W))
            .and_then(|words| words.split_at_checked(whole))
        else {
            return false;
        };
        let Some(dst) = w.claim(len) else {
            return false;
        };
        // `dst` is `len` bytes: the whole words, then the last word's bytes.
        let (body, tail) = dst.split_at_mut((whole * W).min(dst.len()));
        // Whole words eight a turn: atomic loads are not vectorized, so the
        // unrolled loop is what keeps the copy near two instructions a word
        // (one word a turn took seven).
        let mut blocks = body.chunks_exact_mut(BLOCK * W);
        let runs = full.chunks_exact(BLOCK);
        let rest = runs.remainder();
        for (block, run) in (&mut blocks).zip(runs) {
            for (chunk, word) in block.chunks_exact_mut(W).zip(run) {
                chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
            }
        }
        for (chunk, word) in blocks.into_remainder().chunks_exact_mut(W).zip(rest) {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        if let Some(word) = last.first() {
            let bytes = word.load(Ordering::Relaxed).to_le_bytes();
            for (d, b) in tail.iter_mut().zip(bytes) {
                *d = b;
            }
        }
        true
    }

    #[cfg(not(target_has_atomic = "ptr"))]
    fn keep(&self, _: u8, _: ProtocolVersion, _: &[u8]) {
        // No atomic read-modify-write (ARMv6-M): two contexts could claim
        // the same words, so nothing is kept and every page is written.
    }

    #[cfg(target_has_atomic = "ptr")]
    fn keep(&self, list: u8, version: ProtocolVersion, page: &[u8]) {
        let n = page.len().div_ceil(W);
        let at = self.claimed.fetch_add(1, Ordering::AcqRel);
        let Some(entry) = self.entries.get(at) else {
            // Full: undo the claim so the counter cannot wrap.
            self.claimed.fetch_sub(1, Ordering::AcqRel);
            return;
        };
        let start = self.used.fetch_add(n, Ordering::AcqRel);
        let Some(words) = self.words.get(start..start + n) else {
            // Out of words: the entry stays unpublished (never matched).
            return;
        };
        for (word, chunk) in words.iter().zip(page.chunks(W)) {
            let mut b = [0u8; W];
            for (d, s) in b.iter_mut().zip(chunk) {
                *d = *s;
            }
            word.store(usize::from_le_bytes(b), Ordering::Relaxed);
        }
        entry.start.store(start, Ordering::Relaxed);
        entry.len.store(page.len(), Ordering::Relaxed);
        entry.key.store(key(list, version), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(cache: &dyn Pages, list: u8, v: ProtocolVersion, cap: usize) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; cap];
        let mut w = Writer::new(&mut buf);
        w.raw(b"<");
        if !cache.write(list, v, &mut w) {
            return None;
        }
        let n = w.finish().ok()?;
        Some(buf[1..n].to_vec())
    }

    #[test]
    fn copies_pages_of_every_length() {
        // Across the unrolled blocks' and the words' boundaries (under
        // Miri, the lengths one either side of a word's end only).
        let lengths = (0..=3 * BLOCK * W + 1).filter(|n| !cfg!(miri) || (n + 1) % W <= 2);
        for len in lengths {
            let cache: ListCache<64, 1> = ListCache::new();
            let page: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            cache.keep(1, ProtocolVersion::V2025_11_25, &page);
            let got = written(&cache, 1, ProtocolVersion::V2025_11_25, 256);
            assert_eq!(got.as_deref(), Some(&page[..]), "{len} bytes");
        }
    }

    #[test]
    fn keeps_pages_by_list_and_version_until_full() {
        let cache: ListCache<8, 2> = ListCache::new();
        let v = ProtocolVersion::V2025_11_25;
        assert_eq!(written(&cache, 1, v, 64), None);
        cache.keep(1, v, b"{\"tools\":[1]}");
        assert_eq!(
            written(&cache, 1, v, 64).as_deref(),
            Some(&b"{\"tools\":[1]}"[..])
        );
        // Another version or list is another page.
        assert_eq!(written(&cache, 1, ProtocolVersion::V2024_11_05, 64), None);
        assert_eq!(written(&cache, 4, v, 64), None);
        // A page that does not fit the writer is not copied.
        assert_eq!(written(&cache, 1, v, 8), None);
        // Out of words: not kept (13 bytes took 2 or 4 of the 8 words).
        cache.keep(4, v, &[b'x'; 8 * W]);
        assert_eq!(written(&cache, 4, v, 64), None);
        // Out of entries: not kept, and the claim counter does not grow.
        cache.keep(2, v, b"{}");
        assert_eq!(written(&cache, 2, v, 64), None);
        assert_eq!(cache.claimed.load(Ordering::Relaxed), 2);
    }
}
