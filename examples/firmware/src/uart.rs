//! UART0 of the LM3S6965: an ARM PL011 (QEMU model `pl011_luminary`) at
//! `0x4000_C000`, NVIC IRQ 5, as `embedded_io::{Read, Write}`.
//!
//! Reading sleeps with `WFI` while the receive FIFO is empty. The RX (and
//! receive-timeout) interrupt is enabled in the UART and in the NVIC, with
//! PRIMASK set so no handler ever runs: a pending, enabled interrupt still
//! wakes `WFI`. The wait is: clear the UART and NVIC pending state, re-check
//! the FIFO, `WFI`; a byte arriving after the check pends the interrupt, so
//! `WFI` returns at once and nothing is missed. Busy-polling the flag
//! register instead starves QEMU's I/O thread (qemu.md, "Sleep, don't spin").
//!
//! The FIFO stays off (LCRH.FEN is left at its reset value, 0). QEMU's
//! PL011 empties the receive FIFO whenever FEN changes, and input can arrive
//! before `take` runs: a byte delivered between reading the holding register
//! and setting FEN was lost, so the first request of a fresh boot sometimes
//! failed to parse. With FEN off the holding register is one byte deep, and
//! QEMU holds the rest of the input back until it is read, so nothing is
//! lost however early the host writes.
//!
//! Porting to silicon: also enable the UART and GPIO clocks (SYSCTL RCGC1 /
//! RCGC2), route PA0/PA1 to the UART (GPIO AFSEL/DEN) and set the baud
//! divisors for your clock; QEMU needs none of that, so it is left out.
//! Silicon does not receive before UARTEN is set, so there set FEN in
//! `take` for the 16-byte receive FIFO.

use core::convert::Infallible;
use core::ptr::{read_volatile, write_volatile};

const BASE: usize = 0x4000_C000;
const DR: usize = BASE;
const FR: usize = BASE + 0x018;
const LCRH: usize = BASE + 0x02C;
const CTL: usize = BASE + 0x030;
const IM: usize = BASE + 0x038;
const ICR: usize = BASE + 0x044;

const FR_BUSY: u32 = 1 << 3;
const FR_RXFE: u32 = 1 << 4;
const FR_TXFF: u32 = 1 << 5;
/// Framing, parity, break and overrun flags of a received byte.
const DR_ERRORS: u32 = 0xF00;
/// 8 data bits, FIFOs off (see the module docs).
const LCRH_8BIT: u32 = 0b11 << 5;
const CTL_UARTEN_TXE_RXE: u32 = (1 << 0) | (1 << 8) | (1 << 9);
/// Receive and receive-timeout interrupts.
const INT_RX_RT: u32 = (1 << 4) | (1 << 6);

const IRQ: u32 = 5;
/// System control: Interrupt Control and State (PENDSTCLR clears a pending
/// SysTick).
const ICSR: usize = 0xE000_ED04;
const ICSR_PENDSTCLR: u32 = 1 << 25;
const NVIC_ISER0: usize = 0xE000_E100;
const NVIC_ICPR0: usize = 0xE000_E280;

fn read(reg: usize) -> u32 {
    // SAFETY: `reg` is one of the UART's or the NVIC's registers above.
    unsafe { read_volatile(reg as *const u32) }
}

fn write(reg: usize, value: u32) {
    // SAFETY: `reg` is one of the UART's or the NVIC's registers above.
    unsafe { write_volatile(reg as *mut u32, value) }
}

/// UART0, owned. Bytes received with a framing, parity, break or overrun
/// error are dropped and counted (`rx_errors`): the line they belonged to
/// then fails to parse and is answered with an error, and the session goes
/// on, where surfacing a read error would end `serve` and the session.
#[derive(Debug)]
pub struct Uart0 {
    rx_errors: u32,
}

impl Uart0 {
    /// Configure UART0 and its wake-up interrupt. Call once.
    pub fn take() -> Self {
        // Interrupts stay masked for good: RX only wakes WFI.
        cortex_m::interrupt::disable();
        // A byte already in the holding register stays there: FEN does not
        // change, so QEMU does not empty the FIFO.
        write(CTL, 0);
        write(LCRH, LCRH_8BIT);
        write(IM, INT_RX_RT);
        write(CTL, CTL_UARTEN_TXE_RXE);
        write(NVIC_ISER0, 1 << IRQ);
        Self { rx_errors: 0 }
    }

    /// Bytes dropped because they arrived with a line error.
    #[allow(dead_code)]
    pub fn rx_errors(&self) -> u32 {
        self.rx_errors
    }

    /// Sleep once: until a byte arrives or another exception (SysTick)
    /// pends. Returns at once when the FIFO holds a byte.
    #[allow(dead_code)] // the blocking build
    pub fn sleep() {
        write(ICR, INT_RX_RT);
        write(NVIC_ICPR0, 1 << IRQ);
        // Clear a pending SysTick too, or `wfi` would return at once.
        write(ICSR, ICSR_PENDSTCLR);
        if read(FR) & FR_RXFE != 0 {
            cortex_m::asm::wfi();
        }
    }

    /// Clear the pending wake-ups (the UART's receive interrupt and
    /// SysTick), so that the next `wfi` sleeps until a new one: called
    /// before an executor polls its tasks, so that an event during the
    /// polls still ends the `wfi` after them.
    #[allow(dead_code)] // the async build's executor
    pub fn clear_wake() {
        write(ICR, INT_RX_RT);
        write(NVIC_ICPR0, 1 << IRQ);
        write(ICSR, ICSR_PENDSTCLR);
    }

    /// Sleep until the receive FIFO has a byte.
    fn wait_for_input() {
        loop {
            write(ICR, INT_RX_RT);
            write(NVIC_ICPR0, 1 << IRQ);
            write(ICSR, ICSR_PENDSTCLR);
            if read(FR) & FR_RXFE == 0 {
                return;
            }
            cortex_m::asm::wfi();
        }
    }
}

impl embedded_io::ErrorType for Uart0 {
    type Error = Infallible;
}

impl embedded_io::ReadReady for Uart0 {
    /// A byte waits in the receive FIFO.
    fn read_ready(&mut self) -> Result<bool, Infallible> {
        Ok(read(FR) & FR_RXFE == 0)
    }
}

impl embedded_io::Read for Uart0 {
    /// Blocks (asleep) until at least one byte is there, then returns what
    /// the FIFO holds, up to `buf.len()`.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let mut n = 0;
            while n < buf.len() && read(FR) & FR_RXFE == 0 {
                let data = read(DR);
                if data & DR_ERRORS != 0 {
                    self.rx_errors = self.rx_errors.wrapping_add(1);
                    continue;
                }
                if let Some(slot) = buf.get_mut(n) {
                    *slot = data as u8;
                }
                n += 1;
            }
            if n > 0 {
                return Ok(n);
            }
            crate::on_idle();
            Self::wait_for_input();
        }
    }
}

impl embedded_io::Write for Uart0 {
    /// Blocks until the transmit FIFO takes at least one byte.
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        let mut n = 0;
        for &byte in buf {
            if read(FR) & FR_TXFF != 0 {
                if n > 0 {
                    break;
                }
                while read(FR) & FR_TXFF != 0 {}
            }
            write(DR, u32::from(byte));
            n += 1;
        }
        Ok(n)
    }

    /// Blocks until the last byte has left the shift register.
    fn flush(&mut self) -> Result<(), Infallible> {
        while read(FR) & FR_BUSY != 0 {}
        Ok(())
    }
}
