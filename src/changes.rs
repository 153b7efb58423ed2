//! Change notifications: what the application announces, and what each
//! subscriber has seen.
//!
//! A [`Changes`] registry (one per server, usually a `static`) is where the
//! application announces that a resource changed
//! ([`resource_updated`](Changes::resource_updated)) or that the tool,
//! prompt or resource list changed ([`tools_changed`](Changes::tools_changed),
//! …), from a handler, another thread or an interrupt: every method takes
//! `&self`, is lock-free and never blocks. It holds no subscriber list:
//! announcements go into a ring of the last [`RING`] resource changes (a
//! 32-bit key of the URI and a sequence number) and three list counters.
//!
//! Each connection (a stream, an HTTP session, a 2026-07-28 listen stream)
//! keeps its own [`Subscriptions`] in memory its caller owns: up to `K`
//! URIs of at most `U` bytes, and how far into the registry it has read.
//! Before the answer to the next request is written (or when a transport
//! is woken by [`Changes::on_change`]), the connection catches up with the
//! registry and writes one notification per changed subscribed URI.
//!
//! # Guarantees
//!
//! * A change is announced to every subscriber of its URI once: several
//!   changes of one URI between two catch-ups are one
//!   `notifications/resources/updated` (it tells the client to read again).
//! * A subscriber that falls more than [`RING`] resource changes behind
//!   cannot tell which URIs changed: it is told that every URI it
//!   subscribed to was updated (never fewer notifications than changes
//!   happened to its URIs).
//! * URIs are matched by a 32-bit FNV-1a key: two different URIs with the
//!   same key (about one pair in four billion) notify each other's
//!   subscribers.
//! * Changes announced before a connection's first request are not
//!   delivered to it; a URI subscribed to after a change is not told about
//!   that change.
//!
//! # Memory
//!
//! [`Changes`]: 8 bytes per ring entry plus at most 32 (160 bytes). A subscriber
//! ([`Subscriptions<K, U>`]): `K × (U + 8)` bytes for the URIs plus about
//! 100 bytes (the read position, and the id and filter of a 2026-07-28
//! listen request).
//!
//! On targets without 32-bit atomic read-modify-write (ARMv6-M) the
//! registry counts with a load and a store: announce from one execution
//! context at a time there (or inside a critical section); every other
//! target (ARMv7-M and up, RISC-V with `A`, hosted) announces from anywhere.

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering, fence};

use crate::wire::emit::Writer;
use crate::wire::json::JsonStr;

/// Resource changes the [`Changes`] registry remembers for subscribers
/// that have not caught up yet.
pub const RING: usize = 16;
/// The longest id (as JSON text) of a 2026-07-28 `subscriptions/listen`
/// request a [`Subscriptions`] can hold open.
pub const MAX_LISTEN_ID: usize = 64;

/// The lists whose changes are announced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum List {
    Tools = 0,
    Prompts = 1,
    Resources = 2,
}

impl List {
    pub(crate) const ALL: [List; 3] = [List::Tools, List::Prompts, List::Resources];

    fn bit(self) -> u8 {
        1 << self as u8
    }

    fn method(self) -> &'static str {
        match self {
            List::Tools => "notifications/tools/list_changed",
            List::Prompts => "notifications/prompts/list_changed",
            List::Resources => "notifications/resources/list_changed",
        }
    }

    /// The field of a 2026-07-28 listen filter.
    pub(crate) fn filter_field(self) -> &'static str {
        match self {
            List::Tools => "toolsListChanged",
            List::Prompts => "promptsListChanged",
            List::Resources => "resourcesListChanged",
        }
    }
}

struct Entry {
    /// The change's sequence number; 0 while empty or being written.
    seq: AtomicU32,
    key: AtomicU32,
}

/// The application's change announcements. See the [module docs](self).
///
/// ```
/// use picomcp::changes::Changes;
/// static CHANGES: Changes = Changes::new().tools_list_changes();
/// CHANGES.resource_updated("books://stock");
/// CHANGES.tools_changed();
/// ```
pub struct Changes {
    head: AtomicU32,
    ring: [Entry; RING],
    lists: [AtomicU32; 3],
    epoch: AtomicU32,
    list_changes: u8,
    wake: Option<fn()>,
}

impl fmt::Debug for Changes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Changes")
            .field("head", &self.head.load(Ordering::Relaxed))
            .field("epoch", &self.epoch.load(Ordering::Relaxed))
            .field("list_changes", &self.list_changes)
            .finish_non_exhaustive()
    }
}

impl Default for Changes {
    fn default() -> Self {
        Self::new()
    }
}

/// FNV-1a, 32 bits: the key a URI is matched by.
pub(crate) fn uri_key(uri: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in uri {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// `a += 1`, returning the new value: an atomic read-modify-write where the
/// target has one; on targets without (ARMv6-M), a load and a store, so
/// announcements must then come from one execution context at a time (or
/// from inside a critical section).
#[inline]
fn increment(a: &AtomicU32) -> u32 {
    #[cfg(target_has_atomic = "32")]
    {
        a.fetch_add(1, Ordering::AcqRel).wrapping_add(1)
    }
    #[cfg(not(target_has_atomic = "32"))]
    {
        let n = a.load(Ordering::Acquire).wrapping_add(1);
        a.store(n, Ordering::Release);
        n
    }
}

impl Changes {
    /// A registry where only resource updates are announced (the server
    /// advertises `resources.subscribe`, and `listChanged: false`).
    pub const fn new() -> Self {
        // A fresh value per array element (the const is copied, never shared).
        #[allow(clippy::declare_interior_mutable_const)]
        const EMPTY: Entry = Entry {
            seq: AtomicU32::new(0),
            key: AtomicU32::new(0),
        };
        Self {
            head: AtomicU32::new(0),
            ring: [EMPTY; RING],
            lists: [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)],
            epoch: AtomicU32::new(0),
            list_changes: 0,
            wake: None,
        }
    }

    /// The tool list can change: advertise `tools.listChanged` and deliver
    /// [`tools_changed`](Self::tools_changed).
    pub const fn tools_list_changes(mut self) -> Self {
        self.list_changes |= 1 << List::Tools as u8;
        self
    }

    /// The prompt list can change (`prompts.listChanged`).
    pub const fn prompts_list_changes(mut self) -> Self {
        self.list_changes |= 1 << List::Prompts as u8;
        self
    }

    /// The resource list can change (`resources.listChanged`).
    pub const fn resources_list_changes(mut self) -> Self {
        self.list_changes |= 1 << List::Resources as u8;
        self
    }

    /// Call `wake` after every announcement (from whatever context
    /// announced it: keep it short and interrupt-safe), so a transport
    /// waiting for input can deliver the notifications now: e.g. signal an
    /// embassy `Signal`, a tokio `Notify`, or nothing on a loop that polls
    /// [`epoch`](Self::epoch).
    pub const fn on_change(mut self, wake: fn()) -> Self {
        self.wake = Some(wake);
        self
    }

    /// The lists whose changes are announced, a bit per [`List`].
    pub(crate) fn list_bits(&self) -> u8 {
        self.list_changes
    }

    /// Whether changes of `list` are announced (its `listChanged`).
    pub(crate) fn announces(&self, list: List) -> bool {
        self.list_changes & list.bit() != 0
    }

    /// The resource at `uri` changed: every subscriber of `uri` will get
    /// `notifications/resources/updated`.
    pub fn resource_updated(&self, uri: &str) {
        let key = uri_key(uri.as_bytes());
        let mut n = increment(&self.head);
        if n == 0 {
            // 0 marks an empty entry: the counter wrapped, take the next.
            n = increment(&self.head);
        }
        if let Some(e) = self.ring.get(n as usize % RING) {
            e.seq.store(0, Ordering::Relaxed);
            fence(Ordering::Release);
            e.key.store(key, Ordering::Relaxed);
            e.seq.store(n, Ordering::Release);
        }
        self.bump();
    }

    /// The tool list changed (delivered only when
    /// [`tools_list_changes`](Self::tools_list_changes) is set).
    pub fn tools_changed(&self) {
        self.list_changed(List::Tools);
    }

    /// The prompt list changed.
    pub fn prompts_changed(&self) {
        self.list_changed(List::Prompts);
    }

    /// The resource list changed.
    pub fn resources_changed(&self) {
        self.list_changed(List::Resources);
    }

    fn list_changed(&self, list: List) {
        if let Some(c) = self.lists.get(list as usize) {
            increment(c);
        }
        self.bump();
    }

    fn bump(&self) {
        increment(&self.epoch);
        if let Some(wake) = self.wake {
            wake();
        }
    }

    /// A counter that moves with every announcement: a transport that
    /// polls compares it with the last value it saw.
    pub fn epoch(&self) -> u32 {
        self.epoch.load(Ordering::Acquire)
    }

    fn list_count(&self, list: List) -> u32 {
        self.lists
            .get(list as usize)
            .map_or(0, |c| c.load(Ordering::Acquire))
    }
}

/// One subscribed URI's bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Slot {
    /// Bytes of the URI (0: free).
    len: u16,
    key: u32,
    /// Changed since its last notification.
    dirty: bool,
}

/// How far a subscriber has read the registry.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cursor {
    started: bool,
    seen: u32,
    /// The registry's [`Changes::epoch`] when it was last caught up with:
    /// while it has not moved, nothing was announced since, and
    /// [`Subscriber::collect`] returns at once (every request asks).
    epoch: u32,
    lists: [u32; 3],
    /// Bit per [`List`]: changed since its last notification.
    dirty_lists: u8,
    /// Some slot may be dirty (set with any slot's `dirty`, cleared once
    /// they have all been written): lets [`Subscriber::write_due`] return
    /// at once when nothing changed, without walking the slots.
    dirty_slots: bool,
}

/// An open 2026-07-28 `subscriptions/listen` request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListenState {
    pub(crate) open: bool,
    id: [u8; MAX_LISTEN_ID],
    id_len: u8,
    /// Bit per [`List`] requested.
    lists: u8,
}

impl ListenState {
    const CLOSED: ListenState = ListenState {
        open: false,
        id: [0; MAX_LISTEN_ID],
        id_len: 0,
        lists: 0,
    };

    /// The listen request's id, as JSON text.
    pub(crate) fn id(&self) -> &[u8] {
        self.id.get(..usize::from(self.id_len)).unwrap_or(&[])
    }
}

/// One connection's subscriptions: up to `K` URIs of at most `U` bytes,
/// and (on a 2026-07-28 connection) one open `subscriptions/listen`.
/// Keep one beside each stream connection's state; see the
/// [module docs](self) for the memory it costs.
#[derive(Clone, Debug)]
pub struct Subscriptions<const K: usize, const U: usize> {
    slots: [Slot; K],
    text: [[u8; U]; K],
    cursor: Cursor,
    listen: ListenState,
}

impl<const K: usize, const U: usize> Subscriptions<K, U> {
    /// No subscription yet.
    pub const fn new() -> Self {
        Self {
            slots: [Slot {
                len: 0,
                key: 0,
                dirty: false,
            }; K],
            text: [[0; U]; K],
            cursor: Cursor {
                started: false,
                seen: 0,
                epoch: 0,
                lists: [0; 3],
                dirty_lists: 0,
                dirty_slots: false,
            },
            listen: ListenState::CLOSED,
        }
    }

    /// URIs subscribed to now.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.len > 0).count()
    }

    /// No URI subscribed to.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A 2026-07-28 listen request is open on this connection.
    pub fn is_listening(&self) -> bool {
        self.listen.open
    }

    /// The borrowed form every serving call takes.
    pub fn subscriber(&mut self) -> Subscriber<'_> {
        Subscriber {
            slots: &mut self.slots,
            text: self.text.as_flattened_mut(),
            slot_bytes: U,
            cursor: &mut self.cursor,
            listen: &mut self.listen,
        }
    }
}

impl<const K: usize, const U: usize> Default for Subscriptions<K, U> {
    fn default() -> Self {
        Self::new()
    }
}

/// A connection's [`Subscriptions`], borrowed (from
/// [`Subscriptions::subscriber`]): what the serving calls take, whatever
/// the sizes.
#[derive(Debug)]
pub struct Subscriber<'a> {
    slots: &'a mut [Slot],
    text: &'a mut [u8],
    slot_bytes: usize,
    cursor: &'a mut Cursor,
    listen: &'a mut ListenState,
}

/// Why a URI could not be subscribed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Every one of the `K` slots holds a URI.
    Full(usize),
    /// The URI is longer than a slot's `U` bytes.
    TooLong(usize),
}

/// Why a listen request could not be held open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListenRefused {
    /// This connection keeps no listen state (or one is open already).
    Busy,
    /// The id is longer than [`MAX_LISTEN_ID`].
    IdTooLong,
    /// A subscribed URI did not fit.
    Uri(Refused),
}

impl Subscriber<'_> {
    /// Start reading the registry now (changes before are not ours).
    pub(crate) fn start(&mut self, changes: &Changes) {
        if !self.cursor.started {
            self.skip(changes);
        }
    }

    /// Pass every change made so far without marking anything (a
    /// connection before its handshake: nothing is due to it yet).
    pub(crate) fn skip(&mut self, changes: &Changes) {
        self.cursor.started = true;
        self.cursor.seen = changes.head.load(Ordering::Acquire);
        for list in List::ALL {
            if let Some(c) = self.cursor.lists.get_mut(list as usize) {
                *c = changes.list_count(list);
            }
        }
    }

    /// Catch up with the registry: mark every subscription and list that
    /// changed since the last catch-up.
    pub(crate) fn collect(&mut self, changes: &Changes) {
        // The epoch moves after every announcement is written: read first,
        // a later announcement moves it again and is caught up with next
        // time (as one not yet written when the ring is read below). Unmoved
        // (the common case): nothing to mark, about 20 instructions less a
        // request (`scripts/list_cost.sh`: `ping` 2,023 -> 2,002). A change
        // is missed only if the epoch wrapped exactly around between two
        // catch-ups (2^32 announcements).
        let epoch = changes.epoch.load(Ordering::Acquire);
        if self.cursor.started && self.cursor.epoch == epoch {
            return;
        }
        self.start(changes);
        for list in List::ALL {
            let now = changes.list_count(list);
            if let Some(c) = self.cursor.lists.get_mut(list as usize)
                && *c != now
            {
                *c = now;
                self.cursor.dirty_lists |= list.bit();
            }
        }
        let head = changes.head.load(Ordering::Acquire);
        let mut seen = self.cursor.seen;
        while seen != head {
            if head.wrapping_sub(seen) > RING as u32 {
                self.all_dirty();
                seen = head;
                break;
            }
            let next = seen.wrapping_add(1);
            if next == 0 {
                seen = 0;
                continue;
            }
            let Some(e) = changes.ring.get(next as usize % RING) else {
                break;
            };
            let s1 = e.seq.load(Ordering::Acquire);
            if s1 == next {
                let key = e.key.load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                if e.seq.load(Ordering::Relaxed) == next {
                    self.mark(key);
                    seen = next;
                    continue;
                }
            }
            if s1 == 0 || (next.wrapping_sub(s1) as i32) > 0 {
                // Announced but not written yet: catch up next time.
                break;
            }
            // Overwritten before we read it: we lost track.
            self.all_dirty();
            seen = head;
            break;
        }
        self.cursor.seen = seen;
        self.cursor.epoch = epoch;
    }

    fn mark(&mut self, key: u32) {
        for s in self.slots.iter_mut() {
            if s.len > 0 && s.key == key {
                s.dirty = true;
                self.cursor.dirty_slots = true;
            }
        }
    }

    fn all_dirty(&mut self) {
        for s in self.slots.iter_mut() {
            if s.len > 0 {
                s.dirty = true;
                self.cursor.dirty_slots = true;
            }
        }
    }

    fn uri(&self, i: usize) -> &[u8] {
        let len = self.slots.get(i).map_or(0, |s| usize::from(s.len));
        let start = i * self.slot_bytes;
        self.text.get(start..start + len).unwrap_or(&[])
    }

    fn find(&self, uri: &[u8]) -> Option<usize> {
        (0..self.slots.len())
            .find(|&i| self.slots.get(i).is_some_and(|s| s.len > 0) && self.uri(i) == uri)
    }

    /// Subscribe to `uri`; subscribing twice is one subscription.
    /// How many URIs this set can hold (`K`).
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn add(&mut self, changes: &Changes, uri: &str) -> Result<(), Refused> {
        if self.find(uri.as_bytes()).is_some() {
            return Ok(());
        }
        self.insert(changes, &mut |buf| {
            let dst = buf.get_mut(..uri.len())?;
            dst.copy_from_slice(uri.as_bytes());
            Some(uri.len())
        })
    }

    /// [`add`](Self::add) for a URI given as JSON string contents.
    pub(crate) fn add_json(&mut self, changes: &Changes, uri: JsonStr<'_>) -> Result<(), Refused> {
        if self.decoded_find(uri).is_some() {
            return Ok(());
        }
        self.insert(changes, &mut |buf| uri.decode_into(buf).map(str::len))
    }

    /// Take a free slot and let `fill` write the URI into it (`None`: it
    /// does not fit). `fill` a trait object: one copy for both kinds of URI.
    fn insert(
        &mut self,
        changes: &Changes,
        fill: &mut dyn FnMut(&mut [u8]) -> Option<usize>,
    ) -> Result<(), Refused> {
        // Changes so far belong to the URIs subscribed so far.
        self.collect(changes);
        let bytes = self.slot_bytes;
        let Some(free) = self.slots.iter().position(|s| s.len == 0) else {
            return Err(Refused::Full(self.slots.len()));
        };
        let start = free * bytes;
        let Some(buf) = self.text.get_mut(start..start + bytes) else {
            return Err(Refused::Full(self.slots.len()));
        };
        let len = match fill(buf) {
            Some(len) if len > 0 && u16::try_from(len).is_ok() => len,
            _ => return Err(Refused::TooLong(bytes)),
        };
        let key = uri_key(buf.get(..len).unwrap_or(&[]));
        if let Some(slot) = self.slots.get_mut(free) {
            *slot = Slot {
                len: len as u16,
                key,
                dirty: false,
            };
        }
        Ok(())
    }

    /// The subscribed URIs.
    pub(crate) fn uris(&self) -> impl Iterator<Item = &str> {
        (0..self.slots.len())
            .filter(|&i| self.slots.get(i).is_some_and(|s| s.len > 0))
            .filter_map(|i| core::str::from_utf8(self.uri(i)).ok())
    }

    fn decoded_find(&self, uri: JsonStr<'_>) -> Option<usize> {
        (0..self.slots.len()).find(|&i| {
            self.slots.get(i).is_some_and(|s| s.len > 0)
                && core::str::from_utf8(self.uri(i)).is_ok_and(|u| uri.eq_str(u))
        })
    }

    /// Forget `uri`; `false` if it was not subscribed.
    pub(crate) fn remove(&mut self, uri: &str) -> bool {
        match self.find(uri.as_bytes()) {
            Some(i) => {
                if let Some(s) = self.slots.get_mut(i) {
                    *s = Slot::default();
                }
                true
            }
            None => false,
        }
    }

    /// The open listen request, if any.
    pub(crate) fn listening(&self) -> Option<&ListenState> {
        Some(&*self.listen).filter(|l| l.open)
    }

    /// Hold a listen request open: its id (JSON text), the lists asked for,
    /// and the URIs (already checked by the caller, given through `uris`).
    pub(crate) fn open_listen<'u>(
        &mut self,
        changes: &Changes,
        id: &[u8],
        lists: u8,
        uris: impl Iterator<Item = JsonStr<'u>>,
    ) -> Result<(), ListenRefused> {
        if self.listen.open {
            return Err(ListenRefused::Busy);
        }
        if id.len() > MAX_LISTEN_ID {
            return Err(ListenRefused::IdTooLong);
        }
        for s in self.slots.iter_mut() {
            *s = Slot::default();
        }
        for uri in uris {
            if let Err(e) = self.add_json(changes, uri) {
                for s in self.slots.iter_mut() {
                    *s = Slot::default();
                }
                return Err(ListenRefused::Uri(e));
            }
        }
        self.collect(changes);
        self.cursor.dirty_lists = 0;
        let l = &mut *self.listen;
        l.open = true;
        l.id_len = id.len() as u8;
        if let Some(dst) = l.id.get_mut(..id.len()) {
            dst.copy_from_slice(id);
        }
        l.lists = lists;
        Ok(())
    }

    /// End the open listen request if `id` (JSON text) is its id; `true`
    /// when it was.
    pub(crate) fn close_listen(&mut self, id: &[u8]) -> bool {
        let l = &mut *self.listen;
        if !l.open || l.id() != id {
            return false;
        }
        l.open = false;
        for s in self.slots.iter_mut() {
            *s = Slot::default();
        }
        true
    }

    /// Write the notifications due, one JSON line each, as many as fit in
    /// `w`; what does not fit stays due. `lists`: the lists whose changes
    /// this connection is told of (handshake: the advertised ones; a listen
    /// request: those it asked for, of those). `tag`: the listen request's
    /// id, for 2026-07-28.
    pub(crate) fn write_due(&mut self, changes: &Changes, handshake_lists: u8, w: &mut Writer<'_>) {
        self.collect(changes);
        if self.cursor.dirty_lists == 0 && !self.cursor.dirty_slots {
            // Nothing changed (the common case, once per request).
            return;
        }
        let (lists, tag) = match self.listening() {
            Some(l) => (l.lists & changes.list_changes, Some(*l)),
            None => (handshake_lists & changes.list_changes, None),
        };
        let tag_id = tag.as_ref().map(|l| l.id());
        for list in List::ALL {
            if self.cursor.dirty_lists & list.bit() == 0 {
                continue;
            }
            if lists & list.bit() != 0 {
                let before = w.len();
                w.raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"");
                w.raw(list.method().as_bytes());
                w.raw(b"\"");
                if let Some(id) = tag_id {
                    w.raw(b",\"params\":{");
                    write_tag(w, id);
                    w.raw(b"}");
                }
                w.raw(b"}\n");
                if w.is_overflowed() {
                    w.truncate(before);
                    return;
                }
            }
            self.cursor.dirty_lists &= !list.bit();
        }
        for i in 0..self.slots.len() {
            if !self.slots.get(i).is_some_and(|s| s.len > 0 && s.dirty) {
                continue;
            }
            let before = w.len();
            w.raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":");
            match core::str::from_utf8(self.uri(i)) {
                Ok(uri) => w.string(uri),
                Err(_) => w.raw(b"\"\""),
            }
            if let Some(id) = tag_id {
                w.raw(b",");
                write_tag(w, id);
            }
            w.raw(b"}}\n");
            if w.is_overflowed() {
                w.truncate(before);
                return;
            }
            if let Some(s) = self.slots.get_mut(i) {
                s.dirty = false;
            }
        }
        self.cursor.dirty_slots = false;
    }
}

/// `"_meta":{"io.modelcontextprotocol/subscriptionId":ID}`.
pub(crate) fn write_tag(w: &mut Writer<'_>, id: &[u8]) {
    w.raw(b"\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":");
    w.raw(id);
    w.raw(b"}");
}

#[cfg(test)]
mod tests {
    /// The documented memory: `Changes` 160 bytes at most (on a target with a
    /// pointer of 8 bytes at most), a subscriber `K × (U + 8)` plus at most
    /// 100 bytes, and an HTTP stream slot at most 24 more.
    #[test]
    fn documented_sizes() {
        use core::mem::size_of;
        assert!(size_of::<Changes>() <= 160, "{}", size_of::<Changes>());
        let base = size_of::<Subscriptions<0, 0>>();
        assert!(base <= 100, "a subscriber's fixed part is {base} bytes");
        assert_eq!(
            size_of::<Subscriptions<8, 256>>() - base,
            8 * (256 + 8),
            "per URI"
        );
        let slot = size_of::<crate::http::Streams<2, 8, 256>>()
            - size_of::<crate::http::Streams<1, 8, 256>>();
        assert!(slot <= size_of::<Subscriptions<8, 256>>() + 24, "{slot}");
    }

    use super::*;

    fn due(subs: &mut Subscriptions<4, 32>, changes: &Changes, lists: u8) -> std::string::String {
        let mut out = [0u8; 1024];
        let mut w = Writer::new(&mut out);
        subs.subscriber().write_due(changes, lists, &mut w);
        let n = w.len();
        std::string::String::from_utf8(out[..n].to_vec()).unwrap()
    }

    #[test]
    fn one_notification_per_changed_uri() {
        let changes = Changes::new();
        let mut subs = Subscriptions::<4, 32>::new();
        changes.resource_updated("a://x"); // before the connection: not ours
        subs.subscriber().start(&changes);
        subs.subscriber().add(&changes, "a://x").unwrap();
        subs.subscriber().add(&changes, "a://x").unwrap();
        assert_eq!(subs.len(), 1);
        assert_eq!(due(&mut subs, &changes, 0), "");
        changes.resource_updated("a://x");
        changes.resource_updated("a://y");
        changes.resource_updated("a://x");
        assert_eq!(
            due(&mut subs, &changes, 0),
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"a://x\"}}\n"
        );
        assert_eq!(due(&mut subs, &changes, 0), "");
        assert!(subs.subscriber().remove("a://x"));
        changes.resource_updated("a://x");
        assert_eq!(due(&mut subs, &changes, 0), "");
    }

    #[test]
    fn a_lagging_subscriber_is_told_of_everything() {
        let changes = Changes::new();
        let mut subs = Subscriptions::<4, 32>::new();
        subs.subscriber().add(&changes, "a://x").unwrap();
        subs.subscriber().add(&changes, "a://y").unwrap();
        for _ in 0..RING + 1 {
            changes.resource_updated("a://z");
        }
        let text = due(&mut subs, &changes, 0);
        assert_eq!(text.lines().count(), 2, "{text}");
    }

    #[test]
    fn bounds() {
        let changes = Changes::new();
        let mut subs = Subscriptions::<1, 8>::new();
        let mut s = subs.subscriber();
        assert_eq!(s.add(&changes, "a://long-uri"), Err(Refused::TooLong(8)));
        assert_eq!(s.add(&changes, "a://12345"), Err(Refused::TooLong(8)));
        s.add(&changes, "a://1234").unwrap();
        assert_eq!(s.add(&changes, "a://5"), Err(Refused::Full(1)));
        s.add(&changes, "a://1234").unwrap();
    }

    #[test]
    fn list_changes_and_wrap() {
        let changes = Changes::new().tools_list_changes();
        changes.head.store(u32::MAX - 1, Ordering::Relaxed);
        let mut subs = Subscriptions::<4, 32>::new();
        subs.subscriber().add(&changes, "a://x").unwrap();
        changes.resource_updated("a://x");
        changes.resource_updated("a://x");
        changes.tools_changed();
        changes.prompts_changed(); // not announced by this server
        assert_eq!(
            due(&mut subs, &changes, 0b111),
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\
             {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"a://x\"}}\n"
        );
    }
}
