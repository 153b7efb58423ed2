//! Compile errors of the derive macros and `tool!`: unsupported field types
//! and misplaced attributes are rejected with a span on the offending code.
//! The expected messages are in `tests/ui/*.stderr` (regenerate with
//! `TRYBUILD=overwrite cargo test --test derive_ui` after a toolchain update).
#![cfg(feature = "derive")]

#[test]
fn derive_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
