//! Puts `memory.x` on the linker's search path (cortex-m-rt's `link.x`
//! includes it) and adds defmt's linker script when feature `defmt` is on.

use std::path::PathBuf;
use std::{env, fs};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("memory.x"), include_bytes!("memory.x")).expect("write memory.x");
    // cortex-m-rt's `device` feature includes `device.x`; the interrupt
    // table is board.rs's `__INTERRUPTS`, with no named handlers to provide.
    fs::write(out.join("device.x"), include_bytes!("device.x")).expect("write device.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=device.x");
    println!("cargo:rerun-if-changed=build.rs");
    // `-Tlink.x` is in .cargo/config.toml; `-Tdefmt.x` only with defmt (a
    // config file cannot depend on a feature).
    if env::var_os("CARGO_FEATURE_DEFMT").is_some() {
        println!("cargo:rustc-link-arg=-Tdefmt.x");
    }
}
