//! A serde `Deserializer` that borrows every string from the input frame,
//! unescaping escaped strings in place.
//!
//! [`from_slice_in_place`] first runs [`json::validate`] on the whole input
//! (so it is safe on any bytes), then walks forward through it. When it meets
//! a string it splits the string's region off the remaining buffer, decodes it
//! in place with [`json::unescape_str_in_place`] and hands the decoded
//! `&'de str` to the visitor with `visit_borrowed_str`, so every string
//! (escaped or not) can be borrowed as `&'de str` without a heap. The input is
//! mutated and is no longer valid JSON afterwards.
//!
//! Skipping unknown values (`deserialize_ignored_any`) is iterative, so deep
//! input cannot overflow the stack; the only recursion is the one the target
//! *type* drives, which is bounded by the type.

use core::mem;

use serde::de::{self, Expected, Unexpected, Visitor};

use crate::wire::json::{self, Limits, MAX_DEPTH, Number};
use crate::wire::swar;

mod access;

use access::{Enum, MapAccess, SeqAccess};

/// Why deserialization failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DeError {
    /// The input is not valid JSON (or exceeds the limits); see
    /// [`json::validate`].
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

/// Deserialize `T` from one JSON value held in `input`, decoding escaped
/// strings IN PLACE inside `input` so that `&'de str` fields borrow from it
/// (input is mutated; it is no longer valid JSON afterwards).
///
/// The input is validated first with [`Limits::DEFAULT`] raised to
/// `max_depth = MAX_DEPTH`; any violation gives [`DeError::Syntax`].
/// Surrounding JSON whitespace is allowed.
///
/// # Errors
///
/// [`DeError::Syntax`] if the input is not valid JSON within the limits,
/// otherwise the first error raised while mapping it onto `T`.
pub fn from_slice_in_place<'de, T: serde::Deserialize<'de>>(
    input: &'de mut [u8],
) -> Result<T, DeError> {
    from_slice_in_place_with_limits(input, &Limits::DEFAULT.max_depth(MAX_DEPTH))
}

/// Like [`from_slice_in_place`], validating with the given `limits` instead.
///
/// # Errors
///
/// As [`from_slice_in_place`].
pub fn from_slice_in_place_with_limits<'de, T: serde::Deserialize<'de>>(
    input: &'de mut [u8],
    limits: &Limits,
) -> Result<T, DeError> {
    json::validate(input, limits).map_err(|_| DeError::Syntax)?;
    let mut de = Deserializer { input };
    let value = T::deserialize(&mut de)?;
    de.skip_ws();
    if de.input.is_empty() {
        Ok(value)
    } else {
        Err(DeError::TrailingCharacters)
    }
}

/// [`from_slice_in_place`] for bytes already validated as one JSON value
/// within [`MAX_DEPTH`] (a value inside a frame the server checked): the
/// validation pass is skipped. On bytes that are not, it returns an error or
/// some value, never panics.
pub(crate) fn from_validated_in_place<'de, T: serde::Deserialize<'de>>(
    input: &'de mut [u8],
) -> Result<T, DeError> {
    let mut de = Deserializer { input };
    let value = T::deserialize(&mut de)?;
    de.skip_ws();
    if de.input.is_empty() {
        Ok(value)
    } else {
        Err(DeError::TrailingCharacters)
    }
}

/// Forward-only deserializer over the not yet consumed part of the frame.
struct Deserializer<'de> {
    input: &'de mut [u8],
}

impl<'de> Deserializer<'de> {
    fn skip_ws(&mut self) {
        // Compact JSON has no whitespace: decide that from the first byte.
        if !matches!(self.input.first(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            return;
        }
        let n = self
            .input
            .iter()
            .take_while(|&&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
        if n > 0 {
            let buf = mem::take(&mut self.input);
            self.input = buf.get_mut(n..).unwrap_or_default();
        }
    }

    /// Next non-whitespace byte (not consumed).
    fn peek(&mut self) -> Result<u8, DeError> {
        self.skip_ws();
        self.input.first().copied().ok_or(DeError::Eof)
    }

    /// Split the next `n` bytes off the input.
    fn take_bytes(&mut self, n: usize) -> Result<&'de mut [u8], DeError> {
        let buf = mem::take(&mut self.input);
        match buf.split_at_mut_checked(n) {
            Some((head, tail)) => {
                self.input = tail;
                Ok(head)
            }
            None => Err(DeError::Eof),
        }
    }

    /// Consume the single byte `b` (after whitespace).
    fn expect(&mut self, b: u8) -> Result<(), DeError> {
        if self.peek()? == b {
            self.take_bytes(1)?;
            Ok(())
        } else {
            Err(DeError::Syntax)
        }
    }

    /// Length of the value at the front of the input (iterative).
    fn value_len(&self) -> Result<usize, DeError> {
        json::value_len(self.input).ok_or(DeError::Syntax)
    }

    fn parse_literal(&mut self, lit: &[u8]) -> Result<(), DeError> {
        if self.input.starts_with(lit) {
            self.take_bytes(lit.len())?;
            Ok(())
        } else {
            Err(DeError::Syntax)
        }
    }

    /// The string at the front of the input (after `peek() == b'"'`),
    /// unescaped in place and borrowed for `'de`.
    fn parse_str(&mut self) -> Result<&'de str, DeError> {
        // Fast path: a run of plain ASCII up to the closing quote needs no
        // unescaping (one scan instead of measuring, then unescaping).
        if let [b'"', rest @ ..] = &*self.input {
            let run = swar::plain_run(rest);
            if rest.get(run) == Some(&b'"') {
                let whole: &'de [u8] = self.take_bytes(run + 2)?;
                let content = whole.get(1..=run).ok_or(DeError::Syntax)?;
                return core::str::from_utf8(content).map_err(|_| DeError::Syntax);
            }
        }
        let n = self.value_len()?;
        let inner = n.checked_sub(2).ok_or(DeError::Syntax)?;
        let whole = self.take_bytes(n)?;
        let (_, rest) = whole.split_at_mut_checked(1).ok_or(DeError::Syntax)?;
        let (content, _) = rest.split_at_mut_checked(inner).ok_or(DeError::Syntax)?;
        json::unescape_str_in_place(content).map_err(|_| DeError::Syntax)
    }

    /// The number at the front of the input.
    fn parse_number(&mut self) -> Result<Number<'de>, DeError> {
        let n = self.value_len()?;
        let bytes: &'de [u8] = self.take_bytes(n)?;
        let text = core::str::from_utf8(bytes).map_err(|_| DeError::Syntax)?;
        Number::parse(text).ok_or(DeError::Syntax)
    }

    /// An integral number (`1`, `-3`, `1.0`, `1e2`) at the front of the input.
    fn parse_integral(&mut self) -> Result<Number<'de>, DeError> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => {
                let n = self.parse_number()?;
                if n.is_integral() {
                    Ok(n)
                } else {
                    Err(DeError::InvalidType)
                }
            }
            _ => Err(DeError::InvalidType),
        }
    }

    fn parse_float(&mut self) -> Result<Number<'de>, DeError> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.parse_number(),
            _ => Err(DeError::InvalidType),
        }
    }

    /// Skip one value of any depth without recursion.
    fn skip_value(&mut self) -> Result<(), DeError> {
        self.skip_ws();
        let n = self.value_len()?;
        self.take_bytes(n)?;
        Ok(())
    }

    /// After a sequence visitor returned: consume the closing `]`.
    fn end_seq(&mut self) -> Result<(), DeError> {
        match self.peek()? {
            b']' => self.expect(b']'),
            b',' => Err(DeError::InvalidLength),
            _ => Err(DeError::Syntax),
        }
    }

    /// After a map visitor returned: consume the closing `}`.
    fn end_map(&mut self) -> Result<(), DeError> {
        match self.peek()? {
            b'}' => self.expect(b'}'),
            b',' => Err(DeError::InvalidLength),
            _ => Err(DeError::Syntax),
        }
    }
}

fn visit_number<'de, V: Visitor<'de>>(n: Number<'de>, visitor: V) -> Result<V::Value, DeError> {
    if n.is_integer_literal() {
        if n.raw().starts_with('-') {
            if let Some(v) = n.as_i64() {
                return visitor.visit_i64(v);
            }
        } else if let Some(v) = n.as_u64() {
            return visitor.visit_u64(v);
        }
    }
    visitor.visit_f64(n.as_f64())
}

macro_rules! deserialize_signed {
    ($($method:ident => $visit:ident($ty:ty),)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let n = self.parse_integral()?;
            let wide = n.as_i128().ok_or(DeError::NumberOutOfRange)?;
            visitor.$visit(<$ty>::try_from(wide).map_err(|_| DeError::NumberOutOfRange)?)
        }
    )*};
}

macro_rules! deserialize_unsigned {
    ($($method:ident => $visit:ident($ty:ty),)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let n = self.parse_integral()?;
            let wide = n.as_u128().ok_or(DeError::NumberOutOfRange)?;
            visitor.$visit(<$ty>::try_from(wide).map_err(|_| DeError::NumberOutOfRange)?)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.peek()? {
            b'n' => {
                self.parse_literal(b"null")?;
                visitor.visit_unit()
            }
            b't' => {
                self.parse_literal(b"true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.parse_literal(b"false")?;
                visitor.visit_bool(false)
            }
            b'"' => visitor.visit_borrowed_str(self.parse_str()?),
            b'[' => self.deserialize_seq(visitor),
            b'{' => self.deserialize_map(visitor),
            b'-' | b'0'..=b'9' => visit_number(self.parse_number()?, visitor),
            _ => Err(DeError::Syntax),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.peek()? {
            b't' => {
                self.parse_literal(b"true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.parse_literal(b"false")?;
                visitor.visit_bool(false)
            }
            _ => Err(DeError::InvalidType),
        }
    }

    deserialize_signed! {
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_i128 => visit_i128(i128),
    }

    deserialize_unsigned! {
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
        deserialize_u128 => visit_u128(u128),
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f32(self.parse_float()?.as_f32())
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f64(self.parse_float()?.as_f64())
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.peek()? {
            b'"' => visitor.visit_borrowed_str(self.parse_str()?),
            _ => Err(DeError::InvalidType),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.peek()? {
            b'"' => visitor.visit_borrowed_bytes(self.parse_str()?.as_bytes()),
            b'[' => self.deserialize_seq(visitor),
            _ => Err(DeError::InvalidType),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.peek()? == b'n' {
            self.parse_literal(b"null")?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.peek()? == b'n' {
            self.parse_literal(b"null")?;
            visitor.visit_unit()
        } else {
            Err(DeError::InvalidType)
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.peek()? != b'[' {
            return Err(DeError::InvalidType);
        }
        self.take_bytes(1)?;
        let value = visitor.visit_seq(SeqAccess {
            de: &mut *self,
            first: true,
        })?;
        self.end_seq()?;
        Ok(value)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.peek()? != b'{' {
            return Err(DeError::InvalidType);
        }
        self.take_bytes(1)?;
        let value = visitor.visit_map(MapAccess {
            de: &mut *self,
            first: true,
        })?;
        self.end_map()?;
        Ok(value)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.peek()? {
            b'{' => self.deserialize_map(visitor),
            b'[' => self.deserialize_seq(visitor),
            _ => Err(DeError::InvalidType),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.peek()? {
            b'"' => {
                let s = self.parse_str()?;
                visitor.visit_enum(de::value::BorrowedStrDeserializer::<DeError>::new(s))
            }
            b'{' => {
                self.take_bytes(1)?;
                if self.peek()? != b'"' {
                    return Err(DeError::InvalidLength);
                }
                let value = visitor.visit_enum(Enum { de: &mut *self })?;
                self.end_map()?;
                Ok(value)
            }
            _ => Err(DeError::InvalidType),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.skip_value()?;
        visitor.visit_unit()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use serde::Deserialize;
    use std::borrow::ToOwned;
    use std::collections::BTreeMap;
    use std::vec::Vec;

    /// Deserialize an owned `T` from a copy of `s`.
    pub(super) fn de<T: for<'a> Deserialize<'a>>(s: &str) -> Result<T, DeError> {
        let mut buf = s.as_bytes().to_vec();
        from_slice_in_place(&mut buf)
    }

    #[test]
    fn error_messages() {
        use std::format;
        assert_eq!(format!("{}", DeError::Syntax), "invalid json");
        assert_eq!(
            format!("{}", DeError::NumberOutOfRange),
            "number out of range"
        );
        let e: DeError = de::Error::custom("boom");
        assert_eq!(e, DeError::Custom);
    }

    #[test]
    fn borrowed_strings() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct S<'a> {
            #[serde(borrow)]
            plain: &'a str,
            #[serde(borrow)]
            escaped: &'a str,
            #[serde(borrow)]
            all: &'a str,
            #[serde(borrow)]
            opt: Option<&'a str>,
            #[serde(borrow)]
            none: Option<&'a str>,
            #[serde(borrow)]
            bytes: &'a [u8],
        }
        let mut buf = br#" {
            "plain": "hello",
            "escaped": "caf\u00e9 \ud83d\ude00 a\/b",
            "all": "\"\\\/\b\f\n\r\t",
            "opt": "x\ty",
            "none": null,
            "bytes": "a\nb"
        } "#
        .to_vec();
        let s: S<'_> = from_slice_in_place(&mut buf).expect("ok");
        assert_eq!(
            s,
            S {
                plain: "hello",
                escaped: "caf\u{e9} \u{1F600} a/b",
                all: "\"\\/\u{8}\u{c}\n\r\t",
                opt: Some("x\ty"),
                none: None,
                bytes: b"a\nb",
            }
        );
    }

    #[test]
    fn borrowed_top_level_and_keys() {
        let mut buf = br#""\u0041\u00e9""#.to_vec();
        let s: &str = from_slice_in_place(&mut buf).expect("ok");
        assert_eq!(s, "A\u{e9}");

        let mut buf = br#"{"k\u0065y": "v\u0061l", "a": "b"}"#.to_vec();
        let m: BTreeMap<&str, &str> = from_slice_in_place(&mut buf).expect("ok");
        assert_eq!(m.get("key"), Some(&"val"));
        assert_eq!(m.get("a"), Some(&"b"));
    }

    /// Fixed-capacity string like `heapless::String<N>` (copies via visit_str).
    #[derive(Debug, PartialEq)]
    struct Fixed<const N: usize> {
        buf: [u8; N],
        len: usize,
    }

    impl<const N: usize> Fixed<N> {
        fn as_str(&self) -> &str {
            core::str::from_utf8(&self.buf[..self.len]).expect("utf8")
        }
    }

    impl<'de, const N: usize> Deserialize<'de> for Fixed<N> {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<const N: usize>;
            impl<const N: usize> Visitor<'_> for V<N> {
                type Value = Fixed<N>;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    write!(f, "a string of at most {N} bytes")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Fixed<N>, E> {
                    let mut out = Fixed {
                        buf: [0; N],
                        len: v.len(),
                    };
                    out.buf
                        .get_mut(..v.len())
                        .ok_or_else(|| E::invalid_length(v.len(), &self))?
                        .copy_from_slice(v.as_bytes());
                    Ok(out)
                }
            }
            d.deserialize_str(V::<N>)
        }
    }

    #[test]
    fn fixed_capacity_string() {
        let s: Fixed<8> = de(r#""a\nb\u00e9""#).expect("ok");
        assert_eq!(s.as_str(), "a\nb\u{e9}");
        assert_eq!(de::<Fixed<2>>(r#""abc""#), Err(DeError::InvalidLength));
        assert_eq!(de::<Fixed<2>>("12"), Err(DeError::InvalidType));
    }

    #[test]
    fn integer_bounds() {
        macro_rules! check {
            ($($ty:ty),*) => {$(
                let min = <$ty>::MIN as i128;
                let max = <$ty>::MAX as u128;
                assert_eq!(de::<$ty>(&std::format!("{min}")), Ok(<$ty>::MIN));
                assert_eq!(de::<$ty>(&std::format!("{max}")), Ok(<$ty>::MAX));
                assert_eq!(de::<$ty>(&std::format!("{}", max + 1)), Err(DeError::NumberOutOfRange));
                assert_eq!(de::<$ty>(&std::format!("{}", min - 1)), Err(DeError::NumberOutOfRange));
            )*};
        }
        check!(i8, i16, i32, i64, u8, u16, u32, u64);
        assert_eq!(
            de::<i128>("-170141183460469231731687303715884105728"),
            Ok(i128::MIN)
        );
        assert_eq!(
            de::<i128>("170141183460469231731687303715884105727"),
            Ok(i128::MAX)
        );
        assert_eq!(
            de::<i128>("170141183460469231731687303715884105728"),
            Err(DeError::NumberOutOfRange)
        );
        assert_eq!(
            de::<i128>("-170141183460469231731687303715884105729"),
            Err(DeError::NumberOutOfRange)
        );
        assert_eq!(
            de::<u128>("340282366920938463463374607431768211455"),
            Ok(u128::MAX)
        );
        assert_eq!(
            de::<u128>("340282366920938463463374607431768211456"),
            Err(DeError::NumberOutOfRange)
        );
        assert_eq!(de::<u128>("-1"), Err(DeError::NumberOutOfRange));
        assert_eq!(de::<u8>("-0"), Ok(0));
        assert_eq!(de::<u64>("1e400"), Err(DeError::NumberOutOfRange));
    }

    #[test]
    fn integral_floats_and_floats() {
        assert_eq!(de::<u8>("1.0"), Ok(1));
        assert_eq!(de::<u8>("1e2"), Ok(100));
        assert_eq!(de::<i32>("-2.50e1"), Ok(-25));
        assert_eq!(de::<u8>("1e3"), Err(DeError::NumberOutOfRange));
        assert_eq!(de::<u8>("2.5"), Err(DeError::InvalidType));
        assert_eq!(de::<u8>("\"1\""), Err(DeError::InvalidType));
        assert_eq!(de::<u8>("true"), Err(DeError::InvalidType));
        assert_eq!(de::<f64>("1.5"), Ok(1.5));
        assert_eq!(de::<f64>("-3"), Ok(-3.0));
        assert_eq!(de::<f64>("1e400"), Ok(f64::INFINITY));
        assert_eq!(de::<f32>("0.1"), Ok(0.1f32));
        assert_eq!(de::<f64>("null"), Err(DeError::InvalidType));
    }

    #[test]
    fn bools_chars_units() {
        assert_eq!(de::<bool>("true"), Ok(true));
        assert_eq!(de::<bool>(" false "), Ok(false));
        assert_eq!(de::<bool>("1"), Err(DeError::InvalidType));
        assert_eq!(de::<char>(r#""a""#), Ok('a'));
        assert_eq!(de::<char>(r#""\u00e9""#), Ok('\u{e9}'));
        assert_eq!(de::<char>(r#""\ud83d\ude00""#), Ok('\u{1F600}'));
        assert_eq!(de::<char>(r#""ab""#), Err(DeError::InvalidValue));
        assert_eq!(de::<()>("null"), Ok(()));
        assert_eq!(de::<()>("0"), Err(DeError::InvalidType));
        #[derive(Deserialize, Debug, PartialEq)]
        struct Unit;
        assert_eq!(de::<Unit>("null"), Ok(Unit));
        #[derive(Deserialize, Debug, PartialEq)]
        struct Newtype(u16);
        assert_eq!(de::<Newtype>("7"), Ok(Newtype(7)));
        #[derive(Deserialize, Debug, PartialEq)]
        struct Tuple(u8, bool);
        assert_eq!(de::<Tuple>("[1, true]"), Ok(Tuple(1, true)));
        assert_eq!(de::<Option<u8>>("null"), Ok(None));
        assert_eq!(de::<Option<u8>>("5"), Ok(Some(5)));
        assert_eq!(de::<Option<Option<u8>>>("null"), Ok(None));
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Inner<'a> {
        #[serde(borrow)]
        name: &'a str,
        value: i32,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Outer<'a> {
        id: u64,
        #[serde(borrow)]
        inner: Inner<'a>,
        #[serde(borrow)]
        list: [Inner<'a>; 2],
        #[serde(default)]
        missing_default: u8,
        maybe: Option<u8>,
    }

    #[test]
    fn nested_structs_and_unknown_fields() {
        let mut buf = br#"{
            "unknown": {"deep": [1, {"x": "\"}]"}, [[]]]},
            "id": 18446744073709551615,
            "inner": {"name": "in\"ner", "value": -5, "extra": null},
            "list": [{"name": "a", "value": 1}, ["b", 2]],
            "also_unknown": "x\u00e9"
        }"#
        .to_vec();
        let o: Outer<'_> = from_slice_in_place(&mut buf).expect("ok");
        assert_eq!(
            o,
            Outer {
                id: u64::MAX,
                inner: Inner {
                    name: "in\"ner",
                    value: -5
                },
                list: [
                    Inner {
                        name: "a",
                        value: 1
                    },
                    Inner {
                        name: "b",
                        value: 2
                    }
                ],
                missing_default: 0,
                maybe: None,
            }
        );
    }

    #[test]
    fn struct_errors() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct S {
            a: u8,
        }
        #[derive(Deserialize, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Strict {
            a: u8,
        }
        assert_eq!(de::<S>("{}"), Err(DeError::MissingField));
        assert_eq!(de::<S>(r#"{"a":1,"a":2}"#), Err(DeError::DuplicateField));
        assert_eq!(de::<S>(r#"{"a":"x"}"#), Err(DeError::InvalidType));
        assert_eq!(de::<S>("[1]"), Ok(S { a: 1 }));
        assert_eq!(de::<S>("[1, 2]"), Err(DeError::InvalidLength));
        assert_eq!(de::<S>("[]"), Err(DeError::InvalidLength));
        assert_eq!(de::<S>("3"), Err(DeError::InvalidType));
        assert_eq!(de::<Strict>(r#"{"a":1,"b":2}"#), Err(DeError::UnknownField));
        assert_eq!(de::<Strict>(r#"{"a":1}"#), Ok(Strict { a: 1 }));
    }

    /// A JSON tree built through `deserialize_any`.
    #[derive(Debug, PartialEq)]
    enum Any<'a> {
        Null,
        Bool(bool),
        I(i64),
        U(u64),
        F(f64),
        S(&'a str),
        A(Vec<Any<'a>>),
        O(Vec<(&'a str, Any<'a>)>),
    }

    impl<'de> Deserialize<'de> for Any<'de> {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Any<'de>;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("any json")
                }
                fn visit_unit<E>(self) -> Result<Any<'de>, E> {
                    Ok(Any::Null)
                }
                fn visit_bool<E>(self, v: bool) -> Result<Any<'de>, E> {
                    Ok(Any::Bool(v))
                }
                fn visit_i64<E>(self, v: i64) -> Result<Any<'de>, E> {
                    Ok(Any::I(v))
                }
                fn visit_u64<E>(self, v: u64) -> Result<Any<'de>, E> {
                    Ok(Any::U(v))
                }
                fn visit_f64<E>(self, v: f64) -> Result<Any<'de>, E> {
                    Ok(Any::F(v))
                }
                fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Any<'de>, E> {
                    Ok(Any::S(v))
                }
                fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Any<'de>, A::Error> {
                    let mut v = Vec::new();
                    while let Some(x) = a.next_element()? {
                        v.push(x);
                    }
                    Ok(Any::A(v))
                }
                fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<Any<'de>, A::Error> {
                    let mut v = Vec::new();
                    while let Some((k, x)) = a.next_entry()? {
                        v.push((k, x));
                    }
                    Ok(Any::O(v))
                }
            }
            d.deserialize_any(V)
        }
    }

    #[test]
    fn deserialize_any_tree() {
        let mut buf = br#"{"a": [null, true, false, -1, 2, 1.5, 18446744073709551616, "s\u00e9"], "b": {}, "c": []}"#.to_vec();
        let v: Any<'_> = from_slice_in_place(&mut buf).expect("ok");
        assert_eq!(
            v,
            Any::O(std::vec![
                (
                    "a",
                    Any::A(std::vec![
                        Any::Null,
                        Any::Bool(true),
                        Any::Bool(false),
                        Any::I(-1),
                        Any::U(2),
                        Any::F(1.5),
                        Any::F(18446744073709551616.0),
                        Any::S("s\u{e9}"),
                    ])
                ),
                ("b", Any::O(std::vec![])),
                ("c", Any::A(std::vec![])),
            ])
        );
    }

    #[test]
    fn custom_error() {
        #[derive(Debug)]
        struct Picky;
        impl<'de> Deserialize<'de> for Picky {
            fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let _ = u8::deserialize(d)?;
                Err(de::Error::custom("nope"))
            }
        }
        assert!(matches!(de::<Picky>("1"), Err(DeError::Custom)));
    }

    fn deep_unknown(depth: usize) -> Vec<u8> {
        let mut s = br#"{"a": 1, "junk": "#.to_vec();
        s.extend(core::iter::repeat_n(b'[', depth));
        s.extend(core::iter::repeat_n(b']', depth));
        s.extend_from_slice(b"}");
        s
    }

    #[test]
    fn ignored_deep_values_use_constant_stack() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct S {
            a: u8,
        }
        let handle = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| {
                // Within the validation depth: skipped iteratively.
                let mut ok = deep_unknown(usize::from(MAX_DEPTH) - 1);
                let r1 = from_slice_in_place::<S>(&mut ok);
                // Deeper than MAX_DEPTH: rejected by validation, no overflow.
                let mut deep = deep_unknown(10_000);
                let r2 = from_slice_in_place::<S>(&mut deep);
                let mut deeper = deep_unknown(100_000);
                let r3 = from_slice_in_place::<de::IgnoredAny>(&mut deeper);
                (r1, r2, r3.map(|_| ()))
            })
            .expect("spawn");
        let (r1, r2, r3) = handle.join().expect("no stack overflow");
        assert_eq!(r1, Ok(S { a: 1 }));
        assert_eq!(r2, Err(DeError::Syntax));
        assert_eq!(r3, Err(DeError::Syntax));
    }

    #[test]
    fn skip_value_directly_is_iterative() {
        // The skipper itself handles any depth (validation is what limits it).
        let handle = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| {
                let mut s = deep_unknown(10_000);
                let mut d = Deserializer { input: &mut s };
                let r = (|| {
                    d.expect(b'{')?;
                    for _ in 0..2 {
                        d.skip_value()?; // key
                        d.expect(b':')?;
                        d.skip_value()?; // value
                        if d.peek()? == b',' {
                            d.expect(b',')?;
                        }
                    }
                    d.expect(b'}')
                })();
                (r, d.input.is_empty())
            })
            .expect("spawn");
        assert_eq!(handle.join().expect("no stack overflow"), (Ok(()), true));
    }

    #[test]
    fn with_limits() {
        let mut buf = b"[[1]]".to_vec();
        assert_eq!(
            from_slice_in_place_with_limits::<Vec<Vec<u8>>>(&mut buf, &Limits::new().max_depth(1)),
            Err(DeError::Syntax)
        );
        let mut buf = b"[[1]]".to_vec();
        assert_eq!(
            from_slice_in_place_with_limits::<Vec<Vec<u8>>>(&mut buf, &Limits::new()),
            Ok(std::vec![std::vec![1]])
        );
    }

    #[test]
    fn invalid_input_never_panics() {
        let inputs: &[&[u8]] = &[
            b"",
            b" ",
            b"{",
            b"[",
            b"\"",
            b"\"\\",
            b"\"\\u",
            b"\"\\ud800\"",
            b"{\"a\":}",
            b"[1,]",
            b"01",
            b"1 2",
            b"nul",
            b"\xff",
            b"\"\xff\"",
            b"{\"a\" 1}",
            b"[1}",
            b"{\"a\":1,}",
            b"\"a\nb\"",
            b"-",
            b"1.",
            b"tru",
            b"\xef\xbb\xbf{}",
        ];
        for &inp in inputs {
            let mut b = inp.to_vec();
            assert_eq!(
                from_slice_in_place::<de::IgnoredAny>(&mut b).map(|_| ()),
                Err(DeError::Syntax),
                "{inp:?}"
            );
            let mut b = inp.to_vec();
            assert!(from_slice_in_place::<Any<'_>>(&mut b).is_err());
            let mut b = inp.to_vec();
            assert!(from_slice_in_place::<Outer<'_>>(&mut b).is_err());
        }
        // Valid JSON of the wrong shape: errors, no panic.
        for s in [
            "null",
            "1",
            "\"x\"",
            "[]",
            "{}",
            "[[[]]]",
            r#"{"id": "x"}"#,
            r#"{"inner": 1}"#,
            r#"{"list": {}}"#,
            r#"{"id": -1}"#,
            r#"{"id": 1.5}"#,
        ] {
            let mut b = s.as_bytes().to_owned();
            assert!(from_slice_in_place::<Outer<'_>>(&mut b).is_err(), "{s}");
        }
    }

    #[test]
    fn whole_input_is_mutated_but_strings_are_right() {
        let mut buf = br#"["a\nb", "\u00e9\u00e9\u00e9", "plain"]"#.to_vec();
        let v: Vec<&str> = from_slice_in_place(&mut buf).expect("ok");
        assert_eq!(v, ["a\nb", "\u{e9}\u{e9}\u{e9}", "plain"]);
    }
}
