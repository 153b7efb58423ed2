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
//!
//! A struct is read from a JSON object only; unlike serde_json, an array of
//! its fields in order is refused (`InvalidType`). MCP's arguments and
//! results are objects, and never taking that path leaves each derived
//! `Deserialize`'s `visit_seq` out of the binary.

mod deserializer;
mod error;

use deserializer::Deserializer;
pub use error::DeError;

use crate::wire::json::{self, Limits, MAX_DEPTH};

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

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use serde::Deserialize;
    use serde::de::{self, Visitor};
    use std::borrow::ToOwned;
    use std::collections::BTreeMap;
    use std::vec::Vec;

    /// Deserialize an owned `T` from a copy of `s`.
    fn de<T: for<'a> Deserialize<'a>>(s: &str) -> Result<T, DeError> {
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
            "list": [{"name": "a", "value": 1}, {"value": 2, "name": "b"}],
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
        // A struct is an object only (serde_json would also take `[1]`).
        assert_eq!(de::<S>("[1]"), Err(DeError::InvalidType));
        assert_eq!(de::<S>("[]"), Err(DeError::InvalidType));
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
