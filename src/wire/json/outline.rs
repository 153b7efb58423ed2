//! The outline: the members of a top-level object, of one of its
//! members' object, and of one of that one's, that a caller names, picked
//! out by the validation pass as it meets their keys.

use core::ops::Range;

#[cfg(target_pointer_width = "64")]
use super::lex::skip_ws;
use super::string::JsonStr;
use super::value::Value;

/// Keys an [`Outline`] records slots for: at most [`SLOTS`] per level.
///
/// The three levels are one array, and each level's parent slot another
/// ([`OutlineKeys::new`] fills both): the validator asks for a level's
/// names at every recorded member, and an index into an array is a few
/// instructions fewer than a `match` on the level (52 a request of
/// the stdio mix, `scripts/stdio_cost.sh`).
#[derive(Debug)]
pub(crate) struct OutlineKeys {
    /// Members of the top-level object, of its `parent` member's object,
    /// and of that object's `inner_parent` member's object.
    levels: [Level; 3],
    /// Per level, the slot whose object the next level names (`parent`;
    /// `SLOTS + inner_parent`; none, `usize::MAX`, for the third).
    parents: [usize; 3],
}

impl OutlineKeys {
    /// The members of the top-level object (`top`), which of them holds the
    /// object whose members `inner` names (`parent`), and which of those
    /// holds the object whose members `deep` names (`inner_parent`).
    pub(crate) const fn new(
        top: Level,
        parent: usize,
        inner: Level,
        inner_parent: usize,
        deep: Level,
    ) -> Self {
        OutlineKeys {
            levels: [top, inner, deep],
            parents: [parent, SLOTS + inner_parent, usize::MAX],
        }
    }

    /// The top level's names.
    #[cfg(any(test, fuzzing))]
    fn top(&self) -> &Level {
        let [top, _, _] = &self.levels;
        top
    }

    /// The second level's names.
    #[cfg(any(test, fuzzing))]
    fn inner(&self) -> &Level {
        let [_, inner, _] = &self.levels;
        inner
    }

    /// The third level's names.
    #[cfg(any(test, fuzzing))]
    fn deep(&self) -> &Level {
        let [_, _, deep] = &self.levels;
        deep
    }

    /// The first names expected at each level (64-bit targets).
    #[cfg(target_pointer_width = "64")]
    const fn firsts(&self) -> [u8; 3] {
        let [top, inner, deep] = &self.levels;
        [top.first, inner.first, deep.first]
    }
}

/// One level's names, and a table from a key's first byte and length to
/// the one name it can be: a key is told by one comparison, whatever the
/// number of names.
#[derive(Debug)]
pub(crate) struct Level {
    names: &'static [Name],
    /// [`hash`] → the index of the name with that hash, or [`NONE`].
    table: [u8; 16],
    mult: u8,
    /// 64-bit targets: [`hash`] → the name of at most 8 bytes with that
    /// hash, as one word: such a key is told, and its slot filled, inline
    /// in the validator ([`Outline::member`]). (Names up to 16 bytes too,
    /// by two words, or by the first and the last eight bytes: the hit no
    /// better, `ping` 27 to 38 instructions worse, `scripts/list_cost.sh`.)
    #[cfg(target_pointer_width = "64")]
    short: [Short; 16],
    /// 64-bit targets: each name's member as written without spaces
    /// (`"name":`), and the name expected after it ([`Spec`]).
    #[cfg(target_pointer_width = "64")]
    spec: [Spec; SLOTS],
    /// 64-bit targets: the name expected first in an object.
    #[cfg(target_pointer_width = "64")]
    first: u8,
}

/// A name's member head, `"name":` (at most 16 bytes: a name of at most
/// 13), as two little-endian words and their masks, and the index of the
/// name expected next in the same object: the validator tries that head
/// first at each member of a recorded object ([`Outline::expected`]).
/// `len` 0: the name is longer, never expected.
#[cfg(target_pointer_width = "64")]
#[derive(Clone, Copy, Debug)]
struct Spec {
    words: [u64; 2],
    masks: [u64; 2],
    len: u8,
    next: u8,
}

/// A name of at most 8 bytes as the little-endian word of its bytes, with
/// the mask of its length, and its index in its level; or none (`len`
/// [`u8::MAX`]).
#[cfg(target_pointer_width = "64")]
#[derive(Clone, Copy, Debug)]
struct Short {
    word: u64,
    mask: u64,
    len: u8,
    index: u8,
}

impl Level {
    /// The level of `names` (at most [`SLOTS`]). Panics (at compile time,
    /// in a `static`) if no multiplier below 64 hashes them apart.
    #[cfg(test)]
    pub(crate) const fn new(names: &'static [Name]) -> Level {
        assert!(names.len() <= SLOTS, "at most SLOTS names a level");
        Self::hashed(names, &[])
    }

    /// [`Level::new`], where the members of an object are expected in the
    /// order of `cycle` (some of the level's names), round and round: its
    /// first name first, each followed by the next, the last and any name
    /// not in it by the first. The order clients write them in (the
    /// official Python SDK's `jsonrpc`, `id`, `method`, `params`; the
    /// TypeScript SDK's `method`, `params`, `jsonrpc`, `id`, the same
    /// cycle from its third). Only a guess: a member not as expected is
    /// read the ordinary way. Panics (at compile time) if a name of
    /// `cycle` is not one of `names`.
    pub(crate) const fn cycling(names: &'static [Name], cycle: &[&str]) -> Level {
        assert!(names.len() <= SLOTS, "at most SLOTS names a level");
        Self::hashed(names, cycle)
    }

    /// The third level's names: at most [`DEEP_SLOTS`] (its slots ride on
    /// every request's stack too). Panics (at compile time) past that.
    pub(crate) const fn deep(names: &'static [Name]) -> Level {
        assert!(
            names.len() <= DEEP_SLOTS,
            "at most DEEP_SLOTS names the third level"
        );
        Self::hashed(names, &[])
    }

    #[cfg_attr(not(target_pointer_width = "64"), allow(unused_variables))]
    const fn hashed(names: &'static [Name], cycle: &[&str]) -> Level {
        let mut mult = 1;
        loop {
            assert!(mult < 64, "no multiplier below 64 hashes these keys apart");
            if let Some(table) = Self::table(names, mult) {
                return Level {
                    names,
                    table,
                    mult,
                    #[cfg(target_pointer_width = "64")]
                    short: Self::short(names, &table),
                    #[cfg(target_pointer_width = "64")]
                    spec: Self::spec(names, cycle),
                    #[cfg(target_pointer_width = "64")]
                    first: Self::first(names, cycle),
                };
            }
            mult += 1;
        }
    }

    /// The name expected first in an object (see [`Level::cycling`]; the
    /// first name without a cycle).
    #[cfg(target_pointer_width = "64")]
    const fn first(names: &[Name], cycle: &[&str]) -> u8 {
        match cycle {
            [first, ..] => Self::index(names, first),
            [] => 0,
        }
    }

    /// The place of `name` in `names`. Panics (at compile time) when it is
    /// not there.
    // `i < names.len()` (and `get` is not `const`): no panic but the one
    // meant.
    #[cfg(target_pointer_width = "64")]
    #[allow(
        clippy::indexing_slicing,
        clippy::panic,
        reason = "called in `static` items only: a missing name is a compile error"
    )]
    const fn index(names: &[Name], name: &str) -> u8 {
        let mut i = 0;
        while i < names.len() {
            let text = names[i].text;
            if text.len() == name.len() {
                let (a, b) = (text.as_bytes(), name.as_bytes());
                let mut j = 0;
                while j < a.len() && a[j] == b[j] {
                    j += 1;
                }
                if j == a.len() {
                    return i as u8;
                }
            }
            i += 1;
        }
        panic!("a name of the cycle is not one of the level's names")
    }

    /// Each name's member head and the name expected after it (see
    /// [`Level::cycling`]; without a cycle, the next name, the last
    /// followed by the first).
    // `i < names.len() <= SLOTS`, `k < cycle.len()` and `j < 16` (and
    // `get` is not `const`): no panic.
    #[cfg(target_pointer_width = "64")]
    #[allow(clippy::indexing_slicing)]
    const fn spec(names: &[Name], cycle: &[&str]) -> [Spec; SLOTS] {
        let none = Spec {
            words: [0; 2],
            masks: [0; 2],
            len: 0,
            next: 0,
        };
        let mut out = [none; SLOTS];
        let first = Self::first(names, cycle);
        let mut i = 0;
        while i < names.len() {
            out[i].next = if cycle.is_empty() {
                ((i + 1) % names.len()) as u8
            } else {
                first
            };
            i += 1;
        }
        let mut k = 0;
        while k < cycle.len() {
            let at = Self::index(names, cycle[k]) as usize;
            out[at].next = Self::index(names, cycle[(k + 1) % cycle.len()]);
            k += 1;
        }
        let mut i = 0;
        while i < names.len() {
            let text = names[i].text.as_bytes();
            // Only a name of plain bytes (no quote, no control or
            // non-ASCII byte): its head is then exactly a JSON string and
            // its colon.
            let mut plain = true;
            let mut j = 0;
            while j < text.len() {
                plain &= crate::wire::swar::is_plain(text[j]);
                j += 1;
            }
            if plain && text.len() <= 13 {
                let mut head = [0u8; 16];
                head[0] = b'"';
                let mut j = 0;
                while j < text.len() {
                    head[j + 1] = text[j];
                    j += 1;
                }
                head[text.len() + 1] = b'"';
                head[text.len() + 2] = b':';
                let len = text.len() + 3;
                let mut j = 0;
                while j < len {
                    let (w, shift) = (j / 8, 8 * (j % 8));
                    out[i].words[w] |= (head[j] as u64) << shift;
                    out[i].masks[w] |= 0xff << shift;
                    j += 1;
                }
                out[i].len = len as u8;
            }
            i += 1;
        }
        out
    }

    /// The names of at most 8 bytes by their place in `table`.
    // `h < 16` and `table[h]` below `names.len()` (and `get` is not
    // `const`): no panic.
    #[cfg(target_pointer_width = "64")]
    #[allow(clippy::indexing_slicing)]
    const fn short(names: &[Name], table: &[u8; 16]) -> [Short; 16] {
        let none = Short {
            word: 0,
            mask: 0,
            len: u8::MAX,
            index: NONE,
        };
        let mut out = [none; 16];
        let mut h = 0;
        while h < 16 {
            let i = table[h];
            if i != NONE {
                let name = &names[i as usize];
                if name.text.len() <= 8 {
                    out[h] = Short {
                        word: name.words[0],
                        mask: name.masks[0],
                        len: name.text.len() as u8,
                        index: i,
                    };
                }
            }
            h += 1;
        }
        out
    }

    /// The table of `names` under `mult`, if no two names share a hash.
    // `hash` is below 16 and `i` below `names.len()`, at most 8: no panic
    // (and `get` is not `const`).
    #[allow(clippy::indexing_slicing)]
    const fn table(names: &[Name], mult: u8) -> Option<[u8; 16]> {
        let mut table = [NONE; 16];
        let mut i = 0;
        while i < names.len() {
            let b = names[i].text.as_bytes();
            let first = if b.is_empty() { 0 } else { b[0] };
            let h = hash(first, b.len(), mult);
            if table[h] != NONE {
                return None;
            }
            table[h] = i as u8;
            i += 1;
        }
        Some(table)
    }
}

/// A key's place in a [`Level`]'s table: from its first byte (0 when
/// empty) and its length.
#[inline]
const fn hash(first: u8, len: usize, mult: u8) -> usize {
    (first as usize).wrapping_add(len.wrapping_mul(mult as usize)) % 16
}

/// A key an outline picks out: no backslash; on 64-bit targets its first
/// 16 bytes kept as two little-endian words too, so a key is told by
/// comparing words (no `memcmp` call a member; the rest of a longer one
/// compared as bytes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Name {
    text: &'static str,
    /// 64-bit targets only (speed); small ones compare bytes (flash).
    #[cfg(target_pointer_width = "64")]
    words: [u64; 2],
    /// The bytes of `words` that hold the key (a key of this length read
    /// as two words is masked with these).
    #[cfg(target_pointer_width = "64")]
    masks: [u64; 2],
}

impl Name {
    /// `text` as an outline's key. Panics (at compile time, in a `const`)
    /// with a backslash.
    pub(crate) const fn new(text: &'static str) -> Name {
        let mut words = [0u64; 2];
        let mut masks = [0u64; 2];
        let mut rest = text.as_bytes();
        let mut i = 0;
        while let [b, tail @ ..] = rest {
            assert!(*b != b'\\', "an outline key has no backslash");
            let bits = (*b as u64) << (8 * (i % 8));
            let mask = 0xffu64 << (8 * (i % 8));
            if i < 8 {
                words[0] |= bits;
                masks[0] |= mask;
            } else if i < 16 {
                words[1] |= bits;
                masks[1] |= mask;
            }
            rest = tail;
            i += 1;
        }
        #[cfg(not(target_pointer_width = "64"))]
        let _ = (words, masks);
        Name {
            text,
            #[cfg(target_pointer_width = "64")]
            words,
            #[cfg(target_pointer_width = "64")]
            masks,
        }
    }

    /// [`Name::new`] of each of `keys`.
    // `i < N` indexes two arrays of `N` (and `get` is not `const`): no panic.
    #[allow(clippy::indexing_slicing)]
    pub(crate) const fn all<const N: usize>(keys: [&'static str; N]) -> [Name; N] {
        let mut out = [Name::new(""); N];
        let mut i = 0;
        while i < N {
            out[i] = Name::new(keys[i]);
            i += 1;
        }
        out
    }
}

/// `key`'s place in `keys`, a level's names: the slot a reader asks an
/// [`Outline`] for, taken from the same table the level was built from.
/// Panics (at compile time, in a `const`) when `key` is not there.
// `i < keys.len()` (and `get` is not `const`): no panic but the one meant.
#[allow(
    clippy::indexing_slicing,
    clippy::panic,
    reason = "called in `const` items only: a missing key is a compile error"
)]
pub(crate) const fn slot_of(keys: &[&str], key: &str) -> usize {
    let mut i = 0;
    while i < keys.len() {
        let (a, b) = (keys[i].as_bytes(), key.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not one of the level's keys")
}

/// Slots per level.
pub(crate) const SLOTS: usize = 8;

/// Slots of the third level (`params._meta`'s four envelope keys).
pub(crate) const DEEP_SLOTS: usize = 4;

/// No slot open.
const NONE: u8 = u8::MAX;

/// Where the first member of each named key of a validated top-level
/// object (and of its `parent` member's object) has its value, found by the
/// validation pass itself: the envelope and `params` are read from slots,
/// not by walking the frame again, and not by comparing each key with each
/// name a second time. The first of a repeated key keeps its slot (what
/// `Value::get` finds); the repetition is marked. Offsets are `u32` (the
/// slots ride on the stack of every request): a member whose value ends
/// past 4 GiB of input, far past any transport's limit, is not recorded.
#[derive(Clone, Debug)]
pub(crate) struct Outline {
    keys: &'static OutlineKeys,
    /// Value spans: `top`'s slots, then `inner`'s (`SLOTS` each), then
    /// `deep`'s (`DEEP_SLOTS`).
    values: [(u32, u32); 2 * SLOTS + DEEP_SLOTS],
    /// Slots filled (bit `i`: `values[i]`).
    found: u32,
    /// Keys met again after their slot was filled.
    repeated: u32,
    /// The slot whose value is open at depth 1, 2 and 3, or [`NONE`].
    open: [u8; 3],
    /// Bit `d - 1`: members at depth `d` are recorded. Bit 0 always; bit 1
    /// while the open depth-1 member is the first `parent` (depth-2
    /// members are its object's); bit 2 while the open depth-2 member is
    /// that object's first `inner_parent`.
    active: u8,
    /// 64-bit targets: the name each level's next member is expected to
    /// be ([`Outline::expected`]).
    #[cfg(target_pointer_width = "64")]
    next: [u8; 3],
}

impl Outline {
    pub(crate) const fn new(keys: &'static OutlineKeys) -> Self {
        Outline {
            keys,
            values: [(0, 0); 2 * SLOTS + DEEP_SLOTS],
            found: 0,
            repeated: 0,
            open: [NONE; 3],
            active: 1,
            #[cfg(target_pointer_width = "64")]
            next: keys.firsts(),
        }
    }

    /// Forget what was recorded (slots not `found` are never read).
    pub(crate) fn reset(&mut self) {
        self.found = 0;
        self.repeated = 0;
        self.open = [NONE; 3];
        self.active = 1;
        #[cfg(target_pointer_width = "64")]
        {
            self.next = self.keys.firsts();
        }
    }

    /// The value of the first top-level member named `keys.top[i]`.
    #[inline]
    pub(crate) fn top<'a>(&self, input: &'a [u8], i: usize) -> Option<Value<'a>> {
        self.slot(input, i)
    }

    /// The value of the first member named `keys.inner[i]` of the first
    /// `parent` member's object.
    #[inline]
    pub(crate) fn inner<'a>(&self, input: &'a [u8], i: usize) -> Option<Value<'a>> {
        self.slot(input, SLOTS + i)
    }

    /// The value of the first member named `keys.deep[i]` of the first
    /// `inner_parent` member's object (in the first `parent`'s).
    #[inline]
    pub(crate) fn deep<'a>(&self, input: &'a [u8], i: usize) -> Option<Value<'a>> {
        self.slot(input, 2 * SLOTS + i)
    }

    /// Where [`Outline::inner`]'s value lies in the input: `(start, end)`.
    #[inline]
    pub(crate) fn inner_span(&self, i: usize) -> Option<(u32, u32)> {
        let at = SLOTS + i;
        if self.found & (1 << at) == 0 {
            return None;
        }
        self.values.get(at).copied()
    }

    /// Bit `i` set: `keys.top[i]` appears more than once.
    pub(crate) fn repeated_top(&self) -> u32 {
        self.repeated & ((1 << SLOTS) - 1)
    }

    #[inline]
    fn slot<'a>(&self, input: &'a [u8], at: usize) -> Option<Value<'a>> {
        if self.found & (1 << at) == 0 {
            return None;
        }
        let &(start, end) = self.values.get(at)?;
        Some(Value {
            raw: input.get(start as usize..end as usize)?,
        })
    }
}

/// Which of `level`'s names the raw key `input[key..key_end]` is (raw bytes
/// first: a key without an escape is its own content, told by one
/// comparison with the one name its hash allows; only a key with an escape
/// is decoded, and compared with each).
#[inline]
fn pick(level: &Level, input: &[u8], key: usize, key_end: usize) -> Option<usize> {
    let raw = input.get(key..key_end).unwrap_or_default();
    let h = hash(raw.first().copied().unwrap_or(0), raw.len(), level.mult);
    let at = usize::from(level.table.get(h).copied().unwrap_or(NONE));
    if let Some(name) = level.names.get(at)
        && name.text.len() == raw.len()
    {
        #[cfg(target_pointer_width = "64")]
        let same = match input.get(key..).and_then(|b| b.first_chunk::<16>()) {
            // Two word loads, masked to the name's length; a longer name's
            // rest compared as bytes.
            Some(b) => {
                let (lo, hi) = b.split_at(8);
                let word = |c: &[u8]| u64::from_le_bytes(c.try_into().unwrap_or_default());
                word(lo) & name.masks[0] == name.words[0]
                    && word(hi) & name.masks[1] == name.words[1]
                    && raw.get(16..) == name.text.as_bytes().get(16..)
            }
            // The input's end: byte by byte.
            None => raw == name.text.as_bytes(),
        };
        #[cfg(not(target_pointer_width = "64"))]
        let same = raw == name.text.as_bytes();
        if same {
            return Some(at);
        }
    }
    if !crate::wire::swar::has_backslash(raw) {
        return None;
    }
    let raw = JsonStr { raw };
    level.names.iter().position(|n| raw.eq_str(n.text))
}

/// What the validator tells the outline: members of objects at nesting
/// depth 1 to 3, and where values end.
impl Outline {
    /// A member of an object at `depth` (1: the top-level object's): its
    /// key at `key..key_end` (quotes included), its value from `value`.
    /// The first of a name of at most 8 bytes written without an escape is
    /// told inline on 64-bit targets ([`Self::short_name`]); any other key,
    /// by [`Self::member_any`].
    #[inline(always)]
    pub(super) fn member(
        &mut self,
        input: &[u8],
        depth: usize,
        key: usize,
        key_end: usize,
        value: usize,
    ) {
        // Small targets ask in `member_any` whether the member is recorded
        // (one copy of the question).
        if cfg!(target_pointer_width = "64") && !self.records(depth) {
            return;
        }
        let level = depth.wrapping_sub(1);
        #[cfg(target_pointer_width = "64")]
        if let Some(index) = self.short_name(input, level, key, key_end) {
            self.record(level, Some(index), value);
            return;
        }
        self.member_any(input, level, key..key_end, value);
    }

    /// 64-bit targets: the member of an object at `depth` whose key starts
    /// at `pos`, when its level is recorded and it is the member expected
    /// next there, written `"name":` (the level's [`Spec`]): recorded, and
    /// the offset of its value returned. Those bytes are a string without
    /// an escape and its colon, so the key needs no scan (its length
    /// within `max_len`, as a scan would require). `None`: read it the
    /// ordinary way ([`Self::member`]).
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    pub(super) fn expected(
        &mut self,
        input: &[u8],
        depth: usize,
        pos: usize,
        max_len: u32,
    ) -> Option<usize> {
        if !self.records(depth) {
            return None;
        }
        let level = depth.wrapping_sub(1);
        let (names, _) = self.level_names(level);
        let i = usize::from(*self.next.get(level)?);
        let spec = names.spec.get(i)?;
        let head = input.get(pos..)?.first_chunk::<16>()?;
        let (lo, hi) = head.split_at(8);
        let word = |c: &[u8]| u64::from_le_bytes(c.try_into().unwrap_or_default());
        // (`len` 0 has masks of 0, which everything would match.)
        if spec.len == 0
            || word(lo) & spec.masks[0] != spec.words[0]
            || word(hi) & spec.masks[1] != spec.words[1]
            || u32::from(spec.len) - 3 > max_len
        {
            return None;
        }
        let value = skip_ws(input, pos + usize::from(spec.len));
        self.record(level, Some(i), value);
        Some(value)
    }

    /// The names of `level` (0 to 2), and the slot of the member whose
    /// object's members the next level names (none for the third).
    #[inline(always)]
    fn level_names(&self, level: usize) -> (&'static Level, usize) {
        let keys: &'static OutlineKeys = self.keys;
        // Any level past the third is the third's (as callers never ask).
        let i = if level < 3 { level } else { 2 };
        let [_, _, deep] = &keys.levels;
        let names = keys.levels.get(i).unwrap_or(deep);
        let parent = keys.parents.get(i).copied().unwrap_or(usize::MAX);
        (names, parent)
    }

    /// [`Self::member`]'s common case: the index of the name of at most 8
    /// bytes the key at `key..key_end` (quotes included) is, written
    /// without an escape and not yet met at `level`; `None` for
    /// [`Self::member_any`] to decide (an unknown, escaped, repeated or
    /// longer key, or one within 8 bytes of the input's end).
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    fn short_name(&self, input: &[u8], level: usize, key: usize, key_end: usize) -> Option<usize> {
        let len = key_end.wrapping_sub(key).wrapping_sub(2);
        // The word at the key's first byte (a longer key is not a short
        // name: its length differs from any).
        let word = u64::from_le_bytes(*input.get(key + 1..)?.first_chunk::<8>()?);
        let (names, _) = self.level_names(level);
        // The key's first byte is the word's low byte.
        let short = names.short.get(hash(word as u8, len, names.mult))?;
        // (An empty entry's length, `u8::MAX`, is past 8: never a match.)
        if len > 8 || usize::from(short.len) != len || word & short.mask != short.word {
            return None;
        }
        let index = usize::from(short.index);
        let met = self.found & (1 << (level * SLOTS + index)) != 0;
        (!met).then_some(index)
    }

    /// [`Self::member`], any key (at `key`, quotes included) of a member
    /// at `level`.
    #[inline(never)]
    fn member_any(&mut self, input: &[u8], level: usize, key: Range<usize>, value: usize) {
        if cfg!(not(target_pointer_width = "64")) && !self.records(level.wrapping_add(1)) {
            return;
        }
        let (names, _) = self.level_names(level);
        let index = pick(names, input, key.start + 1, key.end.saturating_sub(1));
        self.record(level, index, value);
    }

    /// A member at `level` is its level's name `index` (or none of them):
    /// the first of a name gets its slot, from `value`; a name met again
    /// is marked repeated. The member is the level's open one, and the
    /// next level is recorded while it is that level's parent.
    #[inline(always)]
    fn record(&mut self, level: usize, index: Option<usize>, value: usize) {
        let (_names, parent) = self.level_names(level);
        let mut open = NONE;
        if let Some(i) = index {
            #[cfg(target_pointer_width = "64")]
            if let (Some(next), Some(spec)) = (self.next.get_mut(level), _names.spec.get(i)) {
                *next = spec.next;
            }
            let at = level * SLOTS + i;
            let bit = 1u32 << at;
            if self.found & bit != 0 {
                self.repeated |= bit;
            } else if let (Some(slot), Ok(value)) = (self.values.get_mut(at), u32::try_from(value))
            {
                *slot = (value, value);
                self.found |= bit;
                open = at as u8;
            }
        }
        if let Some(o) = self.open.get_mut(level) {
            *o = open;
        }
        let child = 1u8 << (level + 1);
        if open != NONE && usize::from(open) == parent {
            self.active |= child;
            // The parent's object: its first name is expected first.
            #[cfg(target_pointer_width = "64")]
            {
                let (child_names, _) = self.level_names(level + 1);
                if let Some(next) = self.next.get_mut(level + 1) {
                    *next = child_names.first;
                }
            }
        } else {
            self.active &= !child;
        }
    }

    /// Whether members of objects at `depth` are recorded (asked first,
    /// inline in the validator: most members are not).
    #[inline]
    fn records(&self, depth: usize) -> bool {
        let level = depth.wrapping_sub(1);
        level < 3 && (self.active >> level) & 1 != 0
    }

    /// A value inside a container at `depth` ended just before `pos`.
    #[inline]
    pub(super) fn value_end(&mut self, depth: usize, pos: usize) {
        let level = depth.wrapping_sub(1);
        let Some(open) = self.open.get_mut(level) else {
            return;
        };
        let at = core::mem::replace(open, NONE);
        // The levels below this value are closed with it.
        self.active &= !(0b110 << level);
        if let Some(slot) = self.values.get_mut(usize::from(at)) {
            match u32::try_from(pos) {
                Ok(end) => slot.1 = end,
                // Past 4 GiB: not recorded (as if absent).
                Err(_) => self.found &= !(1 << at),
            }
        }
    }
}

/// The outline against its definition, for the unit tests and the `json`
/// fuzz target (`cfg(fuzzing)`, set by cargo-fuzz).
#[cfg(any(test, fuzzing))]
impl Outline {
    /// Each slot of this outline of `input` (validated, with this
    /// outline recorded) against walking the value: the first member of
    /// each name at each of the three levels, and the top level's repeated
    /// names. For an object, the number of members found at each level;
    /// `None` for any other value. Panics on a difference.
    pub(crate) fn check_against_walking(&self, input: &[u8]) -> Option<[usize; 3]> {
        // The first member named `name`, and whether another follows.
        fn first_of<'a>(v: Option<Value<'a>>, name: &str) -> (Option<Value<'a>>, bool) {
            let Some(v) = v else {
                return (None, false);
            };
            let mut it = v.members().filter(|(k, _)| k.eq_str(name)).map(|(_, v)| v);
            let first = it.next();
            (first, it.next().is_some())
        }
        let whole = Value::trusted(input);
        if whole.kind() != super::value::Kind::Object {
            return None;
        }
        let keys = self.keys;
        let mut found = [0; 3];
        let mut repeated = 0;
        for (i, name) in keys.top().names.iter().enumerate() {
            let (want, again) = first_of(Some(whole), name.text);
            assert_eq!(self.top(input, i), want, "top {}", name.text);
            found[0] += usize::from(want.is_some());
            repeated |= u32::from(again) << i;
        }
        assert_eq!(self.repeated_top(), repeated, "repeated");
        let parent = keys
            .parents
            .first()
            .and_then(|&p| keys.top().names.get(p))
            .and_then(|n| first_of(Some(whole), n.text).0);
        for (i, name) in keys.inner().names.iter().enumerate() {
            let want = first_of(parent, name.text).0;
            assert_eq!(self.inner(input, i), want, "inner {}", name.text);
            found[1] += usize::from(want.is_some());
        }
        let inner = keys
            .parents
            .get(1)
            .and_then(|&p| keys.inner().names.get(p.wrapping_sub(SLOTS)))
            .and_then(|n| first_of(parent, n.text).0);
        for (i, name) in keys.deep().names.iter().enumerate() {
            let want = first_of(inner, name.text).0;
            assert_eq!(self.deep(input, i), want, "deep {}", name.text);
            found[2] += usize::from(want.is_some());
        }
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::wire::json::{Limits, validate_outlined};

    /// A pseudo-random JSON value of bounded depth, with whitespace.
    fn rnd(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// `compact`: no whitespace anywhere (every member as the outline
    /// expects it written).
    fn random_json(x: &mut u64, depth: u32, compact: bool, out: &mut std::string::String) {
        let next = |x: &mut u64| rnd(x);
        let ws = if compact {
            ["", "", ""]
        } else {
            ["", " ", "\n\t "]
        };
        // Objects (5, 6, 7) most often: their members are what is outlined.
        let pick = next(x) % if depth == 0 { 4 } else { 8 };
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
                    random_json(x, depth - 1, compact, out);
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
                        [
                            "\"k\"",
                            "\"name\"",
                            "\"a\\\"b\"",
                            "\"\"",
                            "\"p\"",
                            "\"id\"",
                            "\"\\u006eame\"",
                            "\"\\u0070\"",
                            "\"a-key-longer-than-sixteenX\"",
                            "\"a-key-longer-than-sixteenY\"",
                        ][(next(x) % 10) as usize],
                    );
                    out.push_str(ws[(next(x) % 3) as usize]);
                    out.push(':');
                    out.push_str(ws[(next(x) % 3) as usize]);
                    random_json(x, depth - 1, compact, out);
                    out.push_str(ws[(next(x) % 3) as usize]);
                }
                out.push('}');
            }
        }
    }

    /// Two keys alike in their first 16 bytes and their length.
    const LONG: &str = "a-key-longer-than-sixteenX";

    static KEYS: OutlineKeys = OutlineKeys::new(
        Level::new(&Name::all(["id", "name", "p", ""])),
        2,
        Level::new(&Name::all(["name", "k", "p"])),
        2,
        Level::deep(&Name::all(["k", LONG, "name"])),
    );

    /// [`KEYS`] with members expected in an order ([`Level::cycling`]):
    /// `id`, `name`, `p` at the top, `p`, `k` in `p`.
    static CYCLING: OutlineKeys = OutlineKeys::new(
        Level::cycling(&Name::all(["id", "name", "p", ""]), &["id", "name", "p"]),
        2,
        Level::cycling(&Name::all(["name", "k", "p"]), &["p", "k"]),
        2,
        Level::deep(&Name::all(["k", LONG, "name"])),
    );

    /// Keys of every length up to past 255 at each recorded level, before
    /// the names they share a length or a first byte with: never taken
    /// for a name (an empty entry of the short names' table has length
    /// 255), and the names after them found.
    #[test]
    fn keys_of_every_length() {
        // Under Miri, the short lengths and those around 255 only.
        let lengths = (0..300).filter(|&n| !cfg!(miri) || n <= 30 || (250..=260).contains(&n));
        for n in lengths {
            let k = "k".repeat(n);
            let text = std::format!(
                r#"{{"{k}":1,"p":{{"{k}":2,"name":3,"p":{{"{k}":4,"k":5}}}},"id":6}}"#
            );
            let input = text.as_bytes();
            let mut o = Outline::new(&KEYS);
            validate_outlined(input, &Limits::DEFAULT, &mut o).unwrap();
            let raw = |v: Option<Value<'_>>| v.map(|v| v.raw().to_vec());
            let top_empty = (n == 0).then(|| b"1".to_vec());
            assert_eq!(raw(o.top(input, 0)), Some(b"6".to_vec()), "id, {n}");
            assert_eq!(raw(o.top(input, 3)), top_empty, "\"\", {n}");
            assert_eq!(raw(o.inner(input, 0)), Some(b"3".to_vec()), "name, {n}");
            let inner_k = if n == 1 { b"2".to_vec() } else { b"5".to_vec() };
            assert_eq!(
                raw(o.inner(input, 1)),
                (n == 1).then_some(inner_k),
                "k, {n}"
            );
            let deep_k = if n == 1 { b"4".to_vec() } else { b"5".to_vec() };
            assert_eq!(raw(o.deep(input, 0)), Some(deep_k), "deep k, {n}");
            assert_eq!(o.repeated_top(), 0, "{n}");
        }
    }

    /// What `keys`' outline of `text` holds against walking its value
    /// ([`Outline::check_against_walking`]): for an object, counts of its
    /// members found (top, inner, deep).
    fn agree(keys: &'static OutlineKeys, text: &str) -> Option<[usize; 3]> {
        let input = text.as_bytes();
        let mut outline = Outline::new(keys);
        validate_outlined(input, &Limits::DEFAULT, &mut outline).unwrap();
        outline.check_against_walking(input)
    }

    /// Members as the outline expects them, and nearly so: each found as
    /// walking finds it; and a key taken as expected is held to the
    /// string limit as a scanned one is (the same answer as `validate`
    /// without an outline, for each limit).
    #[test]
    fn expected_members_are_what_a_scan_finds() {
        let texts = [
            // In the expected order, from its start and rotated.
            r#"{"id":1,"name":2,"p":{"p":{"k":3,"name":4},"k":5},"":6}"#,
            r#"{"p":{"k":5,"p":{"name":4}},"id":1,"name":2}"#,
            // A key like an expected one but longer, or escaped, or with
            // a space before its colon; the expected key repeated.
            r#"{"idx":1,"id":2,"name" :3,"\u0070":{"k":1},"p":{"k":4},"p":{"k":5},"id":6}"#,
            // Expected keys within 16 bytes of the end, and past it.
            r#"{"name":{"k":1},"id":2}"#,
            r#"{"id":1}"#,
            r#"{"id":"0123456789abcdef","name":[{"id":1,"name":2}]}"#,
            // Keys the only strings: the limit is theirs to meet.
            r#"{"id":12345678901234,"name":[1,2,3,4,5,6,7,8,9,10]}"#,
        ];
        for text in texts {
            for keys in [&KEYS, &CYCLING] {
                agree(keys, text).unwrap();
            }
            for max_string_len in 0..6 {
                let limits = Limits {
                    max_string_len,
                    ..Limits::DEFAULT
                };
                let want = crate::wire::json::validate(text.as_bytes(), &limits);
                for keys in [&KEYS, &CYCLING] {
                    let mut o = Outline::new(keys);
                    let got = validate_outlined(text.as_bytes(), &limits, &mut o);
                    assert_eq!(got, want, "{text} within {max_string_len}");
                }
            }
        }
        // The spans, taken as expected: `"id":` then `"name":` then `"p":`,
        // and in `p`, `"p":` then `"k":`.
        let text = br#"{"id":10,"name":"nm","p":{"p":[1],"k":{"x":0}},"zz":0}"#;
        let mut o = Outline::new(&CYCLING);
        validate_outlined(text, &Limits::DEFAULT, &mut o).unwrap();
        let raw = |v: Option<Value<'_>>| v.map(|v| v.raw().to_vec());
        assert_eq!(raw(o.top(text, 0)), Some(b"10".to_vec()));
        assert_eq!(raw(o.top(text, 1)), Some(br#""nm""#.to_vec()));
        assert_eq!(raw(o.inner(text, 2)), Some(b"[1]".to_vec()));
        assert_eq!(raw(o.inner(text, 1)), Some(br#"{"x":0}"#.to_vec()));
        assert_eq!(o.repeated_top(), 0);
    }

    /// Random values, with whitespace and without (where members are
    /// taken as expected, 64-bit targets), against the outline with and
    /// without an expected order.
    #[test]
    fn outline_agrees_with_walking() {
        let mut x: u64 = 0x5eed_1234_abcd_9876;
        let mut objects = 0;
        let mut nested = 0;
        let mut deep = 0;
        // Fewer under Miri, which is about a thousand times slower.
        let rounds = if cfg!(miri) { 60 } else { 3000 };
        for round in 0..rounds {
            let mut text = std::string::String::from(" ");
            random_json(&mut x, 4, round % 2 == 1, &mut text);
            text.push(' ');
            let keys: &'static OutlineKeys = if round % 4 < 2 { &KEYS } else { &CYCLING };
            let Some([_, inner, third]) = agree(keys, &text) else {
                continue;
            };
            objects += 1;
            nested += inner;
            deep += third;
        }
        assert!(objects * 8 > rounds, "{objects} of {rounds} objects");
        assert!(nested > rounds / 30, "{nested} nested members in {rounds}");
        // (Under Miri's few rounds, the cases below stand in.)
        assert!(
            cfg!(miri) || deep > rounds / 300,
            "{deep} deep members in {rounds}"
        );
        // Members under a top-level array, or under a later `p`: no slots.
        let mut o = Outline::new(&KEYS);
        let batch = br#"[{"id":{"name":1}}]"#;
        validate_outlined(batch, &Limits::DEFAULT, &mut o).unwrap();
        assert!((0..4).all(|i| o.top(batch, i).is_none()));
        assert!((0..3).all(|i| o.inner(batch, i).is_none()));
        let two = br#"{"p":[{"k":1}],"p":{"k":2},"\u0070":3}"#;
        validate_outlined(two, &Limits::DEFAULT, &mut o).unwrap();
        assert_eq!(o.top(two, 2).map(|v| v.raw()), Some(&br#"[{"k":1}]"#[..]));
        assert_eq!(o.inner(two, 1), None);
        assert_eq!(o.repeated_top(), 1 << 2);
        // The third level: the first of each key, a key alike in its first
        // 16 bytes told apart by the rest, an escaped long key, and nothing
        // from the second `p` of either level.
        let deep = br#"{"p":{"k":{"k":0},"p":{"k":1,"a-key-longer-than-sixteenY":2,"\u0061-key-longer-than-sixteenX":3,"k":4},"p":{"name":5}},"p":{"p":{"name":6}}}"#;
        validate_outlined(deep, &Limits::DEFAULT, &mut o).unwrap();
        let raw = |v: Option<Value<'_>>| v.map(|v| v.raw().to_vec());
        assert_eq!(raw(o.deep(deep, 0)), Some(b"1".to_vec()));
        assert_eq!(raw(o.deep(deep, 1)), Some(b"3".to_vec()));
        assert_eq!(o.deep(deep, 2), None);
    }
}
