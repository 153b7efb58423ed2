//! The leaf vocabulary of schemas: type sets, numeric bounds, literals.

use core::fmt;

use crate::wire::emit::Decimal;
use crate::wire::json::Number;

/// A set of JSON Schema types (`type` keyword). Empty means "any type".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Types(pub(super) u8);

impl Types {
    /// No `type` keyword: any value.
    pub const ANY: Types = Types(0);
    /// `null`.
    pub const NULL: Types = Types(1);
    /// `boolean`.
    pub const BOOLEAN: Types = Types(2);
    /// `integer` (a number with an integral value).
    pub const INTEGER: Types = Types(4);
    /// `number`.
    pub const NUMBER: Types = Types(8);
    /// `string`.
    pub const STRING: Types = Types(16);
    /// `array`.
    pub const ARRAY: Types = Types(32);
    /// `object`.
    pub const OBJECT: Types = Types(64);

    pub(super) const NAMES: [(Types, &'static str); 7] = [
        (Self::STRING, "string"),
        (Self::INTEGER, "integer"),
        (Self::NUMBER, "number"),
        (Self::BOOLEAN, "boolean"),
        (Self::OBJECT, "object"),
        (Self::ARRAY, "array"),
        (Self::NULL, "null"),
    ];

    /// The union of two sets.
    pub const fn or(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    /// Whether every type in `other` is in `self`.
    pub const fn contains(self, other: Types) -> bool {
        self.0 & other.0 == other.0
    }

    pub(super) fn count(self) -> u32 {
        self.0.count_ones()
    }
}

impl fmt::Display for Types {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (t, name) in Self::NAMES {
            if self.contains(t) {
                if !first {
                    f.write_str(" or ")?;
                }
                first = false;
                f.write_str(name)?;
            }
        }
        Ok(())
    }
}

/// A numeric bound, kept as written so `50` is emitted as `50` and `0.5` as
/// `0.5`.
///
/// Arguments are compared with a bound exactly, from their text (`1.0`
/// equals `1`, `0.30000000000000001` is above `0.3`): picomcp never parses or
/// formats floating point, whose machinery is about 28 KB of flash on a
/// Cortex-M.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Bound<'s> {
    /// An integer bound.
    Int(i64),
    /// Any JSON number, e.g. `0.5`, `-1e-3` or `18446744073709551615`.
    Number(Number<'s>),
}

impl<'s> Bound<'s> {
    /// A bound written as JSON number text: `Bound::decimal("0.5")`.
    ///
    /// # Panics
    ///
    /// If `text` is not a JSON number; in a `const` that is a compile error.
    #[must_use]
    pub const fn decimal(text: &'s str) -> Self {
        Bound::Number(Number::literal(text))
    }
}

impl fmt::Display for Bound<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Int(i) => Decimal::from(*i).fmt(f),
            Bound::Number(n) => f.write_str(n.raw()),
        }
    }
}

/// A JSON literal for `enum` and `const`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Literal<'s> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    Str(&'s str),
}

impl fmt::Display for Literal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("null"),
            Literal::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Literal::Int(i) => Decimal::from(*i).fmt(f),
            Literal::Str(s) => write!(f, "\"{s}\""),
        }
    }
}
