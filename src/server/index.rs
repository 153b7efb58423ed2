//! Finding a tool by name in constant time: [`ToolIndex`], a hash table in
//! memory the caller gives the server
//! ([`Server::tool_index`](crate::Server::tool_index)).
//!
//! Without it a call looks its tool up by walking the registry, so a hit
//! costs more the more tools there are. The index is built once, by the
//! first call that looks a tool up, from the `const` registry: open
//! addressing over `SLOTS` atomic slots, a hash of the name (a word at a
//! time on 64-bit targets, FNV-1a on small ones), linear probing; each slot
//! keeps 12 bits of its name's hash, so a probe passes other names without
//! comparing them. Registries of up to 1,048,574 tools are indexed.
//! No lock and no `unsafe`: the builder claims the table with one
//! compare-and-swap, fills it and publishes it with a release store; a call
//! that finds it not yet published walks the registry as without an index.
//! The index names the first tool of each name, as the walk would find it;
//! when that tool is not offered to the request's protocol version (a later
//! one of the same name may be), or the name has escapes, the walk decides.
//! A table with fewer than twice as many slots as tools is not built (every
//! lookup walks), nor on targets without compare-and-swap (ARMv6-M).

use core::sync::atomic::{AtomicU8, AtomicU32, Ordering};

/// Room to find each of a server's tools by name in constant time: `SLOTS`
/// × 4 bytes, at least twice the number of tools (a power of two is not
/// needed). In a `static`:
///
/// ```
/// use picomcp::server::ToolIndex;
/// use picomcp::{Server, ServerInfo};
/// static INDEX: ToolIndex<1024> = ToolIndex::new(); // up to 512 tools
/// static SERVER: Server<'static, ()> =
///     Server::new(ServerInfo::new("Many tools", "1.0.0"), ()).tool_index(&INDEX);
/// ```
#[derive(Debug)]
pub struct ToolIndex<const SLOTS: usize> {
    /// Registry position + 1 of the tool hashed here, and a tag of its
    /// name's hash ([`POSITIONS`]); 0: empty.
    slots: [AtomicU32; SLOTS],
    state: AtomicU8,
}

const EMPTY: u8 = 0;
#[cfg_attr(not(target_has_atomic = "8"), allow(dead_code))]
const BUILDING: u8 = 1;
const READY: u8 = 2;
/// Too small for the registry (or no compare-and-swap): never used.
const UNUSABLE: u8 = 3;

impl<const SLOTS: usize> ToolIndex<SLOTS> {
    /// An empty index (built on first use).
    pub const fn new() -> Self {
        Self {
            slots: [const { AtomicU32::new(0) }; SLOTS],
            state: AtomicU8::new(EMPTY),
        }
    }

    /// Whether the index is built and in use.
    pub fn is_ready(&self) -> bool {
        self.state.load(Ordering::Acquire) == READY
    }
}

impl<const SLOTS: usize> Default for ToolIndex<SLOTS> {
    fn default() -> Self {
        Self::new()
    }
}

/// A name's hash: on 64-bit targets eight bytes at a time (the last eight
/// overlapping, the length mixed in; with FNV-1a byte by byte, and slots
/// without tags, a hit with a 64-character name cost 160 instructions
/// more, `scripts/registry_scale.sh`), FNV-1a on small ones (flash). Only
/// a hint: the names are compared.
#[cfg(target_pointer_width = "64")]
fn hash(name: &[u8]) -> u32 {
    use crate::wire::swar::{two_words, word_at};
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let n = name.len();
    let mut h = (n as u64).wrapping_mul(K);
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            h = mix(h, word_at::<8>(name, at));
            at += 8;
        }
        h = mix(h, word_at::<8>(name, n - 8));
    } else if n >= 4 {
        let [a, b] = two_words(name);
        h = mix(h, a | (b << 32));
    } else {
        let w = name
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i));
        h = mix(h, w);
    }
    // A multiply moves a byte's difference only upwards: fold the high
    // half down twice (MurmurHash3's finish), so the table's low bits see
    // every byte.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    (h ^ (h >> 33)) as u32
}

/// FNV-1a, 32 bits.
#[cfg(not(target_pointer_width = "64"))]
fn hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in name {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// A slot's low bits: the registry position + 1 of the tool hashed there
/// (0: empty); its other bits, the high bits of the name's hash (a tag).
/// So at most 1,048,574 tools are indexed (a larger registry is walked).
const POSITIONS: u32 = (1 << 20) - 1;

/// The tag of a name of hash `h` (or a slot's, `v`): the high 12 bits.
#[inline]
fn tag(h: u32) -> u32 {
    h & !POSITIONS
}

/// The registry position a slot holds (`v` not 0).
#[inline]
fn position(v: u32) -> usize {
    ((v & POSITIONS) as usize).wrapping_sub(1)
}

/// What the server asks of a [`ToolIndex`], whatever its size.
pub(crate) trait Lookup {
    /// The registry position of the first tool named `name` (`names(i)` is
    /// the name of tool `i`, `count` the number of tools), building the
    /// index on first use. `Err(())`: no answer from the index (not built
    /// yet, or unusable): walk the registry.
    fn find<'n>(
        &self,
        name: &[u8],
        count: usize,
        names: &dyn Fn(usize) -> &'n [u8],
    ) -> Result<Option<usize>, ()>;
}

impl<const SLOTS: usize> ToolIndex<SLOTS> {
    /// Fill the table (the one builder does).
    #[cfg_attr(not(target_has_atomic = "8"), allow(dead_code))]
    fn build<'n>(&self, count: usize, names: &dyn Fn(usize) -> &'n [u8]) -> bool {
        if SLOTS == 0 || count > SLOTS / 2 || count >= POSITIONS as usize {
            return false;
        }
        for i in 0..count {
            let name = names(i);
            let h = hash(name);
            let mut at = h as usize % SLOTS;
            loop {
                let Some(slot) = self.slots.get(at) else {
                    return false;
                };
                match slot.load(Ordering::Relaxed) {
                    0 => {
                        slot.store(tag(h) | (i as u32 + 1), Ordering::Relaxed);
                        break;
                    }
                    // A name already indexed: the first stays.
                    v if names(position(v)) == name => break,
                    _ => at = (at + 1) % SLOTS,
                }
            }
        }
        true
    }
}

impl<const SLOTS: usize> Lookup for ToolIndex<SLOTS> {
    fn find<'n>(
        &self,
        name: &[u8],
        count: usize,
        names: &dyn Fn(usize) -> &'n [u8],
    ) -> Result<Option<usize>, ()> {
        match self.state.load(Ordering::Acquire) {
            READY => {}
            EMPTY => {
                #[cfg(target_has_atomic = "8")]
                if self
                    .state
                    .compare_exchange(EMPTY, BUILDING, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    let next = if self.build(count, names) {
                        READY
                    } else {
                        UNUSABLE
                    };
                    self.state.store(next, Ordering::Release);
                }
                #[cfg(not(target_has_atomic = "8"))]
                self.state.store(UNUSABLE, Ordering::Release);
                return Err(());
            }
            _ => return Err(()),
        }
        let h = hash(name);
        let mut at = h as usize % SLOTS;
        // At most every slot once (the table is at most half full, so an
        // empty slot ends the probe long before).
        for _ in 0..SLOTS {
            match self.slots.get(at).map(|s| s.load(Ordering::Relaxed)) {
                None | Some(0) => return Ok(None),
                Some(v) => {
                    // Another name's slot is passed over on its tag, most
                    // often without comparing the names.
                    let i = position(v);
                    if tag(v) == tag(h) && i < count && names(i) == name {
                        return Ok(Some(i));
                    }
                }
            }
            at = (at + 1) % SLOTS;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 5] = ["get_author", "top", "reserve", "top", "blurb"];

    fn names(i: usize) -> &'static [u8] {
        NAMES[i].as_bytes()
    }

    #[test]
    fn finds_the_first_tool_of_each_name_once_built() {
        let index: ToolIndex<16> = ToolIndex::new();
        // The first lookup builds it and walks.
        assert_eq!(index.find(b"top", 5, &names), Err(()));
        assert!(index.is_ready());
        for (i, n) in NAMES.iter().enumerate() {
            let first = NAMES.iter().position(|m| m == n).unwrap();
            assert_eq!(index.find(n.as_bytes(), 5, &names), Ok(Some(first)), "{i}");
        }
        assert_eq!(index.find(b"nothing", 5, &names), Ok(None));
        assert_eq!(index.find(b"", 5, &names), Ok(None));
    }

    /// A table as full as it may be (half), names of every length up to
    /// past two words: each found at its place through the probes, no
    /// other name found.
    #[test]
    fn a_half_full_table_finds_every_name() {
        extern crate std;
        use std::string::String;
        let names: std::vec::Vec<String> = (0..200)
            .map(|i| std::format!("{}{i}", "t".repeat(i % 19)))
            .collect();
        let index: ToolIndex<400> = ToolIndex::new();
        let of = |i: usize| names[i].as_bytes();
        assert_eq!(index.find(b"x", names.len(), &of), Err(()));
        assert!(index.is_ready());
        for (i, n) in names.iter().enumerate() {
            assert_eq!(
                index.find(n.as_bytes(), names.len(), &of),
                Ok(Some(i)),
                "{n}"
            );
            let other = std::format!("{n}x");
            assert_eq!(index.find(other.as_bytes(), names.len(), &of), Ok(None));
        }
    }

    #[test]
    fn a_table_too_small_is_never_used() {
        let index: ToolIndex<9> = ToolIndex::new();
        assert_eq!(index.find(b"top", 5, &names), Err(()));
        assert!(!index.is_ready());
        assert_eq!(index.find(b"top", 5, &names), Err(()));
        let none: ToolIndex<0> = ToolIndex::new();
        assert_eq!(none.find(b"top", 5, &names), Err(()));
    }
}
