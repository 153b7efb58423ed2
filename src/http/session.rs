//! Handshake-era sessions: ids, the store trait, and a fixed-capacity table.

use crate::codec::{hex_decode, hex_encode};
use crate::server::Connection;

/// A source of random bytes for session ids (use a cryptographic one: the
/// id is the only thing that ties a request to a session).
pub trait Random {
    /// Fill `bytes` with random data.
    fn fill(&mut self, bytes: &mut [u8; 16]);
}

impl<F: FnMut(&mut [u8; 16])> Random for F {
    fn fill(&mut self, bytes: &mut [u8; 16]) {
        self(bytes)
    }
}

/// A 128-bit session id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SessionId(pub [u8; 16]);

impl SessionId {
    /// Parse the 32-hex-digit form (either case); `None` for anything else.
    pub fn parse(text: &str) -> Option<SessionId> {
        hex_decode(text.as_bytes()).map(SessionId)
    }

    /// The id as 32 lowercase hex digits (what `Mcp-Session-Id` carries).
    pub fn hex(&self) -> SessionHex {
        SessionHex(hex_encode(&self.0))
    }
}

/// A session id as text: 32 lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SessionHex([u8; 32]);

impl SessionHex {
    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits are ever stored.
        core::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Where handshake-era sessions live. See the [module docs](super#sessions).
pub trait SessionStore {
    /// The session's connection state (a copy), marking it used at `now`;
    /// `None` if there is no such session.
    fn load(&mut self, id: &SessionId, now: u64) -> Option<Connection>;
    /// Write a session's state back after a request, if it still exists.
    fn save(&mut self, id: &SessionId, conn: Connection, now: u64);
    /// Add a session. What a full store does is the store's policy
    /// ([`Sessions`] refuses the new one; see [`try_insert`](Self::try_insert)).
    fn insert(&mut self, id: SessionId, conn: Connection, now: u64);
    /// Add a session if there is room; `false` when the store is full of
    /// live sessions (the new client is then answered `503` with
    /// `Retry-After`, and no live session is evicted). The default inserts
    /// and reports success.
    fn try_insert(&mut self, id: SessionId, conn: Connection, now: u64) -> bool {
        self.insert(id, conn, now);
        true
    }
    /// End a session; `false` if there was none.
    fn remove(&mut self, id: &SessionId) -> bool;
    /// Whether session `id` is live at `now` (asked when a stream slot of
    /// [`Streams`](super::Streams) is needed, to reclaim those of ended
    /// sessions). The default asks [`load`](Self::load), which marks the
    /// session used; [`Sessions`] does not.
    fn contains(&mut self, id: &SessionId, now: u64) -> bool {
        self.load(id, now).is_some()
    }
}

/// One slot of [`Sessions`].
#[derive(Clone, Copy, Debug)]
struct Slot {
    id: SessionId,
    conn: Connection,
    last_used: u64,
}

/// A fixed-capacity session table of `N` slots (about 40 bytes each).
///
/// A new session never evicts a live one: when every slot holds a session
/// used within the idle time, the new one is refused (`503` with
/// `Retry-After` over HTTP). A session idle for longer than the idle time
/// ([`idle_timeout`](Self::idle_timeout); default: never) has expired: it is
/// not found any more (`404`, the client initializes again) and its slot
/// is free. Time is the caller's (`Request::now`, any monotonic unit).
#[derive(Clone, Debug)]
pub struct Sessions<const N: usize> {
    slots: [Option<Slot>; N],
    idle: u64,
}

impl<const N: usize> Sessions<N> {
    /// An empty table whose sessions never expire.
    pub const fn new() -> Self {
        Self {
            slots: [None; N],
            idle: u64::MAX,
        }
    }

    /// Expire sessions unused for more than `idle` (in the caller's unit).
    pub const fn idle_timeout(mut self, idle: u64) -> Self {
        self.idle = idle;
        self
    }

    /// Change the idle time of a table in use.
    pub fn set_idle_timeout(&mut self, idle: u64) {
        self.idle = idle;
    }

    fn expired(&self, slot: &Slot, now: u64) -> bool {
        now.saturating_sub(slot.last_used) > self.idle
    }

    /// Sessions in use.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// No session in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drop every session last used before `now - max_idle`; returns how
    /// many were dropped.
    pub fn evict_idle(&mut self, now: u64, max_idle: u64) -> usize {
        let mut n = 0;
        for slot in &mut self.slots {
            if slot.is_some_and(|s| now.saturating_sub(s.last_used) > max_idle) {
                *slot = None;
                n += 1;
            }
        }
        n
    }

    /// The live session `id` (an expired one is dropped on the way).
    fn find(&mut self, id: &SessionId, now: u64) -> Option<&mut Slot> {
        let at = self
            .slots
            .iter()
            .position(|s| s.is_some_and(|s| s.id == *id))?;
        if self
            .slots
            .get(at)
            .copied()
            .flatten()
            .is_some_and(|s| self.expired(&s, now))
        {
            if let Some(slot) = self.slots.get_mut(at) {
                *slot = None;
            }
            return None;
        }
        self.slots.get_mut(at)?.as_mut()
    }
}

impl<const N: usize> Default for Sessions<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> SessionStore for Sessions<N> {
    fn load(&mut self, id: &SessionId, now: u64) -> Option<Connection> {
        let slot = self.find(id, now)?;
        slot.last_used = slot.last_used.max(now);
        Some(slot.conn)
    }

    fn save(&mut self, id: &SessionId, conn: Connection, now: u64) {
        if let Some(slot) = self.find(id, now) {
            slot.conn = conn;
            slot.last_used = slot.last_used.max(now);
        }
    }

    fn insert(&mut self, id: SessionId, conn: Connection, now: u64) {
        let _ = self.try_insert(id, conn, now);
    }

    fn try_insert(&mut self, id: SessionId, conn: Connection, now: u64) -> bool {
        let idle = self.idle;
        let free = self.slots.iter_mut().find(|s| match s {
            None => true,
            // An expired session's slot is free.
            Some(live) => now.saturating_sub(live.last_used) > idle,
        });
        match free {
            Some(slot) => {
                *slot = Some(Slot {
                    id,
                    conn,
                    last_used: now,
                });
                true
            }
            None => false,
        }
    }

    fn contains(&mut self, id: &SessionId, now: u64) -> bool {
        self.find(id, now).is_some()
    }

    fn remove(&mut self, id: &SessionId) -> bool {
        for slot in &mut self.slots {
            if slot.is_some_and(|s| s.id == *id) {
                *slot = None;
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented cost of a slot: about 40 bytes (a 16-byte id, the
    /// connection state and the last-used time; 32 on 64-bit targets).
    #[test]
    fn slot_size() {
        let slot = core::mem::size_of::<Sessions<2>>() - core::mem::size_of::<Sessions<1>>();
        assert!(slot <= 40, "a session slot is {slot} bytes");
    }
}
