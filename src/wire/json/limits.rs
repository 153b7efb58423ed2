//! What the scanner enforces ([`Limits`]) and why it rejects input ([`JsonError`]).

use crate::codec::Decimal;

/// Largest nesting depth the scanner can track (size of its container stack,
/// in bits). [`Limits::max_depth`] values above this are clamped to it.
pub const MAX_DEPTH: u16 = 256;

/// Limits the scanner enforces.
///
/// Defaults ([`Limits::DEFAULT`]): `max_depth` 32, `max_items` and
/// `max_string_len` unlimited (`u32::MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Limits {
    /// Maximum nesting depth of arrays/objects (default 32; values above
    /// [`MAX_DEPTH`] are clamped to [`MAX_DEPTH`]). Depth of a scalar = 0,
    /// `[]` = 1, `[[]]` = 2.
    pub max_depth: u16,
    /// Maximum number of members in one object or items in one array
    /// (default `u32::MAX`, which means unlimited).
    pub max_items: u32,
    /// Maximum length in raw (escaped, as on the wire) bytes of one string,
    /// keys included, quotes excluded (default `u32::MAX`).
    pub max_string_len: u32,
}

impl Limits {
    /// The default limits: depth 32, unlimited items and string length.
    pub const DEFAULT: Limits = Limits {
        max_depth: 32,
        max_items: u32::MAX,
        max_string_len: u32::MAX,
    };

    /// Same as [`Limits::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// Set the maximum nesting depth (clamped to [`MAX_DEPTH`]).
    #[must_use]
    pub const fn max_depth(mut self, n: u16) -> Self {
        self.max_depth = if n > MAX_DEPTH { MAX_DEPTH } else { n };
        self
    }

    /// Set the maximum number of members/items of one object/array.
    #[must_use]
    pub const fn max_items(mut self, n: u32) -> Self {
        self.max_items = n;
        self
    }

    /// Set the maximum raw (escaped) length of one string, in bytes.
    #[must_use]
    pub const fn max_string_len(mut self, n: u32) -> Self {
        self.max_string_len = n;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why a byte slice is not acceptable JSON.
///
/// Offsets are byte offsets into the slice that was scanned (for
/// [`unescape_in_place`](super::unescape_in_place), into the buffer it was given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JsonError {
    /// The input ended before the value was complete.
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// A byte that cannot appear at this position.
    #[error("unexpected byte at offset {}", Decimal::from(*.offset))]
    UnexpectedByte {
        /// Offset of the offending byte.
        offset: usize,
    },
    /// Something other than whitespace follows the value.
    #[error("trailing data at offset {}", Decimal::from(*.offset))]
    TrailingData {
        /// Offset of the first byte after the value and its whitespace.
        offset: usize,
    },
    /// A number that breaks the JSON number grammar.
    #[error("invalid number at offset {}", Decimal::from(*.offset))]
    InvalidNumber {
        /// Offset of the first byte that does not fit the grammar.
        offset: usize,
    },
    /// A backslash escape that is not one of the JSON escapes.
    #[error("invalid escape at offset {}", Decimal::from(*.offset))]
    InvalidEscape {
        /// Offset of the backslash.
        offset: usize,
    },
    /// A `\u` escape of a surrogate that is not part of a valid pair.
    #[error("lone surrogate at offset {}", Decimal::from(*.offset))]
    LoneSurrogate {
        /// Offset of the backslash of the surrogate escape.
        offset: usize,
    },
    /// A byte sequence that is not valid UTF-8 inside a string.
    #[error("invalid utf-8 at offset {}", Decimal::from(*.offset))]
    InvalidUtf8 {
        /// Offset of the first byte of the invalid sequence.
        offset: usize,
    },
    /// A raw control character (below 0x20) inside a string.
    #[error("control character at offset {}", Decimal::from(*.offset))]
    ControlCharacter {
        /// Offset of the control character.
        offset: usize,
    },
    /// Arrays/objects nest deeper than [`Limits::max_depth`].
    #[error("nesting too deep")]
    TooDeep,
    /// An array/object has more than [`Limits::max_items`] entries.
    #[error("too many items")]
    TooManyItems,
    /// A string is longer than [`Limits::max_string_len`] raw bytes.
    #[error("string too long")]
    StringTooLong,
}

impl JsonError {
    /// True for the three limit variants (`TooDeep`, `TooManyItems`,
    /// `StringTooLong`): the input may be valid JSON, just too big.
    #[must_use]
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            JsonError::TooDeep | JsonError::TooManyItems | JsonError::StringTooLong
        )
    }

    /// The byte offset carried by the error, if any.
    #[must_use]
    pub fn offset(&self) -> Option<usize> {
        match *self {
            JsonError::UnexpectedByte { offset }
            | JsonError::TrailingData { offset }
            | JsonError::InvalidNumber { offset }
            | JsonError::InvalidEscape { offset }
            | JsonError::LoneSurrogate { offset }
            | JsonError::InvalidUtf8 { offset }
            | JsonError::ControlCharacter { offset } => Some(offset),
            JsonError::UnexpectedEnd
            | JsonError::TooDeep
            | JsonError::TooManyItems
            | JsonError::StringTooLong => None,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::format;

    #[test]
    fn limits_builders() {
        assert_eq!(Limits::new(), Limits::DEFAULT);
        assert_eq!(Limits::default(), Limits::DEFAULT);
        assert_eq!(Limits::DEFAULT.max_depth, 32);
        assert_eq!(Limits::DEFAULT.max_items, u32::MAX);
        assert_eq!(Limits::DEFAULT.max_string_len, u32::MAX);
        let l = Limits::new().max_depth(1000).max_items(3).max_string_len(7);
        assert_eq!(l.max_depth, MAX_DEPTH);
        assert_eq!(l.max_items, 3);
        assert_eq!(l.max_string_len, 7);
        assert_eq!(Limits::new().max_depth(5).max_depth, 5);
    }

    #[test]
    fn error_helpers() {
        assert!(JsonError::TooDeep.is_limit());
        assert!(JsonError::TooManyItems.is_limit());
        assert!(JsonError::StringTooLong.is_limit());
        assert!(!JsonError::UnexpectedEnd.is_limit());
        assert!(!JsonError::UnexpectedByte { offset: 1 }.is_limit());
        assert_eq!(JsonError::InvalidUtf8 { offset: 4 }.offset(), Some(4));
        assert_eq!(JsonError::TooDeep.offset(), None);
        assert_eq!(
            format!("{}", JsonError::UnexpectedEnd),
            "unexpected end of input"
        );
        assert_eq!(
            format!("{}", JsonError::UnexpectedByte { offset: 3 }),
            "unexpected byte at offset 3"
        );
    }
}
