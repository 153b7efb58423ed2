//! Checking raw arguments against a schema, without allocating: the first
//! violation, in document order.

use core::marker::PhantomData;

use super::violation::{Describe, PathBuf, Seg};
use super::{
    Bound, Constraint, Keywords, Literal, MAX_SCHEMA_DEPTH, Property, Schema, Types, Violation,
    Walk,
};
use crate::wire::json::{JsonStr, Kind, Number, Value};

impl Types {
    fn accepts(self, v: &Value<'_>) -> bool {
        if self.0 == 0 {
            return true;
        }
        match v.kind() {
            Kind::Null => self.contains(Self::NULL),
            Kind::Bool => self.contains(Self::BOOLEAN),
            Kind::String => self.contains(Self::STRING),
            Kind::Array => self.contains(Self::ARRAY),
            Kind::Object => self.contains(Self::OBJECT),
            Kind::Number => {
                self.contains(Self::NUMBER)
                    || (self.contains(Self::INTEGER)
                        && v.as_number().is_some_and(|n| n.is_integral()))
            }
        }
    }
}

impl Bound<'_> {
    /// `value` compared with the bound: `Less`, `Equal` or `Greater`
    /// (`None` when the value is not a number).
    fn cmp_value(self, v: &Value<'_>) -> Option<core::cmp::Ordering> {
        let n = v.as_number()?;
        match self {
            Bound::Int(b) => Some(match n.as_i64() {
                Some(i) => i.cmp(&b),
                None => {
                    let mut buf = [0u8; 21];
                    n.cmp_exact(&int_number(b, &mut buf))
                }
            }),
            Bound::Number(b) => Some(n.cmp_exact(&b)),
        }
    }
}

/// `i` as a JSON number in `buf`.
fn int_number(i: i64, buf: &mut [u8; 21]) -> Number<'_> {
    let mut digits = [0u8; 20];
    let d = crate::wire::emit::decimal(i.unsigned_abs(), &mut digits);
    let start = usize::from(i >= 0);
    let end = 1 + d.len();
    if let Some(sign) = buf.first_mut() {
        *sign = b'-';
    }
    if let Some(dst) = buf.get_mut(1..end) {
        dst.copy_from_slice(d);
    }
    let text = buf
        .get(start..end)
        .and_then(|t| core::str::from_utf8(t).ok())
        .unwrap_or("0");
    const ZERO: Number<'static> = Number::literal("0");
    Number::parse(text).unwrap_or(ZERO)
}

/// `n % m` for `m != 0`. On 32-bit targets by shift and subtract, so the
/// 64-bit division routine is not linked for `multipleOf`.
fn rem(n: u64, m: u64) -> u64 {
    if cfg!(target_pointer_width = "64") {
        n.checked_rem(m).unwrap_or(n)
    } else {
        rem_by_shifts(n, m)
    }
}

fn rem_by_shifts(n: u64, m: u64) -> u64 {
    let mut r = 0u64;
    for bit in (0..64).rev() {
        // r < m, so 2r + bit < 2m: one subtraction restores r < m (the
        // wrapping forms cover m > 2^63, where 2r overflows).
        let carry = r >> 63;
        r = (r << 1) | ((n >> bit) & 1);
        if carry == 1 || r >= m {
            r = r.wrapping_sub(m);
        }
    }
    r
}

impl Literal<'_> {
    fn matches(self, v: &Value<'_>) -> bool {
        match self {
            Literal::Null => v.is_null(),
            Literal::Bool(b) => v.as_bool() == Some(b),
            Literal::Int(i) => v.as_number().and_then(|n| n.as_i64()) == Some(i),
            Literal::Str(s) => v.as_str().is_some_and(|j| j.eq_str(s)),
        }
    }
}

impl<'s> Schema<'s> {
    /// Check `value` against this schema; the first violation found, in
    /// document order (required properties are checked before members).
    pub fn validate<'a>(&'s self, value: &Value<'a>) -> Result<(), Violation<'s, 'a>>
    where
        's: 'a,
    {
        let mut walk = Walk {
            root: self,
            path: PathBuf::new(),
            found: None,
            outlives: PhantomData,
        };
        match (check(self, value, 0, &mut walk), walk.found) {
            (false, Some(v)) => Err(v),
            _ => Ok(()),
        }
    }
}

impl<'s> Walk<'s, '_> {
    /// Record the violation; `false` stops the walk. The violation travels
    /// through this slot rather than up the recursion, so each level's stack
    /// frame stays small. (A branch of `anyOf`, `oneOf`, `not` or `if` that
    /// fails leaves its violation here too; only the last one, the one that
    /// stopped the walk, is reported.)
    pub(super) fn fail(&mut self, constraint: Constraint<'s>) -> bool {
        self.fail_as(constraint, None)
    }

    /// [`fail`](Self::fail), with the text of the constraint written by
    /// `describe`.
    pub(super) fn fail_as(
        &mut self,
        constraint: Constraint<'s>,
        describe: Option<Describe>,
    ) -> bool {
        self.found = Some(Violation {
            path: self.path,
            constraint,
            describe,
        });
        false
    }
}

/// Check `v` against `s` (and, through [`Composition`](super::Composition)'s
/// pointer, its 2020-12 keywords); `false` with the violation in `walk`.
///
/// Recursion here follows the *schema's* nesting (static, developer-written,
/// `$ref` included), capped at MAX_SCHEMA_DEPTH; input depth is already
/// bounded by the scanner.
pub(super) fn check<'s: 'a, 'a>(
    s: &'s Schema<'s>,
    v: &Value<'a>,
    depth: usize,
    walk: &mut Walk<'s, 'a>,
) -> bool {
    if depth > MAX_SCHEMA_DEPTH {
        return walk.fail(Constraint::TooDeep);
    }
    if !check_own(s, v, depth, walk) {
        return false;
    }
    match s.composition {
        Some(c) => (c.ops.check)(c, v, depth, walk),
        None => true,
    }
}

/// The validation vocabulary (everything but the 2020-12 applicators).
fn check_own<'s: 'a, 'a>(
    s: &'s Schema<'s>,
    v: &Value<'a>,
    depth: usize,
    walk: &mut Walk<'s, 'a>,
) -> bool {
    if !s.types.accepts(v) {
        return walk.fail(Constraint::Type(s.types));
    }
    // Keywords::NONE is never read here: no copy of it in flash.
    let kw = s.keywords;
    if let Some(k) = kw {
        if !k.enum_values.is_empty() && !k.enum_values.iter().any(|l| l.matches(v)) {
            return walk.fail(Constraint::Enum(k.enum_values));
        }
        if let Some(c) = k.const_value
            && !c.matches(v)
        {
            return walk.fail(Constraint::Const(c));
        }
    }
    match v.kind() {
        Kind::Number => kw.is_none_or(|k| check_number(k, v, walk)),
        Kind::String => {
            if let Some(k) = kw
                && (k.min_length.is_some() || k.max_length.is_some())
            {
                let n = v.as_str().map_or(0, |j| j.char_count());
                if let Some(min) = k.min_length
                    && n < min as usize
                {
                    return walk.fail(Constraint::MinLength(min));
                }
                if let Some(max) = k.max_length
                    && n > max as usize
                {
                    return walk.fail(Constraint::MaxLength(max));
                }
            }
            true
        }
        Kind::Array => {
            if let Some(k) = kw {
                let n = v.len();
                if let Some(min) = k.min_items
                    && n < min as usize
                {
                    return walk.fail(Constraint::MinItems(min));
                }
                if let Some(max) = k.max_items
                    && n > max as usize
                {
                    return walk.fail(Constraint::MaxItems(max));
                }
            }
            if let Some(items) = s.items {
                for (i, item) in v.items().enumerate() {
                    walk.path.push(Seg::Index(i));
                    if !check(items, &item, depth + 1, walk) {
                        return false;
                    }
                    walk.path.pop();
                }
            }
            true
        }
        Kind::Object => check_object(s, v, depth, walk),
        _ => true,
    }
}

fn check_number<'s, 'a>(k: &'s Keywords<'s>, v: &Value<'a>, walk: &mut Walk<'s, 'a>) -> bool {
    use core::cmp::Ordering::{Equal, Greater, Less};
    let below = |b: Bound<'s>, allow_equal: bool| match b.cmp_value(v) {
        Some(Less) => true,
        Some(Equal) => !allow_equal,
        Some(Greater) => false,
        None => true,
    };
    let above = |b: Bound<'s>, allow_equal: bool| match b.cmp_value(v) {
        Some(Greater) => true,
        Some(Equal) => !allow_equal,
        Some(Less) => false,
        None => true,
    };
    if let Some(b) = k.minimum
        && below(b, true)
    {
        return walk.fail(Constraint::Minimum(b));
    }
    if let Some(b) = k.maximum
        && above(b, true)
    {
        return walk.fail(Constraint::Maximum(b));
    }
    if let Some(b) = k.exclusive_minimum
        && below(b, false)
    {
        return walk.fail(Constraint::ExclusiveMinimum(b));
    }
    if let Some(b) = k.exclusive_maximum
        && above(b, false)
    {
        return walk.fail(Constraint::ExclusiveMaximum(b));
    }
    if let Some(m) = k.multiple_of {
        // Exact for integral values of magnitude up to u64::MAX; larger
        // ones (and fractions) are not accepted.
        let magnitude = v
            .as_number()
            .and_then(|n| n.as_i128())
            .and_then(|i| u64::try_from(i.unsigned_abs()).ok());
        let ok = match magnitude {
            Some(i) => m != 0 && rem(i, m) == 0,
            None => false,
        };
        if !ok {
            return walk.fail(Constraint::MultipleOf(m));
        }
    }
    true
}

#[inline(never)] // its kept members only on the stack of an object's level
fn check_object<'s: 'a, 'a>(
    s: &'s Schema<'s>,
    v: &Value<'a>,
    depth: usize,
    walk: &mut Walk<'s, 'a>,
) -> bool {
    // One walk records which declared properties appear, and which twice
    // (for up to 64 properties; past that, lookups fall back to walking).
    let tracked = s.properties.len() <= 64;
    let (mut seen, mut twice) = (0u64, 0u64);
    // The first members, kept from this walk so the checks below need not
    // walk again (objects with more members are walked twice).
    const KEPT: usize = 8;
    let mut kept: [Option<(JsonStr<'a>, Value<'a>, Option<usize>)>; KEPT] = [None; KEPT];
    let mut count = 0usize;
    // Where the next member is looked for first: arguments mostly come in
    // the schema's order, so each is found at once (a walk linear in the
    // members, not in their square).
    let mut next = 0usize;
    if tracked {
        for (key, member) in v.members() {
            let declared = find_from(s.properties, &mut next, |name| key.eq_str(name));
            if let Some(i) = declared {
                let bit = 1u64 << i;
                twice |= seen & bit;
                seen |= bit;
            }
            if let Some(slot) = kept.get_mut(count) {
                *slot = Some((key, member, declared));
            }
            count += 1;
        }
    }
    let mut at = 0usize;
    for name in s.required {
        let present = match find_from(s.properties, &mut at, |p| p == *name) {
            Some(i) if tracked => seen & (1u64 << i) != 0,
            _ => v.get(name).is_some(),
        };
        if !present {
            walk.path.push(Seg::Name(name));
            let r = walk.fail(Constraint::Required);
            walk.path.pop();
            return r;
        }
    }
    let walk_again = !tracked || count > KEPT;
    next = 0;
    let mut again = walk_again.then(|| v.members());
    let mut kept = kept
        .get(..if walk_again { 0 } else { count })
        .unwrap_or_default()
        .iter()
        .flatten();
    loop {
        let (key, member, declared) = match kept.next() {
            Some(&(key, member, declared)) => (key, member, declared),
            None => match again.as_mut().and_then(Iterator::next) {
                Some((key, member)) => {
                    let declared = find_from(s.properties, &mut next, |name| key.eq_str(name));
                    (key, member, declared)
                }
                None => break,
            },
        };
        let declared = declared.and_then(|i| s.properties.get(i).map(|p| (i, p)));
        walk.path.push(Seg::Key(key));
        match declared {
            Some((i, p)) => {
                let duplicated = if tracked {
                    twice & (1u64 << i) != 0
                } else {
                    v.members().filter(|(k, _)| k.eq_str(p.name)).count() > 1
                };
                if duplicated {
                    return walk.fail(Constraint::Duplicate);
                }
                if !check(&p.schema, &member, depth + 1, walk) {
                    return false;
                }
            }
            None if s.additional_properties == Some(false) => {
                return walk.fail(Constraint::NotAllowed);
            }
            None => {}
        }
        walk.path.pop();
    }
    true
}

/// The index of the property whose name `is` accepts: the one at `*from`
/// if it is (members in the schema's order), else the first; `*from`
/// moves past it.
fn find_from(props: &[Property<'_>], from: &mut usize, is: impl Fn(&str) -> bool) -> Option<usize> {
    let found = match props.get(*from) {
        Some(p) if is(p.name) => Some(*from),
        _ => props.iter().position(|p| is(p.name)),
    };
    if let Some(i) = found {
        *from = i + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::Property;
    use super::super::tests::LOOP;
    use super::*;
    use crate::wire::json::Limits;
    use std::string::{String, ToString};

    const TOP: Schema = Schema::object(&[Property::new(
        "n",
        Schema::integer().with(&Keywords::new().minimum(0).maximum(50)),
    )])
    .required(&["n"]);

    const ITEM: Schema = Schema::string().with(&Keywords::new().min_length(2).max_length(3));
    const RICH: Schema = Schema::object(&[
        Property::new("name", Schema::string().nullable()),
        Property::new(
            "tags",
            Schema::array(&ITEM).with(&Keywords::new().min_items(1).max_items(2)),
        ),
        Property::new(
            "color",
            Schema::string()
                .with(&Keywords::new().enum_values(&[Literal::Str("red"), Literal::Str("green")])),
        ),
        Property::new(
            "even",
            Schema::integer().with(&Keywords::new().multiple_of(2)),
        ),
        Property::new(
            "ratio",
            Schema::number().with(
                &Keywords::new()
                    .exclusive_minimum(Bound::Int(0))
                    .exclusive_maximum(Bound::decimal("1.5")),
            ),
        ),
        Property::new(
            "kind",
            Schema::string().with(&Keywords::new().const_value(Literal::Str("book"))),
        ),
        Property::new(
            "inner",
            Schema::object(&[Property::new("ok", Schema::boolean())])
                .required(&["ok"])
                .additional_properties(false),
        ),
    ]);

    fn err(s: &Schema<'_>, json: &str) -> Option<String> {
        let v = Value::parse(json.as_bytes(), &Limits::DEFAULT).unwrap();
        s.validate(&v).err().map(|e| e.to_string())
    }

    #[test]
    fn bookshop_top() {
        assert_eq!(err(&TOP, r#"{"n":3}"#), None);
        assert_eq!(
            err(&TOP, r#"{"n":99}"#).as_deref(),
            Some("/n must be <= 50")
        );
        assert_eq!(err(&TOP, r#"{"n":-1}"#).as_deref(), Some("/n must be >= 0"));
        assert_eq!(
            err(&TOP, r#"{"n":"3"}"#).as_deref(),
            Some("/n must be of type integer")
        );
        assert_eq!(
            err(&TOP, r#"{"n":2.5}"#).as_deref(),
            Some("/n must be of type integer")
        );
        assert_eq!(err(&TOP, r#"{"n":2.0}"#), None);
        assert_eq!(err(&TOP, r#"{}"#).as_deref(), Some("/n is required"));
        assert_eq!(
            err(&TOP, r#"{"n":1,"n":99}"#).as_deref(),
            Some("/n appears more than once")
        );
        assert_eq!(err(&TOP, r#"{"n":1,"extra":true}"#), None);
    }

    #[test]
    fn rich_constraints() {
        assert_eq!(
            err(
                &RICH,
                r#"{"name":null,"tags":["ab"],"color":"red","even":4,"ratio":1,"kind":"book","inner":{"ok":true}}"#
            ),
            None
        );
        assert_eq!(
            err(&RICH, r#"{"name":1}"#).as_deref(),
            Some("/name must be of type string or null")
        );
        assert_eq!(
            err(&RICH, r#"{"tags":[]}"#).as_deref(),
            Some("/tags must have at least 1 items")
        );
        assert_eq!(
            err(&RICH, r#"{"tags":["ab","cd","ef"]}"#).as_deref(),
            Some("/tags must have at most 2 items")
        );
        assert_eq!(
            err(&RICH, r#"{"tags":["ab","x"]}"#).as_deref(),
            Some("/tags/1 must be at least 2 characters long")
        );
        assert_eq!(err(&RICH, r#"{"tags":["ééé"]}"#), None);
        assert_eq!(
            err(&RICH, r#"{"tags":["éééé"]}"#).as_deref(),
            Some("/tags/0 must be at most 3 characters long")
        );
        assert_eq!(
            err(&RICH, r#"{"color":"blue"}"#).as_deref(),
            Some(r#"/color must be one of "red", "green""#)
        );
        assert_eq!(
            err(&RICH, r#"{"even":3}"#).as_deref(),
            Some("/even must be a multiple of 2")
        );
        assert_eq!(
            err(&RICH, r#"{"ratio":0}"#).as_deref(),
            Some("/ratio must be > 0")
        );
        assert_eq!(
            err(&RICH, r#"{"ratio":1.5}"#).as_deref(),
            Some("/ratio must be < 1.5")
        );
        assert_eq!(
            err(&RICH, r#"{"kind":"cd"}"#).as_deref(),
            Some(r#"/kind must be "book""#)
        );
        assert_eq!(
            err(&RICH, r#"{"inner":{}}"#).as_deref(),
            Some("/inner/ok is required")
        );
        assert_eq!(
            err(&RICH, r#"{"inner":{"ok":true,"x/y":1}}"#).as_deref(),
            Some("/inner/x~1y is not an allowed property")
        );
        assert_eq!(
            err(&RICH, r#"{"inner":{"ok":true,"\u0078":1}}"#).as_deref(),
            Some("/inner/x is not an allowed property")
        );
        assert_eq!(
            err(&RICH, r#"[]"#).as_deref(),
            Some("/ must be of type object")
        );
    }

    #[test]
    fn self_referencing_schema_is_bounded() {
        let deep = "[".repeat(30) + &"]".repeat(30);
        assert_eq!(err(&LOOP, &deep), None);
        let v = Value::parse(
            b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
            &Limits::DEFAULT.max_depth(64),
        )
        .unwrap();
        assert!(matches!(
            LOOP.validate(&v).map_err(|e| e.constraint),
            Err(Constraint::TooDeep)
        ));
    }

    #[test]
    fn remainder_by_shifts_matches_division() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut pairs = vec![
            (0, 1),
            (5, 1),
            (u64::MAX, u64::MAX),
            (u64::MAX, 1 << 63),
            (u64::MAX - 1, u64::MAX),
        ];
        pairs.extend([((1 << 63) + 5, (1 << 63) + 1), (u64::MAX, 3), (12, 5)]);
        // Fewer under Miri, which is about a thousand times slower.
        for _ in 0..if cfg!(miri) { 50 } else { 5000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let m = (x.rotate_left(17) >> (x % 64)).max(1);
            pairs.push((x, m));
        }
        for (n, m) in pairs {
            assert_eq!(rem_by_shifts(n, m), n % m, "{n} % {m}");
        }
    }

    #[test]
    fn integer_bounds_compare_with_any_number_exactly() {
        const S: Schema = Schema::number().with(&Keywords::new().minimum(-3).maximum(i64::MAX));
        let s = S;
        for ok in [
            "-3",
            "-3.0",
            "-2.5",
            "0",
            "9223372036854775807",
            "9.223372036854775807e18",
        ] {
            assert_eq!(err(&s, ok), None, "{ok}");
        }
        for (bad, want) in [
            ("-3.5", "/ must be >= -3"),
            ("-1e400", "/ must be >= -3"),
            ("9223372036854775807.5", "/ must be <= 9223372036854775807"),
            ("9223372036854775808", "/ must be <= 9223372036854775807"),
        ] {
            assert_eq!(err(&s, bad).as_deref(), Some(want), "{bad}");
        }
        const HALF: Schema = Schema::number().with(
            &Keywords::new()
                .minimum_decimal("0.5")
                .maximum_decimal("1e3"),
        );
        let half = HALF;
        assert_eq!(err(&half, "0.5"), None);
        assert_eq!(err(&half, "1000.0"), None);
        assert_eq!(
            err(&half, "0.49999999999999999999").as_deref(),
            Some("/ must be >= 0.5")
        );
        assert_eq!(
            err(&half, "1000.0000000000000001").as_deref(),
            Some("/ must be <= 1e3")
        );
        const EVEN: Schema = Schema::integer().with(&Keywords::new().multiple_of(u64::MAX));
        let even = EVEN;
        assert_eq!(err(&even, "18446744073709551615"), None);
        assert_eq!(
            err(&even, "-9223372036854775808").as_deref(),
            Some("/ must be a multiple of 18446744073709551615")
        );
    }

    #[test]
    fn objects_past_the_kept_members_are_walked_again() {
        const PROPS: &[Property] = &[
            Property::new("a", Schema::integer()),
            Property::new("z", Schema::string().with(&Keywords::new().max_length(1))),
        ];
        let s = Schema::object(PROPS)
            .required(&["a"])
            .additional_properties(false);
        let open = Schema::object(PROPS).required(&["a"]);
        let filler: std::vec::Vec<String> = (0..9).map(|i| format!("\"f{i}\":{i}")).collect();
        let many = |tail: &str| format!("{{\"a\":1,{},{tail}}}", filler.join(","));
        assert_eq!(err(&open, &many("\"z\":\"x\"")), None);
        assert_eq!(
            err(&open, &many("\"z\":\"xy\"")).as_deref(),
            Some("/z must be at most 1 characters long")
        );
        assert_eq!(
            err(&open, &many("\"a\":2")).as_deref(),
            Some("/a appears more than once")
        );
        assert_eq!(
            err(&s, &many("\"z\":\"x\"")).as_deref(),
            Some("/f0 is not an allowed property")
        );
        // The same answers for the short form (members kept from one walk).
        assert_eq!(
            err(&open, r#"{"a":1,"z":"xy"}"#).as_deref(),
            Some("/z must be at most 1 characters long")
        );
        assert_eq!(
            err(&open, r#"{"a":1,"a":2}"#).as_deref(),
            Some("/a appears more than once")
        );
        assert_eq!(
            err(&s, r#"{"a":1,"f":0}"#).as_deref(),
            Some("/f is not an allowed property")
        );
        assert_eq!(err(&s, r#"{"z":"x"}"#).as_deref(), Some("/a is required"));
    }

    #[test]
    fn members_in_any_order_are_found() {
        const PROPS: &[Property] = &[
            Property::new("a", Schema::integer()),
            Property::new("b", Schema::string()),
            Property::new("c", Schema::boolean()),
        ];
        let s = Schema::object(PROPS)
            .required(&["c", "a"])
            .additional_properties(false);
        assert_eq!(err(&s, r#"{"a":1,"b":"x","c":true}"#), None);
        assert_eq!(err(&s, r#"{"c":true,"b":"x","a":1}"#), None);
        assert_eq!(err(&s, r#"{"b":"x","c":true,"a":1}"#), None);
        assert_eq!(
            err(&s, r#"{"b":"x","a":1}"#).as_deref(),
            Some("/c is required")
        );
        assert_eq!(
            err(&s, r#"{"c":true,"b":"x"}"#).as_deref(),
            Some("/a is required")
        );
        assert_eq!(
            err(&s, r#"{"c":true,"a":1,"c":false}"#).as_deref(),
            Some("/c appears more than once")
        );
        assert_eq!(
            err(&s, r#"{"c":true,"a":"1"}"#).as_deref(),
            Some("/a must be of type integer")
        );
        assert_eq!(
            err(&s, r#"{"c":true,"a":1,"d":0}"#).as_deref(),
            Some("/d is not an allowed property")
        );
    }
}
