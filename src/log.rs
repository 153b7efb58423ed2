//! The private logging shim: `defmt`, `log`, or nothing.

#[cfg(all(feature = "defmt", feature = "log"))]
compile_error!("features `defmt` and `log` are mutually exclusive");

#[cfg(feature = "defmt")]
#[allow(unused_macros)]
macro_rules! debug {
    ($($arg:tt)*) => { defmt::debug!($($arg)*) };
}

#[cfg(all(feature = "log", not(feature = "defmt")))]
#[allow(unused_macros)]
macro_rules! debug {
    ($($arg:tt)*) => { log::debug!($($arg)*) };
}

#[cfg(not(any(feature = "defmt", feature = "log")))]
#[allow(unused_macros)]
macro_rules! debug {
    ($($arg:tt)*) => {{
        if false {
            let _ = core::format_args!($($arg)*);
        }
    }};
}

#[allow(unused_imports)]
pub(crate) use debug;
