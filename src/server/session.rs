//! Lifecycle type-state: a session that has not completed `initialize` has no
//! way to reach tools or resources.
//!
//! [`Session<Uninitialized>`] becomes [`Session<Ready>`] only through
//! [`Session::initialize`], which consumes it. Everything that serves tools
//! and resources takes a `&Session<Ready>`; an uninitialized session does not
//! even have a negotiated version to ask for:
//!
//! ```compile_fail,E0599
//! use picomcp::server::{Session, Uninitialized};
//! let s = Session::<Uninitialized>::new();
//! let _ = s.version(); // error: only a Ready session has a negotiated version
//! ```
//!
//! On the wire messages still arrive in any order; [`Connection`] holds
//! whichever state a connection is in and the server answers an early request
//! with a protocol error at run time.

pub use crate::mcp::ClientCapabilities;
use crate::mcp::{LogLevel, ProtocolVersion};

/// Marker: `initialize` has not succeeded yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uninitialized;

/// Marker: a protocol version was negotiated; tools and resources are served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ready {
    version: ProtocolVersion,
    log_level: LogLevel,
}

/// One client's protocol session, in lifecycle state `St`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session<St> {
    state: St,
    client: ClientCapabilities,
}

impl Session<Uninitialized> {
    /// A fresh session.
    pub const fn new() -> Self {
        Self {
            state: Uninitialized,
            client: ClientCapabilities {
                roots: false,
                sampling: false,
                elicitation: false,
            },
        }
    }

    /// Complete the handshake with a negotiated version.
    pub fn initialize(
        self,
        version: ProtocolVersion,
        client: ClientCapabilities,
    ) -> Session<Ready> {
        Session {
            state: Ready {
                version,
                log_level: LogLevel::Info,
            },
            client,
        }
    }
}

impl Default for Session<Uninitialized> {
    fn default() -> Self {
        Self::new()
    }
}

impl Session<Ready> {
    /// The negotiated protocol version.
    pub fn version(&self) -> ProtocolVersion {
        self.state.version
    }

    /// Re-negotiate (a repeated `initialize`); the log level is kept.
    pub fn reinitialize(
        self,
        version: ProtocolVersion,
        client: ClientCapabilities,
    ) -> Session<Ready> {
        Session {
            state: Ready {
                version,
                log_level: self.state.log_level,
            },
            client,
        }
    }

    /// The least severe level delivered to this client (`info` until it
    /// sends `logging/setLevel`).
    pub fn log_level(&self) -> LogLevel {
        self.state.log_level
    }

    /// Set the log level (`logging/setLevel`).
    pub fn set_log_level(&mut self, level: LogLevel) {
        self.state.log_level = level;
    }
}

impl<St> Session<St> {
    /// The capabilities the client declared (all false before `initialize`).
    pub fn client_capabilities(&self) -> ClientCapabilities {
        self.client
    }
}

/// The per-connection state a stream transport keeps: a few bytes.
///
/// A connection's era is decided by its first request: one that is not
/// `initialize` and carries `params._meta["io.modelcontextprotocol/protocolVersion"]`
/// makes it a 2026-07-28 (stateless) connection; anything else makes it a
/// handshake-era one. Later cross-era traffic is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Connection {
    /// No request yet: the era is not decided.
    Fresh,
    /// Handshake era, waiting for `initialize`.
    Uninitialized(Session<Uninitialized>),
    /// Handshake era, initialized.
    Ready(Session<Ready>),
    /// 2026-07-28: every request stands alone, carrying its own envelope.
    Modern,
}

/// Whom a 2026-07-28 request was authenticated as (a principal, a client
/// certificate's name, a session the caller keeps), given with the request
/// ([`Server::handle_as`](crate::Server::handle_as),
/// [`Request::subject`](crate::http::Request::subject)): the SHA-256 of the
/// bytes the caller gave, 32 bytes however long they were. It travels with
/// the one request, not in the [`Connection`] (which stays a few bytes). Sealed
/// `requestState` carries it under its tag, so a state issued to one
/// subject is refused, like a tampered one, when another (or none) presents
/// it; one issued to none is refused when a subject presents it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Subject(pub(crate) [u8; 32]);

impl Subject {
    /// The subject of these bytes (any length; compared by digest).
    pub fn of(subject: &[u8]) -> Self {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"picomcp subject v1\0");
        h.update(subject);
        Self(h.finalize().into())
    }
}

impl core::fmt::Debug for Subject {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // A digest, not the subject: nothing to hide, little to show.
        f.write_str("Subject(..)")
    }
}

impl Connection {
    /// A new connection; its first request decides the era.
    pub const fn new() -> Self {
        Connection::Fresh
    }

    /// A 2026-07-28 connection from the start (e.g. one HTTP request).
    pub const fn modern() -> Self {
        Connection::Modern
    }

    /// The protocol version in force: negotiated (handshake), or 2026-07-28.
    pub fn version(&self) -> Option<ProtocolVersion> {
        match self {
            Connection::Ready(s) => Some(s.version()),
            Connection::Modern => Some(ProtocolVersion::V2026_07_28),
            _ => None,
        }
    }
}

impl Connection {
    /// What a shared session store keeps for this connection (several
    /// replicas serving one session): its lifecycle state, and for an
    /// initialized one the negotiated version, the log level and the
    /// client's capabilities, in four bytes. [`Connection::from_bytes`]
    /// reads them back; the one encoding of a connection, so a store never
    /// names its fields.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; 4] {
        let caps = |c: ClientCapabilities| {
            u8::from(c.roots) | u8::from(c.sampling) << 1 | u8::from(c.elicitation) << 2
        };
        match self {
            Connection::Fresh => [0, 0, 0, 0],
            Connection::Uninitialized(s) => [1, 0, 0, caps(s.client)],
            Connection::Ready(s) => {
                let index = |found: Option<usize>| found.and_then(|i| u8::try_from(i).ok());
                let version = ProtocolVersion::HANDSHAKE
                    .iter()
                    .position(|v| *v == s.version());
                let level = LogLevel::ALL.iter().position(|l| *l == s.log_level());
                [
                    2,
                    index(version).unwrap_or(u8::MAX),
                    index(level).unwrap_or(u8::MAX),
                    caps(s.client),
                ]
            }
            Connection::Modern => [3, 0, 0, 0],
        }
    }

    /// The connection [`Connection::to_bytes`] wrote; `None` for bytes it
    /// never writes.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Option<Connection> {
        let &[tag, version, level, caps] = bytes else {
            return None;
        };
        if caps > 0b111 {
            return None;
        }
        let client = ClientCapabilities {
            roots: caps & 1 != 0,
            sampling: caps & 2 != 0,
            elicitation: caps & 4 != 0,
        };
        Some(match (tag, version, level) {
            (0, 0, 0) if caps == 0 => Connection::Fresh,
            (1, 0, 0) => Connection::Uninitialized(Session {
                state: Uninitialized,
                client,
            }),
            (2, v, l) => {
                let version = *ProtocolVersion::HANDSHAKE.get(usize::from(v))?;
                let mut ready = Session::new().initialize(version, client);
                ready.set_log_level(*LogLevel::ALL.get(usize::from(l))?);
                Connection::Ready(ready)
            }
            (3, 0, 0) if caps == 0 => Connection::Modern,
            _ => return None,
        })
    }
}

impl Default for Connection {
    fn default() -> Self {
        Self::new()
    }
}

/// Where a message comes from, for the rules that depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A frame of its own (a stream's line, an HTTP body).
    Alone,
    /// An element of a batch (no `initialize`, no waiting).
    Batch,
    /// An HTTP body the transport claims is 2026-07-28
    /// (`MCP-Protocol-Version: 2026-07-28`): an enveloped `initialize` there
    /// is a request for a method the revision removed (`-32601`), where a
    /// stream answers `initialize` on a modern connection `-32022`.
    ClaimedModern,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_round_trip_through_their_bytes() {
        let mut all = vec![Connection::Fresh, Connection::Modern];
        for caps in 0..8u8 {
            let client = ClientCapabilities {
                roots: caps & 1 != 0,
                sampling: caps & 2 != 0,
                elicitation: caps & 4 != 0,
            };
            all.push(Connection::Uninitialized(Session {
                state: Uninitialized,
                client,
            }));
            for version in ProtocolVersion::HANDSHAKE {
                for level in LogLevel::ALL {
                    let mut ready = Session::new().initialize(version, client);
                    ready.set_log_level(level);
                    all.push(Connection::Ready(ready));
                }
            }
        }
        for conn in all {
            assert_eq!(
                Connection::from_bytes(&conn.to_bytes()),
                Some(conn),
                "{conn:?}"
            );
        }
        for bad in [
            &[][..],
            &[2, 0, 0],
            &[4, 0, 0, 0],
            &[2, 4, 0, 0],
            &[2, 0, 8, 0],
            &[2, 0, 0, 8],
            &[0, 0, 0, 1],
            &[2, 0, 0, 0, 0],
        ] {
            assert_eq!(Connection::from_bytes(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn connection_state_is_a_few_bytes() {
        assert!(
            core::mem::size_of::<Connection>() <= 8,
            "{}",
            core::mem::size_of::<Connection>()
        );
    }
}
