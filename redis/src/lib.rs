//! Several replicas of a [picomcp-tower](picomcp_tower) MCP endpoint, behind
//! a load balancer with no stickiness, sharing what the handshake era keeps
//! between requests through one Redis server.
//!
//! The 2026-07-28 revision needs none of this: each request stands alone.
//! Give every replica the same request-state key (and cursor key, when set
//! apart), and a `reserve` started on one replica finishes on another.
//!
//! The handshake era (2024-11-05 … 2025-11-25) keeps state on the server
//! between requests. [`RedisStore`] shares it:
//!
//! - **Sessions**: it is a [`SharedStore`]. A session (its negotiated
//!   version, the client's capabilities, its `logging/setLevel` level: the
//!   four bytes of `Connection::to_bytes`) is one Redis key, `PREFIX` `session:` and the id, expiring after the
//!   idle time unused (Redis's own expiry: no replica's clock is
//!   involved). Created through one replica, it is served by any.
//! - **Waiting calls and subscriptions**: it is a [`Peers`]. A call that
//!   asks the client (elicitation, sampling) waits on the replica that holds
//!   its SSE stream; the client's answer, POSTed through any replica, is
//!   published on the channel `PREFIX` `relay` and given to every other
//!   replica's [`McpService::relayed`](picomcp_tower::McpService::relayed)
//!   by [`listen`](RedisStore::listen): the one where the call waits takes
//!   it. A session's subscriptions are a Redis set (`PREFIX` `subs:` and
//!   the id), applied on every replica as they are made and replayed where
//!   the session opens its `GET` stream.
//! - **Changes**: [`announce`](RedisStore::announce) publishes on
//!   `PREFIX` `changes`; `listen` hands what other replicas announce to the
//!   application, which tells its own `Changes` (subscribers connected to
//!   any replica are told).
//!
//! ```no_run
//! use picomcp::changes::Changes;
//! use picomcp::{Server, ServerInfo};
//! use picomcp_redis::RedisStore;
//! use picomcp_tower::McpService;
//!
//! static CHANGES: Changes = Changes::new().on_change(picomcp_tower::wake);
//! static SERVER: Server<'static, ()> =
//!     Server::new(ServerInfo::new("demo", "1.0.0"), ()).changes(&CHANGES);
//!
//! # fn run() -> Result<(), redis::RedisError> {
//! let store = RedisStore::open("redis://127.0.0.1:6379/", "demo:", 600)?;
//! let mcp = McpService::builder(&SERVER)
//!     .sessions(store.clone())
//!     .peers(store.clone())
//!     .build();
//! let relay_to = mcp.clone();
//! let runtime = tokio::runtime::Handle::current();
//! store.listen(
//!     move |session, message| {
//!         runtime.spawn(relay_to.relayed(session, message));
//!     },
//!     |uri| {
//!         if uri == "demo://thing" {
//!             CHANGES.resource_updated("demo://thing");
//!         }
//!     },
//! );
//! // A handler that changes the thing: `CHANGES.resource_updated(...)`
//! // for this replica's subscribers, `store.announce("demo://thing")` for
//! // the others'.
//! # Ok(()) }
//! ```
//!
//! # What Redis pub/sub does not promise
//!
//! Pub/sub is at most once: a replica whose listener is reconnecting
//! (it retries every 200 ms) misses what is published meanwhile. A missed
//! change is a missed notification (the subscriber reads again at the
//! next one); a missed answer leaves its call waiting until the client
//! cancels it or its stream ends. Sessions and subscriptions are keys, not
//! messages: nothing of them is lost that way.
//!
//! # Blocking
//!
//! The store's methods are synchronous, as picomcp's
//! [`SessionStore`](picomcp::http::SessionStore) is: each is one round trip to Redis on a
//! pooled connection, made on the request's worker thread (bounded by the
//! timeout given to [`RedisStore::open`]). When Redis cannot be reached a
//! session is not found (`404`: the client initializes again) and a new
//! one cannot be stored (`503` with `Retry-After`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use picomcp::Connection;
use picomcp::http::SessionId;
use picomcp_tower::{Peers, SharedStore};
pub use redis;
use redis::RedisResult;

/// How long one Redis command may take.
const TIMEOUT: Duration = Duration::from_secs(2);

/// Handshake-era sessions, subscriptions, relayed answers and announced
/// changes in one Redis server, shared by every replica (see the
/// [crate docs](crate)). Cheap to clone: clones share one connection pool.
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    /// Idle connections, reused one request at a time.
    pool: Mutex<Vec<redis::Connection>>,
    prefix: String,
    /// Seconds a session lives unused.
    idle_s: u64,
    /// This replica's name on the channels (its own messages come back).
    replica: String,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.inner.prefix)
            .field("idle_s", &self.inner.idle_s)
            .field("replica", &self.inner.replica)
            .finish_non_exhaustive()
    }
}

/// The longest idle time a session is given: 100 years (`u64::MAX`
/// seconds, "never" to a caller, is past the expiry Redis accepts).
pub const MAX_IDLE_S: u64 = 100 * 365 * 24 * 3600;

/// `idle_s` as the store keeps it: at least 1 s, at most [`MAX_IDLE_S`].
fn idle_seconds(idle_s: u64) -> u64 {
    idle_s.clamp(1, MAX_IDLE_S)
}

impl RedisStore {
    /// The store of the Redis server at `url` (`redis://HOST:PORT/DB`),
    /// its keys and channels named `prefix…`, sessions expiring after
    /// `idle_s` seconds unused (at least 1, at most [`MAX_IDLE_S`]: Redis
    /// refuses an expiry past what its clock holds, and every session would
    /// then fail). Fails when the server does not answer a `PING`.
    pub fn open(url: &str, prefix: &str, idle_s: u64) -> RedisResult<Self> {
        let mut name = [0u8; 8];
        picomcp_tower::os_random(&mut name);
        let store = Self {
            inner: Arc::new(Inner {
                client: redis::Client::open(url)?,
                pool: Mutex::new(Vec::new()),
                prefix: prefix.to_owned(),
                idle_s: idle_seconds(idle_s),
                replica: name.iter().map(|b| format!("{b:02x}")).collect(),
            }),
        };
        store.run(|c| redis::cmd("PING").query::<String>(c))?;
        Ok(store)
    }

    /// Run `f` on a pooled connection (for the application's own shared
    /// data, e.g. the bookshop's stock). A connection that failed is not
    /// pooled again.
    pub fn run<T>(
        &self,
        f: impl FnOnce(&mut redis::Connection) -> RedisResult<T>,
    ) -> RedisResult<T> {
        let pooled = lock(&self.inner.pool).pop();
        let mut conn = match pooled {
            Some(c) => c,
            None => {
                let c = self.inner.client.get_connection_with_timeout(TIMEOUT)?;
                c.set_read_timeout(Some(TIMEOUT))?;
                c.set_write_timeout(Some(TIMEOUT))?;
                c
            }
        };
        let r = f(&mut conn);
        if r.is_ok() {
            lock(&self.inner.pool).push(conn);
        }
        r
    }

    /// The key `name` under this store's prefix.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.inner.prefix)
    }

    fn session_key(&self, id: &SessionId) -> String {
        self.key(&format!("session:{}", id.hex().as_str()))
    }

    fn subs_key(&self, id: &SessionId) -> String {
        self.key(&format!("subs:{}", id.hex().as_str()))
    }

    /// Tell the other replicas that `what` changed (a resource's URI, or
    /// whatever the application's [`listen`](Self::listen) understands).
    pub fn announce(&self, what: &str) -> RedisResult<()> {
        let payload = format!("{} {what}", self.inner.replica);
        self.run(|c| {
            redis::cmd("PUBLISH")
                .arg(self.key("changes"))
                .arg(payload)
                .query::<i64>(c)
        })
        .map(drop)
    }

    /// Listen, on a thread of its own, to what the other replicas publish:
    /// a client's message relayed for a session (`relayed`: give it to
    /// [`McpService::relayed`](picomcp_tower::McpService::relayed)), a
    /// change announced (`changed`). Reconnects after an error, every
    /// 200 ms. Returns once subscribed (or after 2 s, still trying).
    pub fn listen(
        &self,
        relayed: impl Fn(SessionId, Vec<u8>) + Send + 'static,
        changed: impl Fn(&str) + Send + 'static,
    ) {
        let store = self.clone();
        let (ready, subscribed) = std::sync::mpsc::channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("picomcp-redis".into())
            .spawn(move || {
                let (relay, changes) = (store.key("relay"), store.key("changes"));
                loop {
                    let _ = store.listen_once(&relay, &changes, &ready, &relayed, &changed);
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
        if spawned.is_ok() {
            let _ = subscribed.recv_timeout(TIMEOUT);
        }
    }

    fn listen_once(
        &self,
        relay: &str,
        changes: &str,
        ready: &std::sync::mpsc::Sender<()>,
        relayed: &dyn Fn(SessionId, Vec<u8>),
        changed: &dyn Fn(&str),
    ) -> RedisResult<()> {
        let mut conn = self.inner.client.get_connection_with_timeout(TIMEOUT)?;
        let mut pubsub = conn.as_pubsub();
        pubsub.subscribe(relay)?;
        pubsub.subscribe(changes)?;
        let _ = ready.send(());
        loop {
            let message = pubsub.get_message()?;
            let payload = message.get_payload_bytes();
            // "REPLICA REST": our own messages come back too.
            let Some(at) = payload.iter().position(|&b| b == b' ') else {
                continue;
            };
            let (from, rest) = (&payload[..at], &payload[at + 1..]);
            if from == self.inner.replica.as_bytes() {
                continue;
            }
            if message.get_channel_name() == relay {
                // "SESSION MESSAGE"
                let Some(at) = rest.iter().position(|&b| b == b' ') else {
                    continue;
                };
                let id = std::str::from_utf8(&rest[..at])
                    .ok()
                    .and_then(SessionId::parse);
                if let Some(id) = id {
                    relayed(id, rest[at + 1..].to_vec());
                }
            } else if let Ok(what) = std::str::from_utf8(rest) {
                changed(what);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SharedStore for RedisStore {
    fn load(&self, id: &SessionId, _now: u64) -> Option<Connection> {
        // Marks it used: its (and its subscriptions') idle time starts again.
        let (bytes,): (Option<Vec<u8>>,) = self
            .run(|c| {
                redis::pipe()
                    .cmd("GETEX")
                    .arg(self.session_key(id))
                    .arg("EX")
                    .arg(self.inner.idle_s)
                    .cmd("EXPIRE")
                    .arg(self.subs_key(id))
                    .arg(self.inner.idle_s)
                    .ignore()
                    .query(c)
            })
            .ok()?;
        Connection::from_bytes(&bytes?)
    }

    fn save(&self, id: &SessionId, conn: Connection, _now: u64) {
        let _ = self.run(|c| {
            redis::cmd("SET")
                .arg(self.session_key(id))
                .arg(&conn.to_bytes()[..])
                .arg("XX")
                .arg("EX")
                .arg(self.inner.idle_s)
                .query::<Option<String>>(c)
        });
    }

    fn try_insert(&self, id: SessionId, conn: Connection, _now: u64) -> bool {
        self.run(|c| {
            redis::cmd("SET")
                .arg(self.session_key(&id))
                .arg(&conn.to_bytes()[..])
                .arg("NX")
                .arg("EX")
                .arg(self.inner.idle_s)
                .query::<Option<String>>(c)
        })
        .is_ok_and(|set| set.is_some())
    }

    fn remove(&self, id: &SessionId) -> bool {
        self.run(|c| {
            redis::pipe()
                .cmd("DEL")
                .arg(self.session_key(id))
                .cmd("DEL")
                .arg(self.subs_key(id))
                .ignore()
                .query::<(i64,)>(c)
        })
        .is_ok_and(|(n,)| n > 0)
    }

    fn contains(&self, id: &SessionId, _now: u64) -> bool {
        self.run(|c| {
            redis::cmd("EXISTS")
                .arg(self.session_key(id))
                .query::<i64>(c)
        })
        .is_ok_and(|n| n > 0)
    }
}

impl Peers for RedisStore {
    fn relay(&self, session: &SessionId, message: &[u8]) {
        let mut payload =
            format!("{} {} ", self.inner.replica, session.hex().as_str()).into_bytes();
        payload.extend_from_slice(message);
        let _ = self.run(|c| {
            redis::cmd("PUBLISH")
                .arg(self.key("relay"))
                .arg(payload)
                .query::<i64>(c)
        });
    }

    fn subscribed(&self, session: &SessionId, uri: &str, on: bool) {
        let key = self.subs_key(session);
        let _ = self.run(|c| {
            redis::pipe()
                .cmd(if on { "SADD" } else { "SREM" })
                .arg(&key)
                .arg(uri)
                .ignore()
                .cmd("EXPIRE")
                .arg(&key)
                .arg(self.inner.idle_s)
                .ignore()
                .query::<()>(c)
        });
    }

    fn subscriptions(&self, session: &SessionId) -> Vec<String> {
        self.run(|c| {
            redis::cmd("SMEMBERS")
                .arg(self.subs_key(session))
                .query::<Vec<String>>(c)
        })
        .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The idle time's edges: 0 is 1 s, `MAX_IDLE_S` is kept, anything
    /// past it (up to `u64::MAX`) is `MAX_IDLE_S`.
    #[test]
    fn idle_seconds_at_their_edges() {
        assert_eq!(idle_seconds(0), 1);
        assert_eq!(idle_seconds(1), 1);
        assert_eq!(idle_seconds(600), 600);
        assert_eq!(idle_seconds(MAX_IDLE_S), MAX_IDLE_S);
        assert_eq!(idle_seconds(MAX_IDLE_S + 1), MAX_IDLE_S);
        assert_eq!(idle_seconds(u64::MAX), MAX_IDLE_S);
    }
}
