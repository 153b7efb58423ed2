//! JSON Schema subset as `const` data: emitted for `tools/list`, checked
//! against raw arguments without allocating.
//!
//! A [`Schema`] is plain data built with `const fn`s, so a tool's schema lives
//! in flash:
//!
//! ```
//! use picomcp::schema::{Property, Schema};
//!
//! const TOP_ARGS: Schema = Schema::object(&[Property::new(
//!     "n",
//!     Schema::integer().minimum(0).maximum(50),
//! )])
//! .required(&["n"]);
//!
//! let mut buf = [0u8; 128];
//! let mut w = picomcp::wire::emit::Writer::new(&mut buf);
//! TOP_ARGS.write(&mut w);
//! let n = w.finish().unwrap();
//! assert_eq!(
//!     &buf[..n],
//!     br#"{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":50}},"required":["n"]}"#
//! );
//! ```
//!
//! Supported keywords: `type` (one type or a union such as
//! `["string","null"]`), `properties`, `required`, `additionalProperties`
//! (boolean), `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`, `multipleOf` (integers), `minLength`/`maxLength`
//! (counted in Unicode characters), `items`, `minItems`/`maxItems`; `title`,
//! `description` and `default` are emitted only. Checking never coerces: `"3"`
//! is not an integer; `1.0` is (as JSON Schema says). A declared property that
//! appears twice in one object is rejected, so the check and the handler can
//! never see different values.

use core::fmt;

use crate::wire::emit::{Decimal, Writer};
use crate::wire::json::{JsonStr, Kind, Number, Value};

/// A set of JSON Schema types (`type` keyword). Empty means "any type".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Types(u8);

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

    const NAMES: [(Types, &'static str); 7] = [
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

    fn count(self) -> u32 {
        self.0.count_ones()
    }

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

    fn write(self, w: &mut Writer<'_>) {
        match self {
            Bound::Int(i) => w.i64(i),
            Bound::Number(n) => w.raw(n.raw().as_bytes()),
        }
    }

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

impl Literal<'_> {
    fn write(self, w: &mut Writer<'_>) {
        match self {
            Literal::Null => w.null(),
            Literal::Bool(b) => w.bool(b),
            Literal::Int(i) => w.i64(i),
            Literal::Str(s) => w.string(s),
        }
    }

    fn matches(self, v: &Value<'_>) -> bool {
        match self {
            Literal::Null => v.is_null(),
            Literal::Bool(b) => v.as_bool() == Some(b),
            Literal::Int(i) => v.as_number().and_then(|n| n.as_i64()) == Some(i),
            Literal::Str(s) => v.as_str().is_some_and(|j| j.eq_str(s)),
        }
    }
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

/// One entry of `properties`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Property<'s> {
    /// The property name.
    pub name: &'s str,
    /// Its schema.
    pub schema: Schema<'s>,
}

impl<'s> Property<'s> {
    /// A property.
    pub const fn new(name: &'s str, schema: Schema<'s>) -> Self {
        Self { name, schema }
    }
}

/// A JSON Schema (the supported subset), as `const` data.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Schema<'s> {
    /// `type`.
    pub types: Types,
    /// `title` (emitted only).
    pub title: Option<&'s str>,
    /// `description` (emitted only).
    pub description: Option<&'s str>,
    /// `properties`, in emission order.
    pub properties: &'s [Property<'s>],
    /// `required`.
    pub required: &'s [&'s str],
    /// `additionalProperties` (absent: allowed).
    pub additional_properties: Option<bool>,
    /// `enum` (empty: absent).
    pub enum_values: &'s [Literal<'s>],
    /// `const`.
    pub const_value: Option<Literal<'s>>,
    /// `minimum`.
    pub minimum: Option<Bound<'s>>,
    /// `maximum`.
    pub maximum: Option<Bound<'s>>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: Option<Bound<'s>>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: Option<Bound<'s>>,
    /// `multipleOf`, for integers.
    pub multiple_of: Option<u64>,
    /// `minLength`, in characters.
    pub min_length: Option<u32>,
    /// `maxLength`, in characters.
    pub max_length: Option<u32>,
    /// `items`.
    pub items: Option<&'s Schema<'s>>,
    /// `minItems`.
    pub min_items: Option<u32>,
    /// `maxItems`.
    pub max_items: Option<u32>,
    /// `default`, as raw JSON text (emitted only).
    pub default: Option<&'s str>,
}

/// How deep a schema may nest before the checker gives up (guards
/// self-referencing `static` schemas; the JSON scanner bounds input depth).
pub const MAX_SCHEMA_DEPTH: usize = 32;

impl<'s> Schema<'s> {
    /// `{}`: accepts anything.
    pub const ANY: Schema<'static> = Schema {
        types: Types::ANY,
        title: None,
        description: None,
        properties: &[],
        required: &[],
        additional_properties: None,
        enum_values: &[],
        const_value: None,
        minimum: None,
        maximum: None,
        exclusive_minimum: None,
        exclusive_maximum: None,
        multiple_of: None,
        min_length: None,
        max_length: None,
        items: None,
        min_items: None,
        max_items: None,
        default: None,
    };

    /// A schema of the given type(s).
    pub const fn of(types: Types) -> Self {
        Schema {
            types,
            ..Schema::ANY
        }
    }

    /// `{"type":"object","properties":{...}}`.
    pub const fn object(properties: &'s [Property<'s>]) -> Self {
        Schema {
            types: Types::OBJECT,
            properties,
            ..Schema::ANY
        }
    }

    /// `{"type":"string"}`.
    pub const fn string() -> Self {
        Self::of(Types::STRING)
    }

    /// `{"type":"integer"}`.
    pub const fn integer() -> Self {
        Self::of(Types::INTEGER)
    }

    /// `{"type":"number"}`.
    pub const fn number() -> Self {
        Self::of(Types::NUMBER)
    }

    /// `{"type":"boolean"}`.
    pub const fn boolean() -> Self {
        Self::of(Types::BOOLEAN)
    }

    /// `{"type":"null"}`.
    pub const fn null() -> Self {
        Self::of(Types::NULL)
    }

    /// `{"type":"array","items":...}`.
    pub const fn array(items: &'s Schema<'s>) -> Self {
        Schema {
            types: Types::ARRAY,
            items: Some(items),
            ..Schema::ANY
        }
    }

    /// Add `null` to the accepted types (`["string","null"]`).
    pub const fn nullable(mut self) -> Self {
        self.types = self.types.or(Types::NULL);
        self
    }

    /// Set `title`.
    pub const fn title(mut self, title: &'s str) -> Self {
        self.title = Some(title);
        self
    }

    /// Set `description`.
    pub const fn description(mut self, description: &'s str) -> Self {
        self.description = Some(description);
        self
    }

    /// Set `required`.
    pub const fn required(mut self, names: &'s [&'s str]) -> Self {
        self.required = names;
        self
    }

    /// Set `additionalProperties`.
    pub const fn additional_properties(mut self, allowed: bool) -> Self {
        self.additional_properties = Some(allowed);
        self
    }

    /// Set `enum`.
    pub const fn enum_values(mut self, values: &'s [Literal<'s>]) -> Self {
        self.enum_values = values;
        self
    }

    /// Set `const`.
    pub const fn const_value(mut self, value: Literal<'s>) -> Self {
        self.const_value = Some(value);
        self
    }

    /// Set an integer `minimum`.
    pub const fn minimum(mut self, n: i64) -> Self {
        self.minimum = Some(Bound::Int(n));
        self
    }

    /// Set an integer `maximum`.
    pub const fn maximum(mut self, n: i64) -> Self {
        self.maximum = Some(Bound::Int(n));
        self
    }

    /// Set `minimum` to any JSON number written as text: `"0.5"`, `"-1e-3"`.
    ///
    /// # Panics
    ///
    /// If `text` is not a JSON number; in a `const` that is a compile error.
    pub const fn minimum_decimal(mut self, text: &'s str) -> Self {
        self.minimum = Some(Bound::decimal(text));
        self
    }

    /// Set `maximum` to any JSON number written as text: `"99.5"`, `"1e6"`.
    ///
    /// # Panics
    ///
    /// If `text` is not a JSON number; in a `const` that is a compile error.
    pub const fn maximum_decimal(mut self, text: &'s str) -> Self {
        self.maximum = Some(Bound::decimal(text));
        self
    }

    /// Set `exclusiveMinimum`.
    pub const fn exclusive_minimum(mut self, bound: Bound<'s>) -> Self {
        self.exclusive_minimum = Some(bound);
        self
    }

    /// Set `exclusiveMaximum`.
    pub const fn exclusive_maximum(mut self, bound: Bound<'s>) -> Self {
        self.exclusive_maximum = Some(bound);
        self
    }

    /// Set `multipleOf` (integers).
    pub const fn multiple_of(mut self, n: u64) -> Self {
        self.multiple_of = Some(n);
        self
    }

    /// Set `minLength` (characters).
    pub const fn min_length(mut self, n: u32) -> Self {
        self.min_length = Some(n);
        self
    }

    /// Set `maxLength` (characters).
    pub const fn max_length(mut self, n: u32) -> Self {
        self.max_length = Some(n);
        self
    }

    /// Set `minItems`.
    pub const fn min_items(mut self, n: u32) -> Self {
        self.min_items = Some(n);
        self
    }

    /// Set `maxItems`.
    pub const fn max_items(mut self, n: u32) -> Self {
        self.max_items = Some(n);
        self
    }

    /// Set `default` (raw JSON text, emitted only).
    pub const fn default_json(mut self, json: &'s str) -> Self {
        self.default = Some(json);
        self
    }

    /// Write the schema as JSON.
    pub fn write(&self, w: &mut Writer<'_>) {
        self.write_at(w, 0);
    }

    /// A self-referencing `static` schema is cut at [`MAX_SCHEMA_DEPTH`]
    /// (written as `{}`, "anything"), as the checker stops there too.
    fn write_at(&self, w: &mut Writer<'_>, depth: usize) {
        if depth > MAX_SCHEMA_DEPTH {
            w.raw(b"{}");
            return;
        }
        w.raw(b"{");
        let mut first = true;
        let mut key = |w: &mut Writer<'_>, k: &str| {
            if !first {
                w.raw(b",");
            }
            first = false;
            w.string(k);
            w.raw(b":");
        };
        if self.types.count() == 1 {
            key(w, "type");
            for (t, name) in Types::NAMES {
                if self.types.contains(t) {
                    w.string(name);
                }
            }
        } else if self.types.count() > 1 {
            key(w, "type");
            w.raw(b"[");
            let mut first_t = true;
            for (t, name) in Types::NAMES {
                if self.types.contains(t) {
                    if !first_t {
                        w.raw(b",");
                    }
                    first_t = false;
                    w.string(name);
                }
            }
            w.raw(b"]");
        }
        if let Some(t) = self.title {
            key(w, "title");
            w.string(t);
        }
        if let Some(d) = self.description {
            key(w, "description");
            w.string(d);
        }
        // An object schema always lists its properties (MCP clients expect
        // `properties` on every `inputSchema`, even when empty).
        if !self.properties.is_empty() || self.types == Types::OBJECT {
            key(w, "properties");
            w.raw(b"{");
            for (i, p) in self.properties.iter().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                w.string(p.name);
                w.raw(b":");
                p.schema.write_at(w, depth + 1);
            }
            w.raw(b"}");
        }
        if !self.required.is_empty() {
            key(w, "required");
            w.raw(b"[");
            for (i, r) in self.required.iter().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                w.string(r);
            }
            w.raw(b"]");
        }
        if let Some(a) = self.additional_properties {
            key(w, "additionalProperties");
            w.bool(a);
        }
        if !self.enum_values.is_empty() {
            key(w, "enum");
            w.raw(b"[");
            for (i, l) in self.enum_values.iter().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                l.write(w);
            }
            w.raw(b"]");
        }
        if let Some(c) = self.const_value {
            key(w, "const");
            c.write(w);
        }
        let bounds = [
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("exclusiveMinimum", self.exclusive_minimum),
            ("exclusiveMaximum", self.exclusive_maximum),
        ];
        for (name, b) in bounds {
            if let Some(b) = b {
                key(w, name);
                b.write(w);
            }
        }
        if let Some(m) = self.multiple_of {
            key(w, "multipleOf");
            w.u64(m);
        }
        let counts = [
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
        ];
        for (name, c) in counts {
            if let Some(c) = c {
                key(w, name);
                w.u64(u64::from(c));
            }
        }
        if let Some(items) = self.items {
            key(w, "items");
            items.write_at(w, depth + 1);
        }
        let counts = [("minItems", self.min_items), ("maxItems", self.max_items)];
        for (name, c) in counts {
            if let Some(c) = c {
                key(w, name);
                w.u64(u64::from(c));
            }
        }
        if let Some(d) = self.default {
            key(w, "default");
            w.raw_str(d);
        }
        w.raw(b"}");
    }

    /// Check `value` against this schema; the first violation found, in
    /// document order (required properties are checked before members).
    pub fn validate<'a>(&'s self, value: &Value<'a>) -> Result<(), Violation<'s, 'a>>
    where
        's: 'a,
    {
        let mut path = PathBuf::new();
        let mut found = None;
        match (check(self, value, &mut path, 0, &mut found), found) {
            (false, Some(v)) => Err(v),
            _ => Ok(()),
        }
    }
}

/// One step of a JSON pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seg<'a> {
    Key(JsonStr<'a>),
    Name(&'a str),
    Index(usize),
}

/// Bounded path from the root to the value being checked.
const MAX_PATH: usize = 8;

#[derive(Clone, Copy, Debug)]
struct PathBuf<'a> {
    segs: [Option<Seg<'a>>; MAX_PATH],
    len: usize,
}

impl<'a> PathBuf<'a> {
    fn new() -> Self {
        Self {
            segs: [None; MAX_PATH],
            len: 0,
        }
    }

    fn push(&mut self, s: Seg<'a>) {
        if let Some(slot) = self.segs.get_mut(self.len) {
            *slot = Some(s);
        }
        self.len += 1;
    }

    fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
        if let Some(slot) = self.segs.get_mut(self.len) {
            *slot = None;
        }
    }
}

/// The constraint a value broke.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Constraint<'s> {
    /// Wrong JSON type.
    Type(Types),
    /// A required property is missing (the path names it).
    Required,
    /// A property not allowed by `additionalProperties: false`.
    NotAllowed,
    /// A declared property appears twice in the object.
    Duplicate,
    /// Not one of the `enum` values.
    Enum(&'s [Literal<'s>]),
    /// Not the `const` value.
    Const(Literal<'s>),
    /// Below `minimum`.
    Minimum(Bound<'s>),
    /// Above `maximum`.
    Maximum(Bound<'s>),
    /// Not above `exclusiveMinimum`.
    ExclusiveMinimum(Bound<'s>),
    /// Not below `exclusiveMaximum`.
    ExclusiveMaximum(Bound<'s>),
    /// Not a multiple of `multipleOf`.
    MultipleOf(u64),
    /// Shorter than `minLength`.
    MinLength(u32),
    /// Longer than `maxLength`.
    MaxLength(u32),
    /// Fewer than `minItems`.
    MinItems(u32),
    /// More than `maxItems`.
    MaxItems(u32),
    /// Nested deeper than [`MAX_SCHEMA_DEPTH`].
    TooDeep,
}

/// Where the arguments broke the schema, and how.
///
/// Displays as `PATH CONSTRAINT`, e.g. `/n must be <= 50`, `/title is
/// required`, `/tags/2 must be of type string`.
#[derive(Clone, Copy, Debug)]
pub struct Violation<'s, 'a> {
    path: PathBuf<'a>,
    /// The broken constraint.
    pub constraint: Constraint<'s>,
}

impl fmt::Display for Violation<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.len == 0 {
            f.write_str("/")?;
        }
        for seg in self
            .path
            .segs
            .iter()
            .take(self.path.len.min(MAX_PATH))
            .flatten()
        {
            f.write_str("/")?;
            match seg {
                Seg::Key(k) => {
                    for c in k.chars() {
                        pointer_char(f, c)?;
                    }
                }
                Seg::Name(n) => {
                    for c in n.chars() {
                        pointer_char(f, c)?;
                    }
                }
                Seg::Index(i) => Decimal::from(*i).fmt(f)?,
            }
        }
        if self.path.len > MAX_PATH {
            f.write_str("/...")?;
        }
        // Plain `write_str` and `Display::fmt` calls rather than `write!`:
        // no format arguments to build, less flash on a microcontroller.
        // `text`, then a value, then `tail`: plain `write_str`/`fmt` calls
        // rather than `write!` (no format arguments, less flash).
        let count;
        let (text, then, tail): (&str, Option<&dyn fmt::Display>, &str) = match &self.constraint {
            Constraint::Type(t) => (" must be of type ", Some(t), ""),
            Constraint::Required => (" is required", None, ""),
            Constraint::NotAllowed => (" is not an allowed property", None, ""),
            Constraint::Duplicate => (" appears more than once", None, ""),
            Constraint::Enum(values) => {
                f.write_str(" must be one of ")?;
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    v.fmt(f)?;
                }
                return Ok(());
            }
            Constraint::Const(v) => (" must be ", Some(v), ""),
            Constraint::Minimum(b) => (" must be >= ", Some(b), ""),
            Constraint::Maximum(b) => (" must be <= ", Some(b), ""),
            Constraint::ExclusiveMinimum(b) => (" must be > ", Some(b), ""),
            Constraint::ExclusiveMaximum(b) => (" must be < ", Some(b), ""),
            Constraint::MultipleOf(m) => {
                count = Decimal::from(*m);
                (" must be a multiple of ", Some(&count), "")
            }
            Constraint::MinLength(n)
            | Constraint::MaxLength(n)
            | Constraint::MinItems(n)
            | Constraint::MaxItems(n) => {
                count = Decimal::from(*n);
                let (text, tail) = match self.constraint {
                    Constraint::MinLength(_) => (" must be at least ", " characters long"),
                    Constraint::MaxLength(_) => (" must be at most ", " characters long"),
                    Constraint::MinItems(_) => (" must have at least ", " items"),
                    _ => (" must have at most ", " items"),
                };
                (text, Some(&count), tail)
            }
            Constraint::TooDeep => (" is nested too deeply", None, ""),
        };
        f.write_str(text)?;
        if let Some(d) = then {
            d.fmt(f)?;
        }
        f.write_str(tail)
    }
}

/// JSON Pointer escaping (`~` → `~0`, `/` → `~1`).
fn pointer_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    match c {
        '~' => f.write_str("~0"),
        '/' => f.write_str("~1"),
        c => fmt::Write::write_char(f, c),
    }
}

/// Record the first violation; `false` stops the walk. The violation travels
/// through this slot rather than up the recursion, so each level's stack frame
/// stays small.
fn fail<'s, 'a>(
    found: &mut Option<Violation<'s, 'a>>,
    path: &PathBuf<'a>,
    constraint: Constraint<'s>,
) -> bool {
    *found = Some(Violation {
        path: *path,
        constraint,
    });
    false
}

// Recursion here follows the *schema's* nesting (static, developer-written),
// capped at MAX_SCHEMA_DEPTH; input depth is already bounded by the scanner.
fn check<'s: 'a, 'a>(
    s: &'s Schema<'s>,
    v: &Value<'a>,
    path: &mut PathBuf<'a>,
    depth: usize,
    found: &mut Option<Violation<'s, 'a>>,
) -> bool {
    if depth > MAX_SCHEMA_DEPTH {
        return fail(found, path, Constraint::TooDeep);
    }
    if !s.types.accepts(v) {
        return fail(found, path, Constraint::Type(s.types));
    }
    if !s.enum_values.is_empty() && !s.enum_values.iter().any(|l| l.matches(v)) {
        return fail(found, path, Constraint::Enum(s.enum_values));
    }
    if let Some(c) = s.const_value
        && !c.matches(v)
    {
        return fail(found, path, Constraint::Const(c));
    }
    match v.kind() {
        Kind::Number => check_number(s, v, path, found),
        Kind::String if s.min_length.is_none() && s.max_length.is_none() => true,
        Kind::String => {
            let n = v.as_str().map_or(0, |j| j.char_count());
            if let Some(min) = s.min_length
                && n < min as usize
            {
                return fail(found, path, Constraint::MinLength(min));
            }
            if let Some(max) = s.max_length
                && n > max as usize
            {
                return fail(found, path, Constraint::MaxLength(max));
            }
            true
        }
        Kind::Array => {
            let n = v.len();
            if let Some(min) = s.min_items
                && n < min as usize
            {
                return fail(found, path, Constraint::MinItems(min));
            }
            if let Some(max) = s.max_items
                && n > max as usize
            {
                return fail(found, path, Constraint::MaxItems(max));
            }
            if let Some(items) = s.items {
                for (i, item) in v.items().enumerate() {
                    path.push(Seg::Index(i));
                    if !check(items, &item, path, depth + 1, found) {
                        return false;
                    }
                    path.pop();
                }
            }
            true
        }
        Kind::Object => check_object(s, v, path, depth, found),
        _ => true,
    }
}

fn check_number<'s, 'a>(
    s: &'s Schema<'s>,
    v: &Value<'a>,
    path: &PathBuf<'a>,
    found: &mut Option<Violation<'s, 'a>>,
) -> bool {
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
    if let Some(b) = s.minimum
        && below(b, true)
    {
        return fail(found, path, Constraint::Minimum(b));
    }
    if let Some(b) = s.maximum
        && above(b, true)
    {
        return fail(found, path, Constraint::Maximum(b));
    }
    if let Some(b) = s.exclusive_minimum
        && below(b, false)
    {
        return fail(found, path, Constraint::ExclusiveMinimum(b));
    }
    if let Some(b) = s.exclusive_maximum
        && above(b, false)
    {
        return fail(found, path, Constraint::ExclusiveMaximum(b));
    }
    if let Some(m) = s.multiple_of {
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
            return fail(found, path, Constraint::MultipleOf(m));
        }
    }
    true
}

fn check_object<'s: 'a, 'a>(
    s: &'s Schema<'s>,
    v: &Value<'a>,
    path: &mut PathBuf<'a>,
    depth: usize,
    found: &mut Option<Violation<'s, 'a>>,
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
    if tracked {
        for (key, member) in v.members() {
            let declared = s.properties.iter().position(|p| key.eq_str(p.name));
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
    let present = |name: &str| match s.properties.iter().position(|p| p.name == name) {
        Some(i) if tracked => seen & (1u64 << i) != 0,
        _ => v.get(name).is_some(),
    };
    for name in s.required {
        if !present(name) {
            path.push(Seg::Name(name));
            let r = fail(found, path, Constraint::Required);
            path.pop();
            return r;
        }
    }
    let walk_again = !tracked || count > KEPT;
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
                    let declared = s.properties.iter().position(|p| key.eq_str(p.name));
                    (key, member, declared)
                }
                None => break,
            },
        };
        let declared = declared.and_then(|i| s.properties.get(i).map(|p| (i, p)));
        path.push(Seg::Key(key));
        match declared {
            Some((i, p)) => {
                let duplicated = if tracked {
                    twice & (1u64 << i) != 0
                } else {
                    v.members().filter(|(k, _)| k.eq_str(p.name)).count() > 1
                };
                if duplicated {
                    return fail(found, path, Constraint::Duplicate);
                }
                if !check(&p.schema, &member, path, depth + 1, found) {
                    return false;
                }
            }
            None if s.additional_properties == Some(false) => {
                return fail(found, path, Constraint::NotAllowed);
            }
            None => {}
        }
        path.pop();
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::Limits;
    use std::string::{String, ToString};

    const TOP: Schema =
        Schema::object(&[Property::new("n", Schema::integer().minimum(0).maximum(50))])
            .required(&["n"]);

    const ITEM: Schema = Schema::string().min_length(2).max_length(3);
    const RICH: Schema = Schema::object(&[
        Property::new("name", Schema::string().nullable()),
        Property::new("tags", Schema::array(&ITEM).min_items(1).max_items(2)),
        Property::new(
            "color",
            Schema::string().enum_values(&[Literal::Str("red"), Literal::Str("green")]),
        ),
        Property::new("even", Schema::integer().multiple_of(2)),
        Property::new(
            "ratio",
            Schema::number()
                .exclusive_minimum(Bound::Int(0))
                .exclusive_maximum(Bound::decimal("1.5")),
        ),
        Property::new("kind", Schema::string().const_value(Literal::Str("book"))),
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
    fn emits_schema_text() {
        let mut buf = [0u8; 512];
        let mut w = Writer::new(&mut buf);
        Schema::string()
            .nullable()
            .description("d")
            .default_json("null")
            .write(&mut w);
        let n = w.finish().unwrap();
        assert_eq!(
            &buf[..n],
            br#"{"type":["string","null"],"description":"d","default":null}"#
        );
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

    static LOOP: Schema = Schema {
        items: Some(&LOOP),
        ..Schema::of(Types::ARRAY)
    };

    #[test]
    fn self_referencing_schema_is_emitted_bounded() {
        let mut buf = std::vec![0u8; 4096];
        let mut w = Writer::new(&mut buf);
        LOOP.write(&mut w);
        let n = w.finish().unwrap();
        assert!(Value::parse(&buf[..n], &Limits::DEFAULT.max_depth(64)).is_ok());
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
        let s = Schema::number().minimum(-3).maximum(i64::MAX);
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
        let half = Schema::number()
            .minimum_decimal("0.5")
            .maximum_decimal("1e3");
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
        let even = Schema::integer().multiple_of(u64::MAX);
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
            Property::new("z", Schema::string().max_length(1)),
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
}
