//! Calls waiting for the client (handshake era).
//!
//! A handler asked for input (an elicitation, a sampling request, the
//! client's roots). On a handshake-era connection the server sends the
//! client one JSON-RPC request per input request and the call waits: its
//! original request (as received, before any in-place unescaping), its
//! state, and the answers collected so far live in one slot of a
//! [`Waiting`] store the caller owns. When every answer is in, the original
//! request is copied to the store's scratch area and run again with the
//! answers; only then is it answered, with its own id.
//!
//! Memory: `N` slots of `B` bytes plus one `B`-byte scratch area and about
//! 200 bytes of bookkeeping per slot (190 on a 32-bit target, 216 on a
//! 64-bit one). A slot holds the original request,
//! the handler's state (at most [`MAX_STATE`](crate::mrtr::MAX_STATE) bytes)
//! and the answers as one JSON object; a request or answers that do not fit
//! are refused with an error naming the limit.

use crate::context::Mrtr;
use crate::wire::json::Value;
use core::fmt;

/// Rounds of input requests one call may make before it fails (`-32603`).
pub const MAX_ROUNDS: u8 = 8;
/// Input requests one round may carry.
pub const MAX_INPUT_REQUESTS: usize = 4;
/// Longest key of an input request, as written (escaped).
pub const MAX_KEY: usize = 32;

/// The bookkeeping of one slot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meta {
    /// The slot holds a waiting call.
    pub(crate) used: bool,
    /// Changes with every round, so a stale answer is not taken for a new one.
    pub(crate) generation: u32,
    /// Rounds of input requests so far.
    pub(crate) round: u8,
    /// Bytes of the original request at the start of the slot.
    pub(crate) request_len: usize,
    /// The original request's id, within the request.
    pub(crate) id: (usize, usize),
    /// The handler's state, after the request (`None`: no state).
    pub(crate) state_len: Option<usize>,
    /// Bytes of the answers object written so far (after the state); it
    /// starts with `{` and is closed when the call runs again.
    pub(crate) answers_len: usize,
    /// The outstanding input requests' keys (escaped, as written).
    pub(crate) keys: [[u8; MAX_KEY]; MAX_INPUT_REQUESTS],
    pub(crate) key_lens: [u8; MAX_INPUT_REQUESTS],
    /// The input requests' methods (for error messages), as indices into
    /// the known methods (all-zero bookkeeping keeps a `static` store in
    /// `.bss`, not in flash).
    pub(crate) methods: [u8; MAX_INPUT_REQUESTS],
    pub(crate) count: u8,
    /// Bit `k`: input request `k` was answered.
    pub(crate) answered: u8,
    /// Who may answer or cancel it: the HTTP session that made the call
    /// (zero on a stream, which is one connection).
    pub(crate) owner: [u8; 16],
    /// Names the call across its rounds (the generation of its first).
    pub(crate) call: u32,
    /// When this round began waiting, on the HTTP adapter's clock
    /// ([`Waiting::expired`]; 0 on a stream, which has no clock).
    pub(crate) since: u32,
}

impl Meta {
    const EMPTY: Meta = Meta {
        used: false,
        generation: 0,
        round: 0,
        request_len: 0,
        id: (0, 0),
        state_len: None,
        answers_len: 0,
        keys: [[0; MAX_KEY]; MAX_INPUT_REQUESTS],
        key_lens: [0; MAX_INPUT_REQUESTS],
        methods: [0; MAX_INPUT_REQUESTS],
        count: 0,
        answered: 0,
        owner: [0; 16],
        call: 0,
        since: 0,
    };

    pub(crate) fn key(&self, k: usize) -> &[u8] {
        let len = self.key_lens.get(k).map_or(0, |&l| usize::from(l));
        self.keys
            .get(k)
            .and_then(|key| key.get(..len))
            .unwrap_or(&[])
    }

    /// Where the call's state ends in its slot (the answers object starts
    /// there): the slot holds the request, the state, then the answers.
    fn state_end(&self) -> usize {
        self.request_len + self.state_len.unwrap_or(0)
    }

    /// Where the answers recorded so far end (the byte `record` keeps for
    /// the closing `}`).
    pub(crate) fn answers_end(&self) -> usize {
        self.state_end() + self.answers_len
    }

    pub(crate) fn all_answered(&self) -> bool {
        let all = (1u16 << self.count) - 1;
        u16::from(self.answered) == all
    }
}

/// Memory for calls waiting for the client's answers (handshake era): `N`
/// calls of at most `B` bytes each (the original request, the handler's
/// state and the client's answers), plus one `B`-byte scratch area where a
/// call is run again; about `(N + 1) × B + 200 × N` bytes in all. A request
/// or answers that do not fit, or a call while all `N` wait, are answered
/// with an error naming the limit. Pass it to
/// [`Server::handle_waiting`](crate::Server::handle_waiting) or
/// [`serve_waiting`](crate::transport::serve_waiting).
///
/// ```
/// use picomcp::server::Waiting;
/// // Two waiting calls of up to 4 KiB each (about 12.3 KiB in all).
/// let mut waiting = Waiting::<2, 4096>::new();
/// assert_eq!(waiting.len(), 0);
/// ```
pub struct Waiting<const N: usize, const B: usize> {
    meta: [Meta; N],
    bytes: [[u8; B]; N],
    scratch: [u8; B],
    generation: u32,
}

impl<const N: usize, const B: usize> Waiting<N, B> {
    /// No waiting calls.
    pub const fn new() -> Self {
        Self {
            meta: [Meta::EMPTY; N],
            bytes: [[0; B]; N],
            scratch: [0; B],
            generation: 0,
        }
    }

    /// Number the next round after `round` (a new table starts at 0).
    /// The ids of the server's requests (`"picomcp-SLOT-ROUND-K"`) carry
    /// it: replicas that serve the same sessions each start at a random
    /// round, so two calls of one session waiting on two replicas do not
    /// give their requests the same id.
    pub fn set_round(&mut self, round: u32) {
        self.generation = round;
    }

    /// Calls waiting now.
    pub fn len(&self) -> usize {
        self.meta.iter().filter(|m| m.used).count()
    }

    /// No call is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn view(&mut self) -> WaitingView<'_> {
        self.view_for([0; 16], 0)
    }

    /// A view for the calls of `owner` (an HTTP session id) at `now` (the
    /// adapter's clock: a call parked now waits from then).
    pub(crate) fn view_for(&mut self, owner: [u8; 16], now: u64) -> WaitingView<'_> {
        WaitingView {
            meta: &mut self.meta,
            bytes: self.bytes.as_flattened_mut(),
            slot_bytes: B,
            scratch: &mut self.scratch,
            generation: &mut self.generation,
            owner,
            now: now as u32,
            event: None,
        }
    }

    /// A call whose current round has waited `limit` or more (in the unit
    /// of `now`) for its client's answers, if any: its slot.
    pub(crate) fn expired(&self, now: u64, limit: u64) -> Option<usize> {
        let now = now as u32;
        self.meta
            .iter()
            .position(|m| m.used && u64::from(now.wrapping_sub(m.since)) >= limit)
    }

    /// Forget every call `owner` (an ended HTTP session) left waiting.
    pub fn forget(&mut self, owner: &[u8; 16]) {
        for m in &mut self.meta {
            if m.used && m.owner == *owner {
                m.used = false;
            }
        }
    }
}

impl<const N: usize, const B: usize> Default for Waiting<N, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize, const B: usize> fmt::Debug for Waiting<N, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waiting")
            .field("waiting", &self.len())
            .field("slots", &N)
            .field("slot_bytes", &B)
            .finish_non_exhaustive()
    }
}

/// A [`Waiting`] store without its sizes (so the server is not compiled
/// once per size).
pub(crate) struct WaitingView<'a> {
    pub(crate) meta: &'a mut [Meta],
    pub(crate) bytes: &'a mut [u8],
    pub(crate) slot_bytes: usize,
    pub(crate) scratch: &'a mut [u8],
    pub(crate) generation: &'a mut u32,
    /// Whose calls this request may answer or cancel.
    pub(crate) owner: [u8; 16],
    /// The adapter's clock (truncated), when this request came.
    pub(crate) now: u32,
    /// What handling one frame did to a waiting call (for the HTTP mapping,
    /// which routes a call's later output to the stream of its request).
    pub(crate) event: Option<CallEvent>,
}

/// What handling one frame did to a waiting call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallEvent {
    /// A call started waiting: the output is its requests to the client.
    Parked(u64),
    /// An answer made the call ask again: the output is its new requests.
    Continued(u64),
    /// The call is over: the output is its final answer.
    Finished(u64),
    /// The call was cancelled: nothing more comes for it.
    Dropped(u64),
}

/// Why a call cannot wait for the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoRoom {
    /// Every slot holds a waiting call (`slots` of them).
    Full { slots: usize },
    /// The request is larger than a slot.
    TooLarge { slot_bytes: usize },
    /// A request inside a batch (its answer is part of the batch's).
    Batch,
    /// An async handler's call where its caller may let other requests
    /// take the store while the handler runs and keeps nothing of it for
    /// the call (`Server::handle_async`, `Http::finish` without
    /// `Http::keep`): it cannot wait.
    #[cfg(feature = "async-handlers")]
    Async,
}

impl NoRoom {
    /// The answer to a call that cannot wait: `-32603` naming the limit.
    pub(super) fn answer(self, resp: super::out::Out<'_, '_>) -> super::out::Wrote {
        use crate::wire::emit::Decimal;
        const LEAD: &str = "cannot wait for the client's input";
        let message = match self {
            NoRoom::Full { slots } => format_args!(
                "{LEAD}: all {} waiting-call slots are in use",
                Decimal::from(slots)
            ),
            NoRoom::TooLarge { slot_bytes } => format_args!(
                "{LEAD}: it does not fit the {}-byte waiting-call slot",
                Decimal::from(slot_bytes)
            ),
            NoRoom::Batch => format_args!("{LEAD} inside a batch"),
            #[cfg(feature = "async-handlers")]
            NoRoom::Async => format_args!("{LEAD} in an async handler on this protocol version"),
        };
        resp.error(
            crate::error::INTERNAL_ERROR,
            message,
            super::out::Data::None,
        )
    }
}

impl WaitingView<'_> {
    /// The bytes of slot `slot`.
    pub(crate) fn slot(&self, slot: usize) -> &[u8] {
        self.bytes.get(self.span(slot)).unwrap_or(&[])
    }

    fn slot_mut(&mut self, slot: usize) -> &mut [u8] {
        let span = self.span(slot);
        self.bytes.get_mut(span).unwrap_or(&mut [])
    }

    /// Where slot `slot` lies in `bytes`.
    fn span(&self, slot: usize) -> core::ops::Range<usize> {
        let start = slot.saturating_mul(self.slot_bytes);
        start..start.saturating_add(self.slot_bytes)
    }

    /// Copy `frame` (a request whose handler may ask for input) into a free
    /// slot, tentatively: the slot is taken only by [`park`](Self::park).
    pub(crate) fn reserve(&mut self, frame: &[u8], id: (usize, usize)) -> Result<usize, NoRoom> {
        let slots = self.meta.len();
        let Some(slot) = self.meta.iter().position(|m| !m.used) else {
            return Err(NoRoom::Full { slots });
        };
        let slot_bytes = self.slot_bytes;
        let Some(dst) = self.slot_mut(slot).get_mut(..frame.len()) else {
            return Err(NoRoom::TooLarge { slot_bytes });
        };
        dst.copy_from_slice(frame);
        if let Some(m) = self.meta.get_mut(slot) {
            *m = Meta {
                request_len: frame.len(),
                id,
                owner: self.owner,
                ..Meta::EMPTY
            };
        }
        Ok(slot)
    }

    /// Take `slot` for a new round: its keys and methods, its state. The
    /// answers start empty. `Err` when the state does not fit.
    pub(crate) fn park(
        &mut self,
        slot: usize,
        keys: &[(&[u8], u8)],
        state: Option<&[u8]>,
    ) -> Result<u32, NoRoom> {
        *self.generation = self.generation.wrapping_add(1);
        let generation = *self.generation;
        let slot_bytes = self.slot_bytes;
        let Some(meta) = self.meta.get(slot).copied() else {
            return Err(NoRoom::TooLarge { slot_bytes });
        };
        let at = meta.request_len;
        let state_len = state.map(<[u8]>::len);
        let answers_at = at + state_len.unwrap_or(0);
        let bytes = self.slot_mut(slot);
        if let Some(state) = state {
            let Some(dst) = bytes.get_mut(at..answers_at) else {
                return Err(NoRoom::TooLarge { slot_bytes });
            };
            dst.copy_from_slice(state);
        }
        let Some(open) = bytes.get_mut(answers_at) else {
            return Err(NoRoom::TooLarge { slot_bytes });
        };
        *open = b'{';
        let mut m = Meta {
            used: true,
            generation,
            // The first round names the call.
            call: if meta.round == 0 {
                generation
            } else {
                meta.call
            },
            round: meta.round.saturating_add(1),
            since: self.now,
            state_len,
            answers_len: 1,
            count: 0,
            answered: 0,
            ..meta
        };
        for (k, (key, method)) in keys.iter().take(MAX_INPUT_REQUESTS).enumerate() {
            if let (Some(dst), Some(len)) = (m.keys.get_mut(k), m.key_lens.get_mut(k)) {
                let n = key.len().min(MAX_KEY);
                if let (Some(d), Some(s)) = (dst.get_mut(..n), key.get(..n)) {
                    d.copy_from_slice(s);
                }
                *len = n as u8;
            }
            if let Some(slot_method) = m.methods.get_mut(k) {
                *slot_method = *method;
            }
            m.count += 1;
        }
        if let Some(dst) = self.meta.get_mut(slot) {
            *dst = m;
        }
        let key = self.call_key(slot);
        self.event = Some(if m.round == 1 {
            CallEvent::Parked(key)
        } else {
            CallEvent::Continued(key)
        });
        Ok(generation)
    }

    /// The slot and input-request index an answer's id names, if it names
    /// a waiting call's outstanding request of this round.
    pub(crate) fn find_answer(&self, id: &[u8]) -> Option<(usize, usize)> {
        let (slot, generation, k) = parse_request_id(id)?;
        let m = self.meta.get(slot)?;
        (m.used
            && m.owner == self.owner
            && m.generation == generation
            && k < usize::from(m.count)
            && m.answered & (1 << k) == 0)
            .then_some((slot, k))
    }

    /// The waiting call whose original request id is `id` (exact token).
    pub(crate) fn find_call(&self, id: &[u8]) -> Option<usize> {
        (0..self.meta.len()).find(|&slot| {
            self.meta.get(slot).is_some_and(|m| {
                m.used && m.owner == self.owner && self.slot(slot).get(m.id.0..m.id.1) == Some(id)
            })
        })
    }

    /// Record `result` (raw JSON) as the answer to input request `k` of
    /// `slot`. `Ok(true)` when every answer is in. `Err` when it does not
    /// fit the slot.
    pub(crate) fn record(&mut self, slot: usize, k: usize, result: &[u8]) -> Result<bool, NoRoom> {
        let slot_bytes = self.slot_bytes;
        let Some(m) = self.meta.get(slot).copied() else {
            return Err(NoRoom::TooLarge { slot_bytes });
        };
        let start = m.answers_end();
        let key = m.key(k);
        let comma = usize::from(m.answered != 0);
        // `,"KEY":RESULT`, and one byte kept for the closing `}`.
        let need = comma + key.len() + 3 + result.len();
        let bytes = self.slot_mut(slot);
        let Some(dst) = bytes.get_mut(start..start + need + 1) else {
            return Err(NoRoom::TooLarge { slot_bytes });
        };
        let mut at = 0;
        let comma: &[u8] = if comma == 1 { b"," } else { b"" };
        for part in [comma, b"\"", key, b"\":", result] {
            if let Some(d) = dst.get_mut(at..at + part.len()) {
                d.copy_from_slice(part);
            }
            at += part.len();
        }
        if let Some(meta) = self.meta.get_mut(slot) {
            meta.answers_len += need;
            meta.answered |= 1 << k;
            return Ok(meta.all_answered());
        }
        Ok(false)
    }

    /// A call whose answers are all in, ready to run again: its answers
    /// object closed (`record` kept the byte for it) and its request
    /// copied to the scratch area. `None` if the slot is not consistent.
    pub(crate) fn prepare_retry(&mut self, slot: usize) -> Option<()> {
        let m = self.meta.get(slot).copied()?;
        let span = self.span(slot);
        let bytes = self.bytes.get_mut(span)?;
        *bytes.get_mut(m.answers_end())? = b'}';
        self.scratch
            .get_mut(..m.request_len)?
            .copy_from_slice(bytes.get(..m.request_len)?);
        Some(())
    }

    /// What [`prepare_retry`](Self::prepare_retry) made ready: the request
    /// (in the scratch area) and the call's state and answers (in its
    /// slot), borrowed apart.
    pub(crate) fn retry_parts(&mut self, slot: usize) -> Option<(&mut [u8], Mrtr<'_>)> {
        let m = self.meta.get(slot).copied()?;
        let bytes: &[u8] = self.bytes.get(self.span(slot))?;
        let answers = Mrtr {
            binding: None,
            state: m
                .state_len
                .and_then(|_| bytes.get(m.request_len..m.state_end())),
            responses: bytes
                .get(m.state_end()..=m.answers_end())
                .map(Value::trusted),
        };
        Some((self.scratch.get_mut(..m.request_len)?, answers))
    }

    /// Whether `slot` still holds the call whose round is `generation`
    /// (not answered, cancelled or forgotten since).
    #[cfg(feature = "async-handlers")]
    pub(crate) fn owns(&self, slot: usize, generation: u32) -> bool {
        self.meta
            .get(slot)
            .is_some_and(|m| m.used && m.generation == generation)
    }

    /// The bookkeeping of `slot`.
    #[cfg(feature = "async-handlers")]
    pub(crate) fn meta_of(&self, slot: usize) -> Option<Meta> {
        self.meta.get(slot).copied()
    }

    /// Copy what [`prepare_retry`](Self::prepare_retry) made ready for
    /// `slot` into `buf`, laid out as in the slot: the request (from the
    /// scratch area, as the call's first phase left it), then the state and
    /// the answers. `None` if `buf` is too short.
    #[cfg(feature = "async-handlers")]
    pub(crate) fn copy_retry(&self, slot: usize, buf: &mut [u8]) -> Option<()> {
        let m = self.meta.get(slot).copied()?;
        let bytes = self.slot(slot);
        let end = m.answers_end() + 1;
        let (request, rest) = buf.get_mut(..end)?.split_at_mut(m.request_len);
        request.copy_from_slice(self.scratch.get(..m.request_len)?);
        rest.copy_from_slice(bytes.get(m.request_len..end)?);
        Some(())
    }

    /// The key an adapter knows `slot`'s call by (stable across rounds).
    pub(crate) fn call_key(&self, slot: usize) -> u64 {
        call_key(slot, self.meta.get(slot).map_or(0, |m| m.call))
    }

    /// Free `slot`. A call that was waiting is over ([`CallEvent::Finished`]:
    /// whatever is written now is its final answer).
    pub(crate) fn release(&mut self, slot: usize) {
        let key = self.call_key(slot);
        if let Some(m) = self.meta.get_mut(slot) {
            if m.used {
                self.event = Some(CallEvent::Finished(key));
            }
            m.used = false;
        }
    }

    /// Drop `slot`'s call, cancelled: nothing more is written for it.
    pub(crate) fn cancel(&mut self, slot: usize) {
        self.release(slot);
        self.event = Some(CallEvent::Dropped(self.call_key(slot)));
    }
}

/// The key an adapter knows the call in `slot` by: its slot and `call`
/// (which names it across its rounds).
pub(crate) fn call_key(slot: usize, call: u32) -> u64 {
    ((slot as u64) << 32) | u64::from(call)
}

/// The id the server gives input request `k` of `slot` in round
/// `generation`: `"picomcp-SLOT-GENERATION-K"` (a JSON string; the client's
/// own request ids are a separate space).
pub(crate) fn write_request_id(
    w: &mut crate::wire::emit::Writer<'_>,
    slot: usize,
    generation: u32,
    k: usize,
) {
    w.raw(b"\"picomcp-");
    w.u64(slot as u64);
    w.raw(b"-");
    w.u64(u64::from(generation));
    w.raw(b"-");
    w.u64(k as u64);
    w.raw(b"\"");
}

fn parse_request_id(id: &[u8]) -> Option<(usize, u32, usize)> {
    let rest = id.strip_prefix(b"\"picomcp-")?.strip_suffix(b"\"")?;
    let mut parts = rest.split(|&b| b == b'-');
    let mut number = || -> Option<u64> {
        let digits = parts.next()?;
        if digits.is_empty() || digits.len() > 10 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(
            digits
                .iter()
                .fold(0u64, |n, d| n * 10 + u64::from(d - b'0')),
        )
    };
    let slot = usize::try_from(number()?).ok()?;
    let generation = u32::try_from(number()?).ok()?;
    let k = usize::try_from(number()?).ok()?;
    parts.next().is_none().then_some((slot, generation, k))
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn request_ids_round_trip_and_refuse_anything_else() {
        let mut buf = [0u8; 64];
        let mut w = crate::wire::emit::Writer::new(&mut buf);
        write_request_id(&mut w, 3, 4_000_000_000, 1);
        let n = w.finish().unwrap();
        assert_eq!(&buf[..n], b"\"picomcp-3-4000000000-1\"");
        assert_eq!(parse_request_id(&buf[..n]), Some((3, 4_000_000_000, 1)));
        for bad in [
            &b"\"picomcp-3-4-\""[..],
            b"\"picomcp-3-4\"",
            b"\"picomcp-3-4-1-2\"",
            b"\"picomcp--4-1\"",
            b"picomcp-3-4-1",
            b"\"picomcp-3-99999999999-1\"",
            b"7",
        ] {
            assert_eq!(
                parse_request_id(bad),
                None,
                "{:?}",
                core::str::from_utf8(bad)
            );
        }
    }

    #[test]
    fn a_slot_holds_request_state_and_answers() {
        let mut store = Waiting::<1, 96>::new();
        let mut v = store.view();
        let frame = br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#;
        let slot = v.reserve(frame, (22, 23)).unwrap();
        // Reserved, not taken: a second reserve gets the same slot.
        assert_eq!(v.reserve(frame, (22, 23)), Ok(slot));
        let generation = v.park(slot, &[(b"a", 2), (b"b", 1)], Some(b"st")).unwrap();
        assert_eq!(v.reserve(frame, (22, 23)), Err(NoRoom::Full { slots: 1 }));
        assert_eq!(v.find_call(b"7"), Some(slot));
        assert_eq!(v.find_call(b"8"), None);
        let id = std::format!("\"picomcp-{slot}-{generation}-1\"");
        assert_eq!(v.find_answer(id.as_bytes()), Some((slot, 1)));
        let stale = std::format!("\"picomcp-{slot}-{}-1\"", generation.wrapping_sub(1));
        assert_eq!(v.find_answer(stale.as_bytes()), None);
        assert_eq!(v.record(slot, 1, b"{\"x\":1}"), Ok(false));
        // Answered once: a second answer to the same request is not taken.
        assert_eq!(v.find_answer(id.as_bytes()), None);
        assert_eq!(v.record(slot, 0, b"[]"), Ok(true));
        let m = v.meta[slot];
        let bytes = v.slot(slot);
        let answers_at = m.request_len + 2;
        assert_eq!(&bytes[m.request_len..answers_at], b"st");
        assert_eq!(
            &bytes[answers_at..answers_at + m.answers_len],
            br#"{"b":{"x":1},"a":[]"#
        );
        // An answer too large for the slot is refused.
        assert!(matches!(
            v.record(slot, 0, &[b'1'; 90]),
            Err(NoRoom::TooLarge { .. })
        ));
        v.release(slot);
        assert_eq!(store.len(), 0);
    }

    #[test]
    fn the_documented_size_holds() {
        // About 200 bytes of bookkeeping per slot, plus the bytes.
        let per_slot =
            core::mem::size_of::<Waiting<2, 0>>() - core::mem::size_of::<Waiting<1, 0>>();
        assert!(per_slot <= 216, "{per_slot} bytes per slot");
        assert!(core::mem::size_of::<Waiting<2, 768>>() <= 3 * 768 + 2 * 216 + 16);
    }

    #[test]
    fn a_request_larger_than_a_slot_cannot_wait() {
        let mut store = Waiting::<2, 8>::new();
        assert_eq!(
            store.view().reserve(b"123456789", (0, 1)),
            Err(NoRoom::TooLarge { slot_bytes: 8 })
        );
    }
}
