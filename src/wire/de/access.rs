//! The access types the deserializer hands to visitors: array elements,
//! object members, externally tagged enums and object keys.

use serde::de::{self, DeserializeSeed, Visitor};

use crate::wire::json::Number;

use super::{DeError, Deserializer};

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

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::wire::de::from_slice_in_place;
    use crate::wire::de::tests::de;
    use serde::Deserialize;
    use std::collections::BTreeMap;
    use std::string::String;
    use std::vec::Vec;

    #[test]
    fn escaped_field_names_match() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct S {
            name: u8,
        }
        assert_eq!(de::<S>(r#"{"n\u0061me": 3}"#), Ok(S { name: 3 }));
    }

    #[test]
    fn sequences() {
        assert_eq!(de::<[u32; 3]>("[1, 2, 3]"), Ok([1, 2, 3]));
        assert_eq!(de::<[u32; 3]>("[1, 2]"), Err(DeError::InvalidLength));
        assert_eq!(de::<[u32; 3]>("[1, 2, 3, 4]"), Err(DeError::InvalidLength));
        assert_eq!(de::<[u32; 0]>("[]"), Ok([]));
        assert_eq!(
            de::<(u8, i64, bool)>(r#"[1, -2, false]"#),
            Ok((1, -2, false))
        );
        assert_eq!(de::<(u8, u8)>("[1]"), Err(DeError::InvalidLength));
        assert_eq!(de::<(u8, u8)>("[1,2,3]"), Err(DeError::InvalidLength));
        assert_eq!(
            de::<Vec<Vec<u8>>>("[[1],[],[2,3]]"),
            Ok(std::vec![std::vec![1], std::vec![], std::vec![2, 3]])
        );
        assert_eq!(de::<[u8; 2]>("{}"), Err(DeError::InvalidType));
        let mut buf = b"[\"a\\\"\", \"b\"]".to_vec();
        let v: [&str; 2] = from_slice_in_place(&mut buf).expect("ok");
        assert_eq!(v, ["a\"", "b"]);
    }

    #[derive(Deserialize, Debug, PartialEq)]
    enum E<'a> {
        Unit,
        Newtype(u8),
        Tuple(u8, bool),
        Struct {
            x: i8,
            #[serde(borrow)]
            s: &'a str,
        },
        #[serde(rename = "ren\"amed")]
        Renamed,
    }

    #[test]
    fn enums() {
        let parse = |s: &str| -> Result<std::string::String, DeError> {
            let mut buf = s.as_bytes().to_vec();
            from_slice_in_place::<E<'_>>(&mut buf).map(|e| std::format!("{e:?}"))
        };
        assert_eq!(parse(r#""Unit""#).as_deref(), Ok("Unit"));
        assert_eq!(parse(r#""Un\u0069t""#).as_deref(), Ok("Unit"));
        assert_eq!(parse(r#"{"Unit": null}"#).as_deref(), Ok("Unit"));
        assert_eq!(parse(r#"{"Newtype": 5}"#).as_deref(), Ok("Newtype(5)"));
        assert_eq!(
            parse(r#" { "Tuple" : [ 1 , true ] } "#).as_deref(),
            Ok("Tuple(1, true)")
        );
        assert_eq!(
            parse(r#"{"Struct": {"s": "q\"", "x": -1}}"#).as_deref(),
            Ok("Struct { x: -1, s: \"q\\\"\" }")
        );
        assert_eq!(parse(r#""ren\"amed""#).as_deref(), Ok("Renamed"));
        assert_eq!(parse(r#""Nope""#), Err(DeError::UnknownVariant));
        assert_eq!(parse(r#"{"Nope": 1}"#), Err(DeError::UnknownVariant));
        assert_eq!(parse(r#""Newtype""#), Err(DeError::InvalidType));
        assert_eq!(parse(r#"{"Unit": 1}"#), Err(DeError::InvalidType));
        assert_eq!(
            parse(r#"{"Newtype": 1, "Unit": null}"#),
            Err(DeError::InvalidLength)
        );
        assert_eq!(parse("{}"), Err(DeError::InvalidLength));
        assert_eq!(parse("[]"), Err(DeError::InvalidType));
        assert_eq!(parse("3"), Err(DeError::InvalidType));
    }

    #[test]
    fn maps_with_non_string_keys() {
        let m: BTreeMap<u32, bool> = de(r#"{"1": true, "20": false}"#).expect("ok");
        assert_eq!(m.get(&1), Some(&true));
        assert_eq!(m.get(&20), Some(&false));
        assert_eq!(
            de::<BTreeMap<u8, u8>>(r#"{"256": 1}"#),
            Err(DeError::NumberOutOfRange)
        );
        assert_eq!(
            de::<BTreeMap<u8, u8>>(r#"{"x": 1}"#),
            Err(DeError::InvalidType)
        );
        let b: BTreeMap<bool, u8> = de(r#"{"true": 1}"#).expect("ok");
        assert_eq!(b.get(&true), Some(&1));
        let s: BTreeMap<String, i8> = de(r#"{"a\nb": -1}"#).expect("ok");
        assert_eq!(s.get("a\nb"), Some(&-1));
        assert_eq!(de::<BTreeMap<String, u8>>("[]"), Err(DeError::InvalidType));
    }
}
