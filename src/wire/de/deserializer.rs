//! The forward-only deserializer and its seq, map and enum accessors (one
//! recursive descent, so one file).

use core::mem;

use serde::de::{self, DeserializeSeed, Visitor};

use super::error::DeError;
use crate::wire::json::{self, Number};
use crate::wire::swar;

/// Forward-only deserializer over the not yet consumed part of the frame.
pub(super) struct Deserializer<'de> {
    pub(super) input: &'de mut [u8],
}

impl<'de> Deserializer<'de> {
    pub(super) fn skip_ws(&mut self) {
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
    pub(super) fn peek(&mut self) -> Result<u8, DeError> {
        self.skip_ws();
        self.input.first().copied().ok_or(DeError::Eof)
    }

    /// Split the next `n` bytes off the input.
    pub(super) fn take_bytes(&mut self, n: usize) -> Result<&'de mut [u8], DeError> {
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
    pub(super) fn expect(&mut self, b: u8) -> Result<(), DeError> {
        if self.peek()? == b {
            self.take_bytes(1)?;
            Ok(())
        } else {
            Err(DeError::Syntax)
        }
    }

    /// Length of the value at the front of the input (iterative).
    pub(super) fn value_len(&self) -> Result<usize, DeError> {
        json::value_len(self.input).ok_or(DeError::Syntax)
    }

    pub(super) fn parse_literal(&mut self, lit: &[u8]) -> Result<(), DeError> {
        if self.input.starts_with(lit) {
            self.take_bytes(lit.len())?;
            Ok(())
        } else {
            Err(DeError::Syntax)
        }
    }

    /// The string at the front of the input (after `peek() == b'"'`),
    /// unescaped in place and borrowed for `'de`.
    pub(super) fn parse_str(&mut self) -> Result<&'de str, DeError> {
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
    pub(super) fn parse_number(&mut self) -> Result<Number<'de>, DeError> {
        let n = self.value_len()?;
        let bytes: &'de [u8] = self.take_bytes(n)?;
        let text = core::str::from_utf8(bytes).map_err(|_| DeError::Syntax)?;
        Number::parse(text).ok_or(DeError::Syntax)
    }

    /// An integral number (`1`, `-3`, `1.0`, `1e2`) at the front of the input.
    pub(super) fn parse_integral(&mut self) -> Result<Number<'de>, DeError> {
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

    pub(super) fn parse_float(&mut self) -> Result<Number<'de>, DeError> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.parse_number(),
            _ => Err(DeError::InvalidType),
        }
    }

    /// Skip one value of any depth without recursion.
    pub(super) fn skip_value(&mut self) -> Result<(), DeError> {
        self.skip_ws();
        let n = self.value_len()?;
        self.take_bytes(n)?;
        Ok(())
    }

    /// After a sequence visitor returned: consume the closing `]`.
    pub(super) fn end_seq(&mut self) -> Result<(), DeError> {
        match self.peek()? {
            b']' => self.expect(b']'),
            b',' => Err(DeError::InvalidLength),
            _ => Err(DeError::Syntax),
        }
    }

    /// After a map visitor returned: consume the closing `}`.
    pub(super) fn end_map(&mut self) -> Result<(), DeError> {
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
        // An object only. serde_json also takes an array of the fields in
        // order; a schema-checked argument or output is never one, and
        // refusing it leaves every derived visitor's `visit_seq` unused
        // (about 100 B of flash per argument type on a microcontroller).
        self.deserialize_map(visitor)
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

/// Elements of a JSON array.
pub(super) struct SeqAccess<'a, 'de> {
    pub(super) de: &'a mut Deserializer<'de>,
    pub(super) first: bool,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'_, 'de> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match (self.de.peek()?, self.first) {
            (b']', _) => return Ok(None),
            (b',', false) => self.de.expect(b',')?,
            (_, true) => {}
            (_, false) => return Err(DeError::Syntax),
        }
        self.first = false;
        seed.deserialize(&mut *self.de).map(Some)
    }
}

/// Members of a JSON object.
pub(super) struct MapAccess<'a, 'de> {
    pub(super) de: &'a mut Deserializer<'de>,
    pub(super) first: bool,
}

impl<'de> de::MapAccess<'de> for MapAccess<'_, 'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match (self.de.peek()?, self.first) {
            (b'}', _) => return Ok(None),
            (b',', false) => self.de.expect(b',')?,
            (b'"', true) => {}
            _ => return Err(DeError::Syntax),
        }
        self.first = false;
        if self.de.peek()? != b'"' {
            return Err(DeError::Syntax);
        }
        seed.deserialize(MapKey { de: &mut *self.de }).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        self.de.expect(b':')?;
        seed.deserialize(&mut *self.de)
    }
}

/// Externally tagged enum: `{"Variant": value}`.
pub(super) struct Enum<'a, 'de> {
    pub(super) de: &'a mut Deserializer<'de>,
}

impl<'de> de::EnumAccess<'de> for Enum<'_, 'de> {
    type Error = DeError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), DeError> {
        let variant = seed.deserialize(MapKey { de: &mut *self.de })?;
        self.de.expect(b':')?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for Enum<'_, 'de> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        de::Deserialize::deserialize(&mut *self.de)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(&mut *self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_seq(&mut *self.de, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_struct(&mut *self.de, "", fields, visitor)
    }
}

/// Deserializer for an object key (always a JSON string). Integer and bool
/// targets parse the key text, so maps like `BTreeMap<u32, T>` work.
struct MapKey<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'de> MapKey<'_, 'de> {
    fn key(&mut self) -> Result<&'de str, DeError> {
        if self.de.peek()? != b'"' {
            return Err(DeError::Syntax);
        }
        self.de.parse_str()
    }

    fn integral(&mut self) -> Result<Number<'de>, DeError> {
        let n = Number::parse(self.key()?).ok_or(DeError::InvalidType)?;
        if n.is_integral() {
            Ok(n)
        } else {
            Err(DeError::InvalidType)
        }
    }
}

macro_rules! key_signed {
    ($($method:ident => $visit:ident($ty:ty),)*) => {$(
        fn $method<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, DeError> {
            let wide = self.integral()?.as_i128().ok_or(DeError::NumberOutOfRange)?;
            visitor.$visit(<$ty>::try_from(wide).map_err(|_| DeError::NumberOutOfRange)?)
        }
    )*};
}

macro_rules! key_unsigned {
    ($($method:ident => $visit:ident($ty:ty),)*) => {$(
        fn $method<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, DeError> {
            let wide = self.integral()?.as_u128().ok_or(DeError::NumberOutOfRange)?;
            visitor.$visit(<$ty>::try_from(wide).map_err(|_| DeError::NumberOutOfRange)?)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for MapKey<'_, 'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_borrowed_str(self.key()?)
    }

    key_signed! {
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_i128 => visit_i128(i128),
    }

    key_unsigned! {
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
        deserialize_u128 => visit_u128(u128),
    }

    fn deserialize_bool<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, DeError> {
        match self.key()? {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            _ => Err(DeError::InvalidType),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_borrowed_bytes(self.key()?.as_bytes())
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let s = self.key()?;
        visitor.visit_enum(de::value::BorrowedStrDeserializer::<DeError>::new(s))
    }

    serde::forward_to_deserialize_any! {
        f32 f64 char str string unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}
