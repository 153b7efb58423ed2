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
    /// sure. On `true` it has put where it found the values of the first
    /// [`SPANS`] properties in the [`Spans`].
    pub check: fn(&[u8], &mut Spans) -> bool,
}

/// How many properties' values a derived check records: none on small
/// targets, which take no derived checks ([`FAST_ARGS`]) and so carry no
/// spans either.
pub const SPANS: usize = if FAST_ARGS { 8 } else { 0 };

/// Where a derived check found the values of its type's first [`SPANS`]
/// properties (in declaration order), as byte ranges of the arguments:
/// `(start, end)`, `(0, 0)` for a property not given. A derived parse
/// builds from them instead of walking the arguments again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spans(pub [(u32, u32); SPANS]);

impl Spans {
    /// Record property `i`'s value `v`, a part of `raw`; `false` when its
    /// offsets do not fit a `u32` (the check is then not sure).
    #[inline]
    pub fn record(&mut self, i: usize, raw: &[u8], v: &[u8]) -> bool {
        let start = (v.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
        match (u32::try_from(start), u32::try_from(start + v.len())) {
            (Ok(s), Ok(e)) => {
                if let Some(slot) = self.0.get_mut(i) {
                    *slot = (s, e);
                }
                true
            }
            _ => false,
        }
    }

    /// The value of property `i` in `raw`, if it was given.
    #[inline]
    pub fn value<'a>(&self, i: usize, raw: &'a [u8]) -> Option<&'a [u8]> {
        match self.0.get(i) {
            Some(&(s, e)) if e > 0 => raw.get(s as usize..e as usize),
            _ => None,
        }
    }
}

impl ArgsCheck {
    /// Whether `raw` surely matches `schema`, when `schema` is this check's.
    pub(crate) fn accepts(&self, schema: &Schema<'_>, raw: &[u8], spans: &mut Spans) -> bool {
        core::ptr::eq(
            (self.schema as *const Schema<'static>).cast::<u8>(),
            (schema as *const Schema<'_>).cast::<u8>(),
        ) && (self.check)(raw, spans)
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
