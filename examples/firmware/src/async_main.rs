//! The picomcp bookshop on an async executor: TI LM3S6965 (Cortex-M3),
//! UART0 at 115200 8N1, under QEMU's `lm3s6965evb` (feature `async`,
//! binary `bookshop-firmware-async`).
//!
//! Two tasks on a small executor of its own (below, no allocator, no
//! runtime crate):
//!
//! * **serve**: `picomcp::transport::serve_async_tools` over the UART as
//!   `embedded_io_async::{Read, Write}`: the bookshop's handlers, with
//!   `get_author` an async tool that awaits a SysTick timer
//!   ([`GET_AUTHOR_TICKS`]) before it answers (a stand-in for a sensor or a
//!   bus transfer);
//! * **count**: advances `counter://ticks` every [`COUNT_TICKS`] ticks, and
//!   keeps doing so while a `get_author` call waits.
//!
//! The executor polls both tasks each time the core wakes, then sleeps with
//! `wfi`. What wakes it: the UART's receive interrupt (a byte arrived) and
//! SysTick (a tick) — interrupts pending with PRIMASK set, so no handler
//! runs and nothing is shared with one; the pending state is cleared
//! *before* the tasks are polled, so an event during the polls ends the
//! next `wfi` at once and none is missed. A future that is pending is
//! simply polled again at the next wake-up: the wakers do nothing.
//!
//! Out-of-band channels as in the blocking build (`main.rs`): the stack
//! high-water mark and panics on semihosting stderr, never the UART.

#![no_std]
#![no_main]

#[path = "../../bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

mod board;
mod mem;
mod uart;

use core::convert::Infallible;
use core::future::{Future, poll_fn};
use core::pin::pin;
use core::sync::atomic::{AtomicU32, Ordering};
use core::task::{Context, Poll, Waker};

pub(crate) use board::on_idle;
use board::{Local, systick};
use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use picomcp::Server;
use picomcp::resource::{Contents, ReadRequest, Resource, ResourceDescriptor, ResourceOutcome};
use picomcp::tool::{Arguments, Reply, Tool, ToolOutcome};

/// Longest message, line terminator (`\n` or `\r\n`) not counted.
const INPUT_BYTES: usize = 2048;
/// Longest answer.
const OUTPUT_BYTES: usize = 2048;
/// A handler's notifications between two of its awaits.
const NOTE_BYTES: usize = 256;

/// SysTick ticks `get_author` waits before it answers (a tick is 2^16
/// cycles of the reference clock).
const GET_AUTHOR_TICKS: u32 = 8;
/// SysTick ticks between two steps of `counter://ticks`.
const COUNT_TICKS: u32 = 4;

/// Ticks since boot (counted by the executor from SysTick's `COUNTFLAG`).
static TICKS: AtomicU32 = AtomicU32::new(0);
/// What the count task has counted.
static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Ready once `TICKS` reaches `until`.
struct Timer {
    until: u32,
}

impl Timer {
    fn after(ticks: u32) -> Self {
        Self {
            until: TICKS.load(Ordering::Relaxed).wrapping_add(ticks),
        }
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(self: core::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        // Wrapping difference: "reached" within half the counter's range.
        if TICKS.load(Ordering::Relaxed).wrapping_sub(self.until) < u32::MAX / 2 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// `get_author`, after a timer: the shared bookshop handler then answers.
async fn get_author<'a>(
    shop: &'a shop::Shop,
    args: Arguments<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    Timer::after(GET_AUTHOR_TICKS).await;
    (shop::TOOLS[0].handler)(shop, args, reply)
}

picomcp::async_tools! {
    /// The firmware's async tools.
    struct Awaiting for shop::Shop {
        GET_AUTHOR: shop::TOOLS[0].descriptor => get_author,
    }
}

/// `counter://ticks`: what the count task has counted.
fn counter<'a>(
    _: &'a shop::Shop,
    req: ReadRequest<'a>,
    mut contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    let n = COUNTER.load(Ordering::Relaxed);
    contents.json(req.uri(), Some("application/json"), |v| v.u64(u64::from(n)));
    contents.finish()
}

/// The bookshop's tools with `get_author` the async one.
static TOOLS: [Tool<shop::Shop>; 7] = [
    Awaiting::GET_AUTHOR,
    Tool::new(shop::TOOLS[1].descriptor, shop::TOOLS[1].handler),
    Tool::new(shop::TOOLS[2].descriptor, shop::TOOLS[2].handler),
    Tool::new(shop::TOOLS[3].descriptor, shop::TOOLS[3].handler),
    Tool::new(shop::TOOLS[4].descriptor, shop::TOOLS[4].handler),
    Tool::new(shop::TOOLS[5].descriptor, shop::TOOLS[5].handler),
    Tool::new(shop::TOOLS[6].descriptor, shop::TOOLS[6].handler),
];

/// The bookshop's resources and `counter://ticks`.
static RESOURCES: [Resource<shop::Shop>; 3] = [
    Resource::new(shop::RESOURCES[0].descriptor, shop::RESOURCES[0].handler),
    Resource::new(shop::RESOURCES[1].descriptor, shop::RESOURCES[1].handler),
    Resource::new(
        ResourceDescriptor::new("counter://ticks", "ticks")
            .description("Steps counted by a task that runs beside the server.")
            .mime_type("application/json"),
        counter,
    ),
];

static SERVER: Server<'static, shop::Shop> = shop::server().tools(&TOOLS).resources(&RESOURCES);

static INPUT: Local<[u8; INPUT_BYTES]> = Local::new([0; INPUT_BYTES]);
static OUTPUT: Local<[u8; OUTPUT_BYTES]> = Local::new([0; OUTPUT_BYTES]);
static NOTES: Local<[u8; NOTE_BYTES]> = Local::new([0; NOTE_BYTES]);

/// UART0 as `embedded_io_async`: a read with no byte in the FIFO is
/// pending (the receive interrupt wakes the executor); writes go straight
/// to the transmit register, as in the blocking build.
struct AsyncUart(uart::Uart0);

impl embedded_io_async::ErrorType for AsyncUart {
    type Error = Infallible;
}

impl embedded_io_async::Read for AsyncUart {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        if buf.is_empty() {
            return Ok(0);
        }
        poll_fn(|_| {
            if embedded_io::ReadReady::read_ready(&mut self.0).unwrap_or(false) {
                // Bytes are there: the blocking read returns at once.
                Poll::Ready(embedded_io::Read::read(&mut self.0, buf))
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

impl embedded_io_async::Write for AsyncUart {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        embedded_io::Write::write(&mut self.0, buf)
    }

    async fn flush(&mut self) -> Result<(), Infallible> {
        embedded_io::Write::flush(&mut self.0)
    }
}

/// The count task.
async fn count() -> ! {
    loop {
        Timer::after(COUNT_TICKS).await;
        COUNTER.fetch_add(1, Ordering::Relaxed);
    }
}

#[entry]
fn main() -> ! {
    let uart = uart::Uart0::take();
    // SAFETY: `main` runs once and never returns: the only references.
    let (input, output, notes) = unsafe { (INPUT.get(), OUTPUT.get(), NOTES.get()) };
    systick::start_ticks();
    let mut io = AsyncUart(uart);
    let mut serve = pin!(picomcp::transport::serve_async_tools(
        &SERVER, &mut io, input, output, notes, &Awaiting,
    ));
    let mut count = pin!(count());
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        // Clear the wake-ups first: one that comes while the tasks run
        // ends the `wfi` below at once.
        uart::Uart0::clear_wake();
        if systick::wrapped() {
            TICKS.fetch_add(1, Ordering::Relaxed);
        }
        if let Poll::Ready(served) = serve.as_mut().poll(&mut cx) {
            debug::exit(if served.is_ok() {
                debug::EXIT_SUCCESS
            } else {
                debug::EXIT_FAILURE
            });
        }
        let _ = count.as_mut().poll(&mut cx);
        on_idle();
        cortex_m::asm::wfi();
    }
}
