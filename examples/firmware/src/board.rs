//! What both firmware builds share: the one-context statics, SysTick,
//! the stack report, semihosting stderr and the panic handler.

use core::cell::UnsafeCell;
use core::fmt::Write as _;
use core::sync::atomic::{AtomicUsize, Ordering};

use cortex_m_semihosting::{debug, hio};
use picomcp::wire::emit::Decimal;

/// A static used from one execution context only: this firmware runs no
/// interrupt handlers (PRIMASK stays set) and has one thread.
pub struct Local<T>(UnsafeCell<T>);

// SAFETY: there is only one execution context (see above), so the value is
// never accessed concurrently.
unsafe impl<T> Sync for Local<T> {}

impl<T> Local<T> {
    pub const fn new(value: T) -> Self {
        Self(UnsafeCell::new(value))
    }

    /// # Safety
    ///
    /// No other reference to the value may be live while the result is.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get(&self) -> &mut T {
        // SAFETY: the caller guarantees exclusive access.
        unsafe { &mut *self.0.get() }
    }
}

/// The device's interrupt vectors: the LM3S6965 has 48 (IRQ 0 to 47),
/// and cortex-m-rt's default table (without its `device` feature) has 240,
/// 768 B of flash for interrupts this chip does not have. No handler ever
/// runs (PRIMASK stays set): each entry is cortex-m-rt's `DefaultHandler`.
/// `device.x` (put on the linker's path by build.rs) is empty: no handler
/// names to provide.
#[unsafe(link_section = ".vector_table.interrupts")]
#[unsafe(no_mangle)]
pub static __INTERRUPTS: [unsafe extern "C" fn(); 48] = [DefaultHandler; 48];

unsafe extern "C" {
    /// cortex-m-rt's default exception and interrupt handler.
    fn DefaultHandler();
}

/// SysTick, polled: no handler runs (PRIMASK stays set); a wrap pends the
/// exception, which wakes `wfi`, and sets `COUNTFLAG`, read here.
pub mod systick {
    use core::ptr::{read_volatile, write_volatile};

    const CSR: usize = 0xE000_E010;
    const RVR: usize = 0xE000_E014;
    const CVR: usize = 0xE000_E018;
    /// ENABLE, TICKINT, the reference clock (QEMU's lm3s6965evb leaves the
    /// core clock's rate at zero until the PLL is set up).
    const ENABLE_TICKINT_REFCLK: u32 = 0b011;
    const COUNTFLAG: u32 = 1 << 16;

    /// Count down from 2^24 - 1, pending SysTick at every wrap.
    #[allow(dead_code)] // the blocking build
    pub fn start() {
        // SAFETY: SysTick's registers; nothing else uses SysTick.
        unsafe {
            write_volatile(RVR as *mut u32, 0x00FF_FFFF);
            write_volatile(CVR as *mut u32, 0);
            write_volatile(CSR as *mut u32, ENABLE_TICKINT_REFCLK);
        }
    }

    /// Count down from 2^16 - 1: a tick (a wrap) every 65,536 cycles of the
    /// reference clock, for the async build's timers.
    #[allow(dead_code)] // the async build
    pub fn start_ticks() {
        // SAFETY: SysTick's registers; nothing else uses SysTick.
        unsafe {
            write_volatile(RVR as *mut u32, 0x0000_FFFF);
            write_volatile(CVR as *mut u32, 0);
            write_volatile(CSR as *mut u32, ENABLE_TICKINT_REFCLK);
        }
    }

    /// Whether the counter wrapped since the last call (reading clears it).
    pub fn wrapped() -> bool {
        // SAFETY: reading SysTick's control register.
        unsafe { read_volatile(CSR as *const u32) & COUNTFLAG != 0 }
    }
}

/// Called by the UART driver when it has no input and is about to sleep:
/// report the stack high-water mark when it grew.
pub fn on_idle() {
    static REPORTED: AtomicUsize = AtomicUsize::new(0);
    let used = stack_high_water();
    if used > REPORTED.load(Ordering::Relaxed) {
        REPORTED.store(used, Ordering::Relaxed);
        if let Ok(mut err) = stderr() {
            let _ = writeln!(
                err,
                "picomcp-fw: stack high-water {} bytes",
                Decimal::from(used)
            );
        }
    }
}

/// Bytes of stack ever used: from the top of RAM down to the lowest word that
/// no longer holds cortex-m-rt's paint (`0xCCCC_CCCC`).
fn stack_high_water() -> usize {
    unsafe extern "C" {
        static _stack_end: u32;
        static _stack_start: u32;
    }
    let bottom = (&raw const _stack_end) as usize;
    let top = (&raw const _stack_start) as usize;
    let mut p = bottom;
    // SAFETY: `_stack_end.._stack_start` is RAM owned by the stack; reading
    // words of it (used or not) is harmless.
    while p < top && unsafe { core::ptr::read_volatile(p as *const u32) } == 0xCCCC_CCCC {
        p += 4;
    }
    top - p
}

/// Semihosting stderr (QEMU's stderr). Semihosting stdout is QEMU's stdout,
/// the same stream as the UART, so it is never used.
pub fn stderr() -> Result<hio::HostStream, ()> {
    static STDERR: Local<Option<hio::HostStream>> = Local::new(None);
    // SAFETY: one execution context; the reference does not outlive this call.
    let slot = unsafe { STDERR.get() };
    if slot.is_none() {
        *slot = Some(hio::hstderr()?);
    }
    slot.ok_or(())
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    cortex_m::interrupt::disable();
    // The location only: formatting `info` itself (its message) would keep
    // every panic site's message and core's integer formatting in flash,
    // about 1 KB, for a path picomcp's core never takes.
    if let Ok(mut err) = stderr() {
        let (file, line) = info.location().map_or(("?", 0), |l| (l.file(), l.line()));
        let _ = writeln!(
            err,
            "picomcp-fw: panicked at {file}:{}",
            Decimal::from(line)
        );
    }
    loop {
        debug::exit(debug::EXIT_FAILURE);
    }
}
