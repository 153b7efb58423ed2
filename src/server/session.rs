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
    fn connection_state_is_a_few_bytes() {
        assert!(
            core::mem::size_of::<Connection>() <= 8,
            "{}",
            core::mem::size_of::<Connection>()
        );
    }
}
