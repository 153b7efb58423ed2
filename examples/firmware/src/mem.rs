//! `memcpy`, `memmove` and `memset` (and their ARM EABI entry points) in
//! about 100 bytes of flash, where compiler-builtins' word-at-a-time
//! versions take 3.1 KB.
//!
//! They copy and fill one byte at a time. The largest copies here are the
//! 2 KiB input and output buffers' contents: at most about 8,000 cycles per
//! copy on a Cortex-M3, small beside the JSON work on the same bytes, and
//! the 3 KB are a twentieth of the firmware. compiler-builtins defines the
//! same symbols weakly, so these (strong) ones replace them at link time.
//!
//! Written in assembly: the same loops in Rust would be recognised by LLVM
//! and compiled into calls to `memcpy` itself.

core::arch::global_asm!(
    ".section .text.picomcp_fw_mem,\"ax\",%progbits",
    ".syntax unified",
    ".thumb",
    ".p2align 1",
    ".global memmove, __aeabi_memmove, __aeabi_memmove4, __aeabi_memmove8",
    ".global memcpy, __aeabi_memcpy, __aeabi_memcpy4, __aeabi_memcpy8",
    ".global memset, __aeabi_memset, __aeabi_memset4, __aeabi_memset8",
    ".global __aeabi_memclr, __aeabi_memclr4, __aeabi_memclr8",
    ".type memmove, %function",
    ".type __aeabi_memmove, %function",
    ".type __aeabi_memmove4, %function",
    ".type __aeabi_memmove8, %function",
    ".type memcpy, %function",
    ".type __aeabi_memcpy, %function",
    ".type __aeabi_memcpy4, %function",
    ".type __aeabi_memcpy8, %function",
    ".type memset, %function",
    ".type __aeabi_memset, %function",
    ".type __aeabi_memset4, %function",
    ".type __aeabi_memset8, %function",
    ".type __aeabi_memclr, %function",
    ".type __aeabi_memclr4, %function",
    ".type __aeabi_memclr8, %function",
    // memmove(dst r0, src r1, n r2) -> dst. Forward when dst <= src,
    // else from the end.
    "memmove:",
    "__aeabi_memmove:",
    "__aeabi_memmove4:",
    "__aeabi_memmove8:",
    "    cmp r0, r1",
    "    bls memcpy",
    "1:  cbz r2, 2f",
    "    subs r2, #1",
    "    ldrb r3, [r1, r2]",
    "    strb r3, [r0, r2]",
    "    b 1b",
    "2:  bx lr",
    // memcpy(dst r0, src r1, n r2) -> dst.
    "memcpy:",
    "__aeabi_memcpy:",
    "__aeabi_memcpy4:",
    "__aeabi_memcpy8:",
    "    mov r12, r0",
    "1:  cbz r2, 2f",
    "    ldrb r3, [r1], #1",
    "    strb r3, [r12], #1",
    "    subs r2, #1",
    "    b 1b",
    "2:  bx lr",
    // __aeabi_memclr(dst r0, n r1): memset(dst, 0, n).
    "__aeabi_memclr:",
    "__aeabi_memclr4:",
    "__aeabi_memclr8:",
    "    mov r2, r1",
    "    movs r1, #0",
    "    b memset",
    // __aeabi_memset(dst r0, n r1, c r2): memset(dst, c, n).
    "__aeabi_memset:",
    "__aeabi_memset4:",
    "__aeabi_memset8:",
    "    mov r3, r1",
    "    mov r1, r2",
    "    mov r2, r3",
    // memset(dst r0, c r1, n r2) -> dst.
    "memset:",
    "    mov r12, r0",
    "1:  cbz r2, 2f",
    "    strb r1, [r12], #1",
    "    subs r2, #1",
    "    b 1b",
    "2:  bx lr",
    ".size memmove, . - memmove",
);
