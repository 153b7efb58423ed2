//! The picomcp bookshop as bare-metal firmware: TI LM3S6965 (Cortex-M3),
//! UART0 at 115200 8N1, run under QEMU's `lm3s6965evb` machine.
//!
//! The same handlers as the stdio example (`examples/bookshop/src/shop.rs`, shared
//! by `#[path]`), served by `picomcp::transport::serve_subscribed`, over a
//! PL011 UART driver that implements `embedded_io::{Read, Write}`. No heap:
//! no allocator is linked, the 2 KiB input and 2 KiB output buffers are
//! statics, the server is `const` data in flash.
//!
//! Out-of-band channels, never the UART:
//! * panics print their message on semihosting stderr and exit QEMU with a
//!   failure status;
//! * the stack high-water mark (the stack is painted at boot by cortex-m-rt's
//!   `paint-stack`) is printed on semihosting stderr as
//!   `picomcp-fw: stack high-water N bytes` each time it grows, measured when
//!   the UART runs out of input (between requests);
//! * with feature `defmt`, picomcp's debug logs go to a defmt global logger
//!   on semihosting stderr.
//!
//! Semihosting needs a debugger (or QEMU): on a board without one, drop the
//! `report_*` calls and use a panic handler that resets. See README.md.

#![no_std]
#![no_main]

#[path = "../../bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

mod board;
mod mem;
mod uart;

pub(crate) use board::on_idle;
use board::{Local, systick};
use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use picomcp::Server;
use picomcp::changes::Subscriptions;
use picomcp::server::Waiting;

/// Longest message, line terminator (`\n` or `\r\n`) not counted.
const INPUT_BYTES: usize = 2048;
/// Longest answer, notifications included.
const OUTPUT_BYTES: usize = 2048;

/// The bookshop: descriptors, schemas and handlers are `const` data in flash.
static SERVER: Server<'static, shop::Shop> = shop::server();

static INPUT: Local<[u8; INPUT_BYTES]> = Local::new([0; INPUT_BYTES]);
static OUTPUT: Local<[u8; OUTPUT_BYTES]> = Local::new([0; OUTPUT_BYTES]);
/// Two calls (`reserve`, `blurb`) may wait for the client's answers at once,
/// each with its request, state and answers in 768 B (about 2.6 KiB of RAM
/// in all).
static WAITING: Local<Waiting<2, 768>> = Local::new(Waiting::new());
/// The connection's subscriptions: 2 URIs of up to 32 bytes (about 180 B).
static SUBSCRIPTIONS: Local<Subscriptions<2, 32>> = Local::new(Subscriptions::new());

/// A delivery arrives every this many SysTick wraps (a wrap is 2^24 ticks
/// of the reference clock; under QEMU two wraps take about 3 s): one copy
/// is restocked and the subscribers of `books://stock` are told, with no
/// request in flight.
const RESTOCK_WRAPS: u32 = 2;

#[entry]
fn main() -> ! {
    // The UART first, before the host's first byte can arrive: newer QEMU
    // versions empty the receive FIFO when it is switched on.
    let mut uart = uart::Uart0::take();
    // SAFETY: `main` runs once and never returns, so these are the only
    // references to the buffers and the waiting store, for the life of the
    // program.
    let (input, output, waiting, subs) = unsafe {
        (
            INPUT.get(),
            OUTPUT.get(),
            WAITING.get(),
            SUBSCRIPTIONS.get(),
        )
    };
    systick::start();

    // A UART never reports end of input and `Uart0` never fails, so `serve`
    // does not return in practice; if it did, there is nothing left to do.
    // With no input ready the loop calls `idle`: sleep until a byte or a
    // SysTick wrap, and restock when a delivery is due; the loop then
    // writes the notifications due before it reads again.
    let mut wraps = 0u32;
    let served = picomcp::transport::serve_subscribed(
        &SERVER,
        &mut uart,
        input,
        output,
        waiting,
        subs,
        |_uart| {
            on_idle();
            uart::Uart0::sleep();
            if systick::wrapped() {
                wraps += 1;
                if wraps >= RESTOCK_WRAPS {
                    wraps = 0;
                    SERVER.state().restock();
                }
            }
        },
    );
    debug::exit(if served.is_ok() {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {
        cortex_m::asm::wfi();
    }
}

/// defmt frames on semihosting stderr (never stdout, never the UART).
#[cfg(feature = "defmt")]
mod defmt_logger {
    use core::sync::atomic::{AtomicBool, Ordering};

    use crate::board::Local;

    #[defmt::global_logger]
    struct Logger;

    static TAKEN: AtomicBool = AtomicBool::new(false);
    static ENCODER: Local<defmt::Encoder> = Local::new(defmt::Encoder::new());
    static PRIMASK_WAS_ACTIVE: AtomicBool = AtomicBool::new(false);

    fn emit(bytes: &[u8]) {
        if let Ok(mut err) = crate::board::stderr() {
            let _ = err.write_all(bytes);
        }
    }

    // SAFETY (for the whole impl): acquire/release bracket every write with
    // interrupts disabled, and `TAKEN` rejects re-entry, so the encoder is
    // only used by one frame at a time.
    unsafe impl defmt::Logger for Logger {
        fn acquire() {
            let active = cortex_m::register::primask::read().is_active();
            cortex_m::interrupt::disable();
            if TAKEN.swap(true, Ordering::Acquire) {
                panic!("defmt logger taken reentrantly");
            }
            PRIMASK_WAS_ACTIVE.store(active, Ordering::Relaxed);
            // SAFETY: taken above, exclusively.
            unsafe { ENCODER.get() }.start_frame(emit);
        }

        unsafe fn flush() {}

        unsafe fn release() {
            // SAFETY: defmt calls `release` only after `acquire`.
            unsafe { ENCODER.get() }.end_frame(emit);
            TAKEN.store(false, Ordering::Release);
            if PRIMASK_WAS_ACTIVE.load(Ordering::Relaxed) {
                // SAFETY: restores the state `acquire` found.
                unsafe { cortex_m::interrupt::enable() };
            }
        }

        unsafe fn write(bytes: &[u8]) {
            // SAFETY: defmt calls `write` only between `acquire` and `release`.
            unsafe { ENCODER.get() }.write(bytes, emit);
        }
    }
}
