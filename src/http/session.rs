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
    /// Add a session (evicting one if the store is full).
    fn insert(&mut self, id: SessionId, conn: Connection, now: u64);
    /// End a session; `false` if there was none.
    fn remove(&mut self, id: &SessionId) -> bool;
}

/// One slot of [`Sessions`].
#[derive(Clone, Copy, Debug)]
struct Slot {
    id: SessionId,
    conn: Connection,
    last_used: u64,
}

/// A fixed-capacity session table of `N` slots (about 40 bytes each); when
/// full, a new session evicts the least recently used one.
#[derive(Clone, Debug)]
pub struct Sessions<const N: usize> {
    slots: [Option<Slot>; N],
}

impl<const N: usize> Sessions<N> {
    /// An empty table.
    pub const fn new() -> Self {
        Self { slots: [None; N] }
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

    fn find(&mut self, id: &SessionId) -> Option<&mut Slot> {
        self.slots.iter_mut().flatten().find(|s| s.id == *id)
    }
}

impl<const N: usize> Default for Sessions<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> SessionStore for Sessions<N> {
    fn load(&mut self, id: &SessionId, now: u64) -> Option<Connection> {
        let slot = self.find(id)?;
        slot.last_used = now;
        Some(slot.conn)
    }

    fn save(&mut self, id: &SessionId, conn: Connection, now: u64) {
        if let Some(slot) = self.find(id) {
            slot.conn = conn;
            slot.last_used = slot.last_used.max(now);
        }
    }

    fn insert(&mut self, id: SessionId, conn: Connection, now: u64) {
        let new = Some(Slot {
            id,
            conn,
            last_used: now,
        });
        if let Some(free) = self.slots.iter_mut().find(|s| s.is_none()) {
            *free = new;
        } else if let Some(lru) = self
            .slots
            .iter_mut()
            .min_by_key(|s| s.map_or(0, |s| s.last_used))
        {
            *lru = new;
        }
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
