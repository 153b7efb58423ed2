//! Handlers that await: async tools, resource reads, prompts and
//! completion, still without a heap.
//!
//! A plain tool handler is a `fn`; an async one is an `async fn` with the
//! same arguments and the same [`ToolOutcome`]:
//!
//! ```
//! use picomcp::schema::{Property, Schema};
//! use picomcp::tool::{Arguments, Reply, ToolDescriptor, ToolOutcome};
//!
//! struct Shop;
//!
//! async fn get_author<'a>(_: &'a Shop, args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
//!     #[derive(serde::Deserialize)]
//!     struct Args<'x> { title: &'x str }
//!     let Args { title } = args.parse()?;
//!     // ... an upstream call, a sensor read, a timer: anything that awaits.
//!     core::future::ready(()).await;
//!     reply.text(if title == "Dune" { "Frank Herbert" } else { "unknown" })
//! }
//!
//! picomcp::async_tools! {
//!     /// The bookshop's async tools.
//!     pub struct ShopAsync for Shop {
//!         /// `get_author`, awaiting.
//!         GET_AUTHOR: ToolDescriptor::new(
//!             "get_author",
//!             &Schema::object(&[Property::new("title", Schema::string())]).required(&["title"]),
//!         ) => get_author,
//!     }
//! }
//!
//! // Sync and async tools in one registry, in listing order.
//! static TOOLS: [picomcp::tool::Tool<Shop>; 1] = [ShopAsync::GET_AUTHOR];
//! static SERVER: picomcp::Server<'static, Shop> =
//!     picomcp::Server::new(picomcp::ServerInfo::new("shop", "1"), Shop).tools(&TOOLS);
//!
//! let mut conn = picomcp::Connection::Modern;
//! let mut line = *br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! let mut out = [0u8; 512];
//! let n = picomcp::asynch::block_on(SERVER.handle_async(&mut conn, &mut line, &mut out, &ShopAsync));
//! assert!(core::str::from_utf8(&out[..n]).unwrap().contains("Frank Herbert"));
//! ```
//!
//! # Static dispatch: the future is an enum the compiler sizes
//!
//! [`async_tools!`](crate::async_tools) generates a unit struct, one
//! [`Tool`] constant per handler (registered with the other tools, in the
//! same `&[Tool<S>]`) and an [`AsyncHandlers`] implementation whose `call` is
//! one `async fn` that matches the tool's index and awaits that handler. The
//! compiler lays that future out as an enum of the handlers' futures: its
//! size is the largest handler's state plus a discriminant, known at compile
//! time, and nothing is boxed. [`Server::handle_async`] returns a future the
//! caller owns and polls (on the stack of a task, in a `static` cell of an
//! embassy task, inside a hyper service future), so the caller bounds the
//! memory simply by where it puts that future: `core::mem::size_of_val`
//! says how much it is (`tests/asynch.rs` states and checks the figure for
//! its registry). What would need a heap does not compile: a recursive
//! `async fn` is rejected (`E0733`) unless the caller boxes it, and
//! `dyn Future` cannot be stored anywhere picomcp accepts one.
//!
//! # How a call is served
//!
//! [`Server::handle_async`] runs everything but the handler exactly as
//! [`Server::handle`] does (the same code): the frame is validated, routed,
//! the tool found, its arguments checked against the input schema. There the
//! synchronous core stops, records where it was (a few `Copy` spans and the
//! request's facts) and returns; `handle_async` then builds the handler's
//! [`Reply`] over the same output buffer, awaits the handler, and closes the
//! result with the same code as a sync handler's. The answers are
//! byte-identical to those of a sync handler that does the same.
//!
//! A handler's progress and log notifications reach the `notify` sink of
//! [`Server::handle_async_with`] the moment the handler sends them, while
//! its future is still pending; without a sink they are written ahead of the
//! answer in `out`, as with [`Server::handle`].
//!
//! An async handler that asks the client for input on the handshake era
//! waits in a [`Waiting`](crate::server::Waiting) store as a sync one does:
//! on a stream, where the caller leaves the store to the call while it
//! runs ([`serve_async_tools_subscribed`](crate::transport::serve_async_tools_subscribed),
//! feature `embedded-io-async`, one call at a time), and over HTTP, where
//! the requests in flight share the store and a call copies what it needs
//! out of it, the store locked only before and after its handler
//! ([`http::call`](crate::http::call): `Http::begin_streams`,
//! `Http::keep`, `Http::finish_waiting`). Through [`Server::handle_async`]
//! alone (no store) it is answered as a call that cannot wait (`-32603`);
//! 2026-07-28's `input_required` works everywhere.
//!
//! **Batches** (2025-03-26): [`Server::handle_async`] and the async serve
//! loops answer a batch's elements in turn, awaiting each async handler's
//! call where it comes; the array is the one a sync server writes. Those
//! calls run to their answers (a `notifications/cancelled` does not drop
//! them: the batch is one answer) and cannot ask the client for input, as
//! a sync handler's call in a batch cannot. Over HTTP ([`crate::http`]) a
//! batch's async call, like one served by a plain [`Server::handle`], is
//! answered `-32603` saying the tool is async: going on with the batch
//! after the handler would take the session again.
//! Resource reads (fixed URIs and templates), prompts and completion can
//! be async too ([`async_handlers!`](crate::async_handlers)).
//!
//! [`Server::handle`]: crate::Server::handle
//! [`Server::handle_async`]: crate::Server::handle_async
//! [`Server::handle_async_with`]: crate::Server::handle_async_with
//! [`Tool`]: crate::tool::Tool
//! [`Reply`]: crate::tool::Reply
//! [`ToolOutcome`]: crate::tool::ToolOutcome

use core::future::Future;
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};

use crate::completion::{CompleteOutcome, CompleteRequest, Completions};
use crate::prompt::{Messages, PromptOutcome, PromptRequest};
use crate::resource::{Contents, ReadRequest, ResourceFailure, ResourceOutcome};
use crate::tool::{Arguments, Reply, ToolOutcome};

/// The async tool handlers of a server, dispatched statically. Implemented
/// by [`async_tools!`](crate::async_tools); `index` is the one its
/// [`Tool::awaiting`](crate::tool::Tool::awaiting) constants carry.
pub trait AsyncHandlers<S> {
    /// Run the handler of async tool `index` to its outcome. An index this
    /// registry does not have is answered with a protocol error.
    fn call_tool<'a, 'r>(
        &'a self,
        index: u16,
        state: &'a S,
        args: Arguments<'a>,
        reply: Reply<'r>,
    ) -> impl Future<Output = ToolOutcome<'a>> {
        let _ = (index, state, args, reply);
        async { Err(unknown_index()) }
    }

    /// Read async fixed resource `index` ([`Resource::awaiting`]).
    ///
    /// [`Resource::awaiting`]: crate::resource::Resource::awaiting
    fn read_resource<'a, 'r>(
        &'a self,
        index: u16,
        state: &'a S,
        request: ReadRequest<'a>,
        contents: Contents<'r>,
    ) -> impl Future<Output = ResourceOutcome<'a>> {
        let _ = (index, state, request, contents);
        async { Err(unknown_read()) }
    }

    /// Write the messages of async prompt `index` ([`Prompt::awaiting`]).
    ///
    /// [`Prompt::awaiting`]: crate::prompt::Prompt::awaiting
    fn get_prompt<'a, 'r>(
        &'a self,
        index: u16,
        state: &'a S,
        request: PromptRequest<'a>,
        messages: Messages<'r>,
    ) -> impl Future<Output = PromptOutcome<'a>> {
        let _ = (index, state, request, messages);
        async { Err(unknown_prompt()) }
    }

    /// Complete an argument ([`Server::completion_awaiting`]).
    ///
    /// [`Server::completion_awaiting`]: crate::Server::completion_awaiting
    fn complete<'a, 'r>(
        &'a self,
        state: &'a S,
        request: CompleteRequest<'a>,
        completions: Completions<'r>,
    ) -> impl Future<Output = CompleteOutcome<'a>> {
        let _ = (state, request, completions);
        async { Err(unknown_completion()) }
    }

    /// Read through async URI template `index`
    /// ([`ResourceTemplate::awaiting`]).
    ///
    /// [`ResourceTemplate::awaiting`]: crate::resource::ResourceTemplate::awaiting
    fn read_template<'a, 'r>(
        &'a self,
        index: u16,
        state: &'a S,
        request: ReadRequest<'a>,
        contents: Contents<'r>,
    ) -> impl Future<Output = ResourceOutcome<'a>> {
        let _ = (index, state, request, contents);
        async { Err(unknown_read()) }
    }
}

/// No async handlers: a server whose handlers are all sync can still be
/// served through [`Server::handle_async`](crate::Server::handle_async).
impl<S> AsyncHandlers<S> for () {}

/// The failure of a prompt at an index no handler has.
#[doc(hidden)]
pub fn unknown_prompt() -> crate::error::ProtocolError<'static> {
    crate::error::ProtocolError::internal("no async handler is registered at this prompt's index")
}

/// The failure of a completion with no async handler.
#[doc(hidden)]
pub fn unknown_completion() -> crate::error::ProtocolError<'static> {
    crate::error::ProtocolError::internal("no async completion handler is registered")
}

/// The failure of a read at an index no handler has.
#[doc(hidden)]
pub fn unknown_read() -> ResourceFailure<'static> {
    ResourceFailure::Protocol(crate::error::ProtocolError::internal(
        "no async handler is registered at this resource's index",
    ))
}

/// The failure of an index no handler has (a `Tool::awaiting` built by hand
/// with the wrong index).
#[doc(hidden)]
pub fn unknown_index() -> crate::tool::ToolFailure<'static> {
    crate::tool::ToolFailure::protocol(crate::error::ProtocolError::internal(
        "no async handler is registered at this tool's index",
    ))
}

/// Declare async handlers: a unit struct implementing [`AsyncHandlers`]
/// and one registration constant per handler, to list with the server's
/// other tools, resources and templates (see the [module docs](self)).
///
/// ```text
/// picomcp::async_handlers! {
///     pub struct Shop for State {
///         tools {
///             GET_AUTHOR: DESCRIPTOR => get_author,
///             TOP: DESCRIPTOR, args: TopArgs => top,
///         }
///         resources {
///             SENSOR: RESOURCE_DESCRIPTOR => read_sensor,
///         }
///         templates {
///             BOOK: TEMPLATE_DESCRIPTOR => read_book,
///         }
///         prompts {
///             RECOMMEND: PROMPT_DESCRIPTOR => recommend,
///         }
///         completion: complete,
///     }
/// }
/// ```
///
/// Every section is optional. A tool entry is `NAME: DESCRIPTOR => HANDLER`,
/// where `HANDLER` is an `async fn(&S, Arguments<'a>, Reply<'_>) ->
/// ToolOutcome<'a>`, or `NAME: DESCRIPTOR, args: T => HANDLER`, where the
/// arguments are first parsed into `T` (a mismatch is a tool error, as with
/// [`Arguments::parse`]) and `HANDLER` is an `async fn(&S, T, Reply<'_>) ->
/// ToolOutcome<'a>`; with the `derive` feature, `T`'s schema is `<T as
/// HasSchema>::SCHEMA`. A resource or template entry is `NAME: DESCRIPTOR
/// => HANDLER` with an `async fn(&S, ReadRequest<'a>, Contents<'_>) ->
/// ResourceOutcome<'a>`; a prompt entry the same with an `async fn(&S,
/// PromptRequest<'a>, Messages<'_>) -> PromptOutcome<'a>`. The constants
/// are `Tool<S>`, `Resource<S>`, `ResourceTemplate<S>` and `Prompt<S>`.
/// `completion: HANDLER` names an `async fn(&S, CompleteRequest<'a>,
/// Completions<'_>) -> CompleteOutcome<'a>`, used by a server built with
/// [`Server::completion_awaiting`](crate::Server::completion_awaiting).
#[macro_export]
macro_rules! async_handlers {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident for $state:ty {
            $(tools { $($tools:tt)* })?
            $(resources { $($res:tt)* })?
            $(templates { $($tpl:tt)* })?
            $(prompts { $($prompts:tt)* })?
            $(completion: $complete:path $(,)?)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default)]
        $vis struct $name;
        $crate::__async_entries!(@consts $name tool Tool $state, [0u16] $($($tools)*)?);
        $crate::__async_entries!(@consts $name resource Resource $state, [0u16] $($($res)*)?);
        $crate::__async_entries!(@consts $name resource ResourceTemplate $state, [0u16] $($($tpl)*)?);
        $crate::__async_entries!(@consts $name prompt Prompt $state, [0u16] $($($prompts)*)?);
        impl $crate::asynch::AsyncHandlers<$state> for $name {
            #[allow(unused_variables, clippy::needless_return)]
            async fn call_tool<'a, 'r>(
                &'a self,
                index: u16,
                state: &'a $state,
                args: $crate::tool::Arguments<'a>,
                reply: $crate::tool::Reply<'r>,
            ) -> $crate::tool::ToolOutcome<'a> {
                $crate::__async_tools!(@arms index state args reply [0u16] $($($tools)*)?);
                Err($crate::asynch::unknown_index())
            }

            #[allow(unused_variables, clippy::needless_return)]
            async fn read_resource<'a, 'r>(
                &'a self,
                index: u16,
                state: &'a $state,
                request: $crate::resource::ReadRequest<'a>,
                contents: $crate::resource::Contents<'r>,
            ) -> $crate::resource::ResourceOutcome<'a> {
                $crate::__async_entries!(@arms index state request contents [0u16] $($($res)*)?);
                Err($crate::asynch::unknown_read())
            }

            #[allow(unused_variables, clippy::needless_return)]
            async fn read_template<'a, 'r>(
                &'a self,
                index: u16,
                state: &'a $state,
                request: $crate::resource::ReadRequest<'a>,
                contents: $crate::resource::Contents<'r>,
            ) -> $crate::resource::ResourceOutcome<'a> {
                $crate::__async_entries!(@arms index state request contents [0u16] $($($tpl)*)?);
                Err($crate::asynch::unknown_read())
            }

            #[allow(unused_variables, clippy::needless_return)]
            async fn get_prompt<'a, 'r>(
                &'a self,
                index: u16,
                state: &'a $state,
                request: $crate::prompt::PromptRequest<'a>,
                messages: $crate::prompt::Messages<'r>,
            ) -> $crate::prompt::PromptOutcome<'a> {
                $crate::__async_entries!(@arms index state request messages [0u16] $($($prompts)*)?);
                Err($crate::asynch::unknown_prompt())
            }

            #[allow(unused_variables, clippy::needless_return)]
            async fn complete<'a, 'r>(
                &'a self,
                state: &'a $state,
                request: $crate::completion::CompleteRequest<'a>,
                completions: $crate::completion::Completions<'r>,
            ) -> $crate::completion::CompleteOutcome<'a> {
                $(return $complete(state, request, completions).await;)?
                #[allow(unreachable_code)]
                Err($crate::asynch::unknown_completion())
            }
        }
    };
}

/// [`async_handlers!`](crate::async_handlers) with tools only: `struct X
/// for S { TOOL entries }` (see there for the entries).
#[macro_export]
macro_rules! async_tools {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident for $state:ty {
            $($body:tt)*
        }
    ) => {
        $crate::async_handlers! {
            $(#[$meta])*
            $vis struct $name for $state {
                tools { $($body)* }
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __async_tools {
    (@arms $index:ident $s:ident $a:ident $r:ident [$i:expr]) => {};
    (@arms $index:ident $s:ident $a:ident $r:ident [$i:expr]
        $(#[$m:meta])* $tool:ident : $desc:expr => $h:path $(, $($rest:tt)*)?) => {
        if $index == $i {
            return $h($s, $a, $r).await;
        }
        $crate::__async_tools!(@arms $index $s $a $r [$i + 1] $($($rest)*)?);
    };
    (@arms $index:ident $s:ident $a:ident $r:ident [$i:expr]
        $(#[$m:meta])* $tool:ident : $desc:expr, args: $t:ty => $h:path $(, $($rest:tt)*)?) => {
        if $index == $i {
            let parsed: $t = $a.parse()?;
            return $h($s, parsed, $r).await;
        }
        $crate::__async_tools!(@arms $index $s $a $r [$i + 1] $($($rest)*)?);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __async_entries {
    (@consts $name:ident $module:ident $kind:ident $state:ty, [$i:expr]) => {};
    // The registration constants of every kind (a tool's may name its
    // argument type: `, args: T`).
    (@consts $name:ident $module:ident $kind:ident $state:ty, [$i:expr]
        $(#[$m:meta])* $res:ident : $desc:expr $(, args: $t:ty)? => $h:path $(, $($rest:tt)*)?) => {
        impl $name {
            $(#[$m])*
            pub const $res: $crate::$module::$kind<$state> =
                $crate::$module::$kind::awaiting($desc, $i);
        }
        $crate::__async_entries!(@consts $name $module $kind $state, [$i + 1] $($($rest)*)?);
    };
    (@arms $index:ident $s:ident $q:ident $c:ident [$i:expr]) => {};
    (@arms $index:ident $s:ident $q:ident $c:ident [$i:expr]
        $(#[$m:meta])* $res:ident : $desc:expr => $h:path $(, $($rest:tt)*)?) => {
        if $index == $i {
            return $h($s, $q, $c).await;
        }
        $crate::__async_entries!(@arms $index $s $q $c [$i + 1] $($($rest)*)?);
    };
}

/// Poll `future` to completion on the current thread, parking nowhere: a
/// minimal executor for tests, examples and handlers whose futures complete
/// without waiting on outside events (it spins on `Pending`). Real programs
/// poll [`Server::handle_async`](crate::Server::handle_async) from their
/// runtime (embassy, tokio) instead.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// `future` polled in a stack frame of its own. An async fn's poll is one
/// function with every step inlined: one that routes a request (phase 1)
/// and then awaits the handler (phase 2) got one frame holding both
/// phases' temporaries, though they never run at once. On thumbv7m,
/// `serve_async_tools`' frame was 3,440 bytes and the async firmware's
/// peak stack 8,688; with phase 2 polled apart, 1,072 bytes (the
/// handler's 1,480 on top of it only while a handler runs) and 6,320
/// (`scripts/embedded.sh`, 2026-12-06). [`Server::handle_async`] polls its
/// phase 2 the same way: a caller polling it on thumbv7m had a 4,320-byte
/// frame, now 2,328 (the future included), with 1,504 on top of it while
/// the handler runs (`scripts/handle_async_frame.sh`, which fails above
/// 3 KiB). It is applied where phase 2 is awaited, not inside the future
/// `finish_deferred` returns: wrapped there, that future carried phase
/// 2's twice (the async firmware's `main` frame 2,056 → 3,120 bytes).
///
/// [`Server::handle_async`]: crate::Server::handle_async
#[inline(never)]
pub(crate) fn poll_apart<F: Future>(future: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<F::Output> {
    future.poll(cx)
}
