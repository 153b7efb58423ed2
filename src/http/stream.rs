//! Notification streams over HTTP: each handshake session's subscription
//! set and `GET` stream, and each 2026-07-28 `subscriptions/listen` stream,
//! in a fixed table the caller owns.

use super::session::{SessionId, SessionStore};
use crate::changes::{Subscriber, Subscriptions};

/// What a stream slot serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A handshake session's subscriptions (`resources/subscribe`) and its
    /// `GET` stream, when open.
    Session,
    /// A 2026-07-28 listen request's stream.
    Listen,
}

#[derive(Clone, Copy, Debug)]
struct Meta {
    id: SessionId,
    kind: Kind,
    /// The `GET` stream is open (one per session).
    open: bool,
    /// A listen whose `notifications/cancelled` arrived: its result is due
    /// on its stream, which then ends.
    ending: bool,
}

/// The notification streams of an HTTP endpoint: `M` slots, each one
/// handshake session's subscriptions (up to `K` URIs of at most `U` bytes)
/// with its `GET` stream, or one 2026-07-28 `subscriptions/listen` stream.
///
/// A slot costs `K × (U + 8)` bytes plus about 100 (the
/// [`Subscriptions`] it holds) and 24 of bookkeeping. A session takes a
/// slot at its first `resources/subscribe` or `GET`, and gives it back when
/// it is deleted or, once its session has expired from the
/// [`SessionStore`], when a newer session needs the room; a listen stream
/// takes one for as long as it is open. With every slot in use a
/// subscription is refused with a JSON-RPC error, a `GET` with `503` and
/// `Retry-After`, a listen with a JSON-RPC error; nothing is evicted.
/// Size `M` as the session table plus the listen streams you allow.
#[derive(Debug)]
pub struct Streams<const M: usize, const K: usize, const U: usize> {
    meta: [Option<Meta>; M],
    subs: [Subscriptions<K, U>; M],
}

impl<const M: usize, const K: usize, const U: usize> Streams<M, K, U> {
    /// An empty table.
    pub const fn new() -> Self {
        Self {
            meta: [None; M],
            subs: [const { Subscriptions::new() }; M],
        }
    }

    /// Slots in use (sessions with subscriptions or a stream, listens).
    pub fn len(&self) -> usize {
        self.meta.iter().filter(|m| m.is_some()).count()
    }

    /// No slot in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Listen streams open now.
    pub fn listens(&self) -> usize {
        self.meta
            .iter()
            .filter(|m| m.is_some_and(|m| m.kind == Kind::Listen))
            .count()
    }

    fn find(&self, id: &SessionId) -> Option<usize> {
        self.meta
            .iter()
            .position(|m| m.is_some_and(|m| m.id == *id))
    }

    /// The slot of session `id`, claimed when it has none: a free slot, or
    /// one whose session the store no longer holds.
    pub(super) fn session_slot<St: SessionStore + ?Sized>(
        &mut self,
        id: &SessionId,
        sessions: &mut St,
        now: u64,
    ) -> Option<usize> {
        if let Some(at) = self.find(id) {
            return Some(at);
        }
        let at = self.free_slot(sessions, now)?;
        self.claim(at, *id, Kind::Session);
        Some(at)
    }

    /// A new listen stream's slot, named `id`.
    pub(super) fn listen_slot<St: SessionStore + ?Sized>(
        &mut self,
        id: SessionId,
        sessions: &mut St,
        now: u64,
    ) -> Option<usize> {
        let at = self.free_slot(sessions, now)?;
        self.claim(at, id, Kind::Listen);
        Some(at)
    }

    fn free_slot<St: SessionStore + ?Sized>(
        &mut self,
        sessions: &mut St,
        now: u64,
    ) -> Option<usize> {
        if let Some(at) = self.meta.iter().position(Option::is_none) {
            return Some(at);
        }
        // A session slot whose session is gone (expired, or deleted by
        // another path) is free.
        let at = self.meta.iter().position(|m| {
            m.is_some_and(|m| m.kind == Kind::Session && !sessions.contains(&m.id, now))
        })?;
        self.release(at);
        Some(at)
    }

    fn claim(&mut self, at: usize, id: SessionId, kind: Kind) {
        if let (Some(meta), Some(subs)) = (self.meta.get_mut(at), self.subs.get_mut(at)) {
            *meta = Some(Meta {
                id,
                kind,
                open: false,
                ending: false,
            });
            *subs = Subscriptions::new();
        }
    }

    pub(super) fn release(&mut self, at: usize) {
        if let Some(meta) = self.meta.get_mut(at) {
            *meta = None;
        }
    }

    /// Forget session `id` (deleted).
    pub(super) fn forget(&mut self, id: &SessionId) {
        if let Some(at) = self.find(id) {
            self.release(at);
        }
    }

    pub(super) fn subscriber(&mut self, at: usize) -> Option<Subscriber<'_>> {
        Some(self.subs.get_mut(at)?.subscriber())
    }

    /// Open the `GET` stream of the session at `at`; `false` when one is
    /// open already.
    pub(super) fn open(&mut self, at: usize) -> bool {
        match self.meta.get_mut(at) {
            Some(Some(m)) if !m.open => {
                m.open = true;
                true
            }
            _ => false,
        }
    }

    /// The open listen stream whose request id is `id` (JSON text).
    pub(super) fn listen_with_request(&mut self, id: &[u8]) -> Option<usize> {
        (0..M).find(|&at| {
            let is_listen = self
                .meta
                .get(at)
                .copied()
                .flatten()
                .is_some_and(|m| m.kind == Kind::Listen && !m.ending);
            is_listen
                && self
                    .subs
                    .get_mut(at)
                    .is_some_and(|s| s.subscriber().listening().is_some_and(|l| l.id() == id))
        })
    }

    pub(super) fn mark_ending(&mut self, at: usize) {
        if let Some(Some(m)) = self.meta.get_mut(at) {
            m.ending = true;
        }
    }

    /// The slot holding stream `id`, its kind (`true`: listen) and whether
    /// it is ending.
    pub(super) fn stream(&self, id: &SessionId) -> Option<(usize, bool, bool)> {
        let at = self.find(id)?;
        let m = self.meta.get(at).copied().flatten()?;
        Some((at, m.kind == Kind::Listen, m.ending))
    }

    /// The `GET` stream of session `id` (or listen stream `id`) was closed
    /// by the client: a listen stream's slot is free again; a session
    /// keeps its subscriptions and may open a new `GET` stream.
    pub fn close(&mut self, id: &SessionId) {
        let Some(at) = self.find(id) else { return };
        match self.meta.get_mut(at) {
            Some(Some(m)) if m.kind == Kind::Session => m.open = false,
            _ => self.release(at),
        }
    }
}

impl<const M: usize, const K: usize, const U: usize> Default for Streams<M, K, U> {
    fn default() -> Self {
        Self::new()
    }
}
