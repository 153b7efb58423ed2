//! The bookshop over stdio through the async-tools serve loop
//! (`transport::serve_async_tools_subscribed`), with `get_author`, `reserve`
//! and `blurb` async tools: each gives way once (its future is pending, then
//! woken) before the bookshop's handler answers. `reserve` and `blurb` ask
//! the client for input; on the handshake era their calls wait in the
//! loop's store and run again, awaited, with the client's answers.
//! `scripts/ci.sh` runs the official Python SDK client's bookshop checks
//! (`scripts/interop.sh`) against it, as against the blocking bookshop.
//!
//! ```sh
//! cargo run --release --example bookshop_async [-- --restock-every SECONDS]
//! ```
//!
//! The executor is a few lines below: poll the serve loop; when nothing
//! woke it, wait for input or a change (`Stdio::wait`). No runtime crate.

#[path = "bookshop/src/key.rs"]
mod key;
#[path = "bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

use std::cell::RefCell;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

use picomcp::changes::{Changes, Subscriptions};
use picomcp::server::Waiting;
use picomcp::tool::{Arguments, Reply, Tool, ToolOutcome};
use picomcp::transport::{Stdio, StdioWaker, serve_async_tools_subscribed};

/// Wakes the executor's wait when a change is announced.
static STDIO_WAKER: OnceLock<StdioWaker> = OnceLock::new();
/// A change was announced since the loop last looked.
static CHANGED: AtomicBool = AtomicBool::new(false);

fn announce() {
    CHANGED.store(true, Ordering::SeqCst);
    if let Some(w) = STDIO_WAKER.get() {
        w.wake();
    }
}

/// This process's change registry (`buy`).
static CHANGES: Changes = Changes::new().on_change(announce);

/// Pending at its first poll (its task woken), ready at the second.
struct GiveWay(bool);

impl Future for GiveWay {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The bookshop's tool `I`, after an await.
async fn twin<'a, const I: usize>(
    shop: &'a shop::Shop,
    args: Arguments<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    GiveWay(false).await;
    (shop::TOOLS[I].handler)(shop, args, reply)
}

picomcp::async_tools! {
    /// The async tools.
    struct Awaiting for shop::Shop {
        GET_AUTHOR: shop::TOOLS[0].descriptor => twin::<0>,
        RESERVE: shop::TOOLS[3].descriptor => twin::<3>,
        BLURB: shop::TOOLS[4].descriptor => twin::<4>,
    }
}

/// The bookshop's tools, three of them async.
static TOOLS: [Tool<shop::Shop>; 7] = [
    Awaiting::GET_AUTHOR,
    Tool::new(shop::TOOLS[1].descriptor, shop::TOOLS[1].handler),
    Tool::new(shop::TOOLS[2].descriptor, shop::TOOLS[2].handler),
    Awaiting::RESERVE,
    Awaiting::BLURB,
    Tool::new(shop::TOOLS[5].descriptor, shop::TOOLS[5].handler),
    Tool::new(shop::TOOLS[6].descriptor, shop::TOOLS[6].handler),
];

/// stdin/stdout for the async loop: a read is pending until input is
/// ready (the executor waits for it); writes go straight out.
struct AsyncStdio<'a>(&'a RefCell<Stdio>);

impl embedded_io_async::ErrorType for AsyncStdio<'_> {
    type Error = std::io::Error;
}

impl embedded_io_async::Read for AsyncStdio<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        use embedded_io::{Read, ReadReady};
        poll_fn(|_| {
            let mut stdio = self.0.borrow_mut();
            match stdio.read_ready() {
                Ok(true) => Poll::Ready(stdio.read(buf)),
                Ok(false) => Poll::Pending,
                Err(e) => Poll::Ready(Err(e)),
            }
        })
        .await
    }
}

impl embedded_io_async::Write for AsyncStdio<'_> {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        embedded_io::Write::write(&mut *self.0.borrow_mut(), buf)
    }

    async fn flush(&mut self) -> Result<(), Self::Error> {
        embedded_io::Write::flush(&mut *self.0.borrow_mut())
    }
}

/// Ready once a change was announced (then the loop writes what is due).
fn changed() -> impl Future<Output = ()> {
    poll_fn(|_| {
        if CHANGED.swap(false, Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
}

/// Whether the serve loop's task was woken since it was last polled.
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn main() {
    // `--restock-every SECONDS`: deliver a copy of a short title every
    // SECONDS (a change no request makes), as the blocking bookshop does.
    let mut restock_every = 0u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--restock-every", Some(n)) => restock_every = n,
            _ => {
                eprintln!("usage: bookshop_async [--restock-every SECONDS]");
                std::process::exit(2);
            }
        }
    }
    // A key for this process only: sealed request state does not outlive it.
    let key: &'static [u8] = Box::leak(Box::new(key::random_key()));
    let server = shop::server_in(0, key, &CHANGES).tools(&TOOLS);
    let server: &'static _ = Box::leak(Box::new(server));
    if restock_every > 0 {
        let every = std::time::Duration::from_secs(restock_every);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(every);
                server.state().restock();
            }
        });
    }
    let stdio = RefCell::new(Stdio::live());
    if let Some(w) = stdio.borrow().waker() {
        let _ = STDIO_WAKER.set(w);
    }
    let (mut input, mut output, mut notes) =
        (vec![0u8; 1 << 20], vec![0u8; 256 << 10], [0u8; 4096]);
    let mut waiting = Box::new(Waiting::<4, { 16 << 10 }>::new());
    let mut subs = Box::new(Subscriptions::<8, 256>::new());
    let mut io = AsyncStdio(&stdio);
    let mut serve = pin!(serve_async_tools_subscribed(
        server,
        &mut io,
        &mut input,
        &mut output,
        &mut notes,
        &Awaiting,
        &mut waiting,
        &mut subs,
        changed,
    ));
    let woken = Arc::new(Woken(AtomicBool::new(false)));
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    let served = loop {
        woken.0.store(false, Ordering::SeqCst);
        if let Poll::Ready(served) = serve.as_mut().poll(&mut cx) {
            break served;
        }
        // Nothing to do until input comes or a change is announced.
        if !woken.0.load(Ordering::SeqCst) {
            stdio.borrow_mut().wait();
        }
    };
    match served {
        Ok(()) => {}
        Err(picomcp::error::Error::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("bookshop_async: {e}");
            std::process::exit(1);
        }
    }
}
