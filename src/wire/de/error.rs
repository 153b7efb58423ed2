//! Why deserialization failed.

use serde::de::{self, Expected, Unexpected};

/// Why deserialization failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DeError {
    /// The input is not valid JSON (or exceeds the limits); see
    /// [`json::validate`](crate::wire::json::validate).
    #[error("invalid json")]
    Syntax,
    /// The input ended early.
    #[error("unexpected end of input")]
    Eof,
    /// Data follows the value.
    #[error("trailing characters")]
    TrailingCharacters,
    /// The JSON type does not fit the target type.
    #[error("invalid type")]
    InvalidType,
    /// The value has the right type but is not acceptable.
    #[error("invalid value")]
    InvalidValue,
    /// A sequence or map has the wrong number of elements.
    #[error("invalid length")]
    InvalidLength,
    /// An enum variant name that the target does not know.
    #[error("unknown variant")]
    UnknownVariant,
    /// A field that the target does not know (with `deny_unknown_fields`).
    #[error("unknown field")]
    UnknownField,
    /// A required field is missing.
    #[error("missing field")]
    MissingField,
    /// A field appears twice.
    #[error("duplicate field")]
    DuplicateField,
    /// A number does not fit the target integer type.
    #[error("number out of range")]
    NumberOutOfRange,
    /// Any other error raised by a `Deserialize` implementation (its message
    /// is dropped: there is no heap to keep it).
    #[error("custom error")]
    Custom,
}

impl de::Error for DeError {
    fn custom<T: core::fmt::Display>(_msg: T) -> Self {
        DeError::Custom
    }

    fn invalid_type(_unexp: Unexpected<'_>, _exp: &dyn Expected) -> Self {
        DeError::InvalidType
    }

    fn invalid_value(_unexp: Unexpected<'_>, _exp: &dyn Expected) -> Self {
        DeError::InvalidValue
    }

    fn invalid_length(_len: usize, _exp: &dyn Expected) -> Self {
        DeError::InvalidLength
    }

    fn unknown_variant(_variant: &str, _expected: &'static [&'static str]) -> Self {
        DeError::UnknownVariant
    }

    fn unknown_field(_field: &str, _expected: &'static [&'static str]) -> Self {
        DeError::UnknownField
    }

    fn missing_field(_field: &'static str) -> Self {
        DeError::MissingField
    }

    fn duplicate_field(_field: &'static str) -> Self {
        DeError::DuplicateField
    }
}
