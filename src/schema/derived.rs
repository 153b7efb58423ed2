//! What a derived argument check is (`ArgsCheck`), here beside the schema
//! it implements so a tool descriptor (`mcp`) can hold one; the derive's
//! runtime, the member walk and the value tests, is
//! `crate::derive_support::args`.

use super::Schema;

/// Whether the derives attach their argument checks: on 64-bit targets.
pub const FAST_ARGS: bool = cfg!(target_pointer_width = "64");

/// A derived type's argument check, and the schema it was derived with.
///
/// The server uses `check` only for a tool whose
/// [`input_schema`](crate::tool::ToolDescriptor::input_schema) is `schema`
/// itself (the same address): a descriptor whose schema was replaced after
/// `tool!` built it is checked by [`Schema::validate`] alone.
#[derive(Clone, Copy)]
pub struct ArgsCheck {
    /// The schema `check` implements (a `static` the derive emits).
    pub schema: &'static Schema<'static>,
    /// `true`: the arguments (validated JSON) match `schema`; `false`: not
    /// sure.
    pub check: fn(&[u8]) -> bool,
}

impl ArgsCheck {
    /// Whether `raw` surely matches `schema`, when `schema` is this check's.
    pub(crate) fn accepts(&self, schema: &Schema<'_>, raw: &[u8]) -> bool {
        core::ptr::eq(
            (self.schema as *const Schema<'static>).cast::<u8>(),
            (schema as *const Schema<'_>).cast::<u8>(),
        ) && (self.check)(raw)
    }
}

impl PartialEq for ArgsCheck {
    /// The same check: derived with the same schema (by address).
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self.schema, other.schema)
    }
}

impl core::fmt::Debug for ArgsCheck {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ArgsCheck")
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for ArgsCheck {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "ArgsCheck");
    }
}
