//! JSON Schema subset as `const` data: emitted for `tools/list`, checked
//! against raw arguments without allocating.
//!
//! A [`Schema`] is plain data built with `const fn`s, so a tool's schema lives
//! in flash:
//!
//! ```
//! use picomcp::schema::{Keywords, Property, Schema};
//!
//! const TOP_ARGS: Schema = Schema::object(&[Property::new(
//!     "n",
//!     Schema::integer().with(&Keywords::new().minimum(0).maximum(50)),
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
//! # Keywords
//!
//! Checked (before the handler runs, for `inputSchema`; for `outputSchema`
//! after it): `type` (one type or a union such as `["string","null"]`),
//! `properties`, `required`, `additionalProperties` (boolean; as 2020-12
//! says, it sees only the `properties` of its own schema object, not those
//! of an `allOf` branch), `enum`, `const`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` (integers),
//! `minLength`/`maxLength` (counted in Unicode characters), `items`,
//! `minItems`/`maxItems`, and from JSON Schema 2020-12 (a [`Composition`])
//! `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`.
//!
//! Listed only (written to `tools/list`, never checked): `title`,
//! `description`, `x-mcp-header` ([`Schema::header`]), `default`,
//! `$schema`; `$defs` and `$anchor` are listed
//! and used only to resolve a `$ref` (a definition no `$ref` reaches is
//! never checked).
//!
//! `$ref` is local: `#` (the root schema), `#/$defs/NAME` (a definition of
//! the root; `NAME` compared as written, no `~1`/`%` decoding) and `#ANCHOR`
//! (an `$anchor` on the root or on one of the root's definitions). Any other
//! reference (a URL, `other.json#...`, `#/properties/x`, a nested `$defs`,
//! an anchor deeper down) is listed as written but **refused**: no value
//! passes it, the answer being `/x cannot be checked: $ref "..." does not
//! resolve`. The root is the schema `validate` is called on, the tool's
//! `inputSchema` or `outputSchema`.
//!
//! Not expressible (no field): `$id`, `$dynamicRef`, `$comment`,
//! `patternProperties`, `propertyNames`, `dependentRequired`,
//! `dependentSchemas`, `unevaluatedProperties`/`unevaluatedItems`,
//! `prefixItems`, `contains`, `pattern`, `format`, boolean subschemas
//! ([`Schema::ANY`] is `{}`, which is `true`).
//!
//! Checking never coerces: `"3"` is not an integer; `1.0` is (as JSON Schema
//! says). A declared property that appears twice in one object is rejected,
//! so the check and the handler can never see different values. The first
//! violation is reported, in document order, with its JSON pointer:
//! `/n must be <= 50`; inside `allOf`, `$ref`, `then` and `else` the
//! violation of the subschema itself (`/address/city must be of type
//! string`, `/phone is required`); `/x must match at least one schema of
//! anyOf`, `/x must match exactly one schema of oneOf (it matches 2)`, `/x
//! must not match the schema in not`.
//!
//! Keys are written in one fixed order: `$schema`, `$anchor`, `$ref`,
//! `type`, `title`, `description`, `x-mcp-header`, `properties`, `required`,
//! `additionalProperties`, `enum`, `const`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength`,
//! `maxLength`, `items`, `minItems`, `maxItems`, `default`, `allOf`, `anyOf`,
//! `oneOf`, `not`, `if`, `then`, `else`, `$defs`.
//!
//! # JSON Schema 2020-12 keywords
//!
//! They sit behind one pointer, [`Schema::composition`], so a schema that
//! uses none of them is one pointer larger, and their code is linked only
//! when some schema has a [`Composition`]:
//!
//! ```
//! use picomcp::schema::{Composition, DRAFT_2020_12, Def, Property, Schema};
//!
//! const POINT: Schema = Schema::object(&[
//!     Property::new("x", Schema::integer()),
//!     Property::new("y", Schema::integer()),
//! ])
//! .required(&["x", "y"]);
//!
//! const ARGS: Schema = Schema::object(&[
//!     Property::new("at", Schema::ANY.composition(&Composition::new().reference("#/$defs/point"))),
//!     Property::new("zoom", Schema::integer()),
//! ])
//! .additional_properties(false)
//! .composition(
//!     &Composition::new()
//!         .dialect(DRAFT_2020_12)
//!         .defs(&[Def::new("point", &POINT)])
//!         .any_of(&[Schema::ANY.required(&["at"]), Schema::ANY.required(&["zoom"])]),
//! );
//!
//! let check = |json: &str| {
//!     let v = picomcp::wire::json::Value::parse(json.as_bytes(), &Default::default()).unwrap();
//!     ARGS.validate(&v).map_err(|e| e.to_string())
//! };
//! assert_eq!(check(r#"{"at":{"x":1,"y":2}}"#), Ok(()));
//! assert_eq!(check(r#"{"at":{"x":1}}"#).unwrap_err(), "/at/y is required");
//! assert_eq!(check(r#"{}"#).unwrap_err(), "/ must match at least one schema of anyOf");
//! ```
//!
//! Each `$ref` and each applicator counts one level towards
//! [`MAX_SCHEMA_DEPTH`], like a property or `items`: a `$ref` cycle that
//! never reaches a value (`$defs: {a: {$ref: "#/$defs/a"}}`) ends there with
//! `/ is nested too deeply`, as does a branch of `anyOf`, `oneOf`, `not` or
//! `if` that does (never read as "does not match"), and a recursive
//! definition checks about `MAX_SCHEMA_DEPTH / 2` levels of input.

// `emit`: a schema as JSON text; `check`: the argument checker;
// `violation`: what broke a schema and where, and its message.
mod check;
mod compose;
#[doc(hidden)]
pub mod derived;
mod emit;
mod violation;
mod vocab;

use core::fmt;
use core::marker::PhantomData;

use crate::wire::emit::Writer;
use crate::wire::json::Value;
use violation::PathBuf;

pub use violation::{Constraint, Violation};
pub use vocab::{Bound, Literal, Types};

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
    /// `x-mcp-header` (2026-07-28, emitted only): over Streamable HTTP the
    /// client mirrors this property's argument into the header
    /// `Mcp-Param-{NAME}`, which [`crate::http`] checks against the body.
    pub header: Option<&'s str>,
    /// `properties`, in emission order.
    pub properties: &'s [Property<'s>],
    /// `required`.
    pub required: &'s [&'s str],
    /// `additionalProperties` (absent: allowed).
    pub additional_properties: Option<bool>,
    /// `items`.
    pub items: Option<&'s Schema<'s>>,
    /// The value keywords (`enum`, `const`, the bounds, `multipleOf`, the
    /// lengths and item counts, `default`), behind one pointer so a schema
    /// that uses none of them stays small: see [`Keywords`].
    pub keywords: Option<&'s Keywords<'s>>,
    /// The JSON Schema 2020-12 core and applicator keywords (`$schema`,
    /// `$defs`, `$anchor`, `$ref`, `allOf`, `anyOf`, `oneOf`, `not`,
    /// `if`/`then`/`else`), behind one pointer so a schema that uses none of
    /// them stays small.
    pub composition: Option<&'s Composition<'s>>,
}

/// One entry of `$defs`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Def<'s> {
    /// The name (`#/$defs/NAME` refers to it, compared as written).
    pub name: &'s str,
    /// Its schema.
    pub schema: &'s Schema<'s>,
}

impl<'s> Def<'s> {
    /// A definition.
    pub const fn new(name: &'s str, schema: &'s Schema<'s>) -> Self {
        Self { name, schema }
    }
}

/// The JSON Schema 2020-12 keywords of a [`Schema`] beyond the validation
/// vocabulary: `$schema`, `$defs`, `$anchor`, `$ref`, `allOf`, `anyOf`,
/// `oneOf`, `not`, `if`, `then`, `else`. Built with
/// [`Composition::new`] and its `const` builders, attached with
/// [`Schema::composition`].
///
/// The code that checks and writes these keywords is reached through a
/// pointer that only [`Composition::new`] stores, so a program none of whose
/// schemas has a `Composition` does not link it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Composition<'s> {
    /// `$schema`: the dialect URI (emitted only), e.g. [`DRAFT_2020_12`].
    pub dialect: Option<&'s str>,
    /// `$anchor` (a `$ref` of `#NAME` finds it on the root schema or on a
    /// schema of the root's `$defs`).
    pub anchor: Option<&'s str>,
    /// `$ref`: `#`, `#/$defs/NAME` or `#ANCHOR`, resolved against the root
    /// schema; any other reference fails the check.
    pub reference: Option<&'s str>,
    /// `$defs`, in emission order.
    pub defs: &'s [Def<'s>],
    /// `allOf` (empty: absent).
    pub all_of: &'s [Schema<'s>],
    /// `anyOf` (empty: absent).
    pub any_of: &'s [Schema<'s>],
    /// `oneOf` (empty: absent).
    pub one_of: &'s [Schema<'s>],
    /// `not`.
    pub not: Option<&'s Schema<'s>>,
    /// `if`.
    pub if_: Option<&'s Schema<'s>>,
    /// `then` (used only with `if`).
    pub then: Option<&'s Schema<'s>>,
    /// `else` (used only with `if`).
    pub else_: Option<&'s Schema<'s>>,
    ops: Ops,
}

/// The JSON Schema 2020-12 dialect URI, for [`Composition::dialect`].
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// What the checker carries down a walk: the root (for `$ref`), the path to
/// the value being checked and the first violation.
struct Walk<'s, 'a> {
    root: &'s Schema<'s>,
    path: PathBuf<'a>,
    found: Option<Violation<'s, 'a>>,
    /// `'s: 'a`, implied wherever a `Walk` is an argument (so the function
    /// pointers of [`Ops`] can carry the bound).
    outlives: PhantomData<&'a &'s ()>,
}

/// The code for a [`Composition`]'s keywords (in `compose.rs`), reached only
/// through this pointer pair so it is linked only when some schema has a
/// `Composition`.
#[derive(Clone, Copy)]
struct Ops {
    /// Check a value against the composition's keywords.
    check: for<'s, 'a> fn(&'s Composition<'s>, &Value<'a>, usize, &mut Walk<'s, 'a>) -> bool,
    /// Write the keywords that come before (`true`: `$schema`, `$anchor`,
    /// `$ref`) or after (`false`) the validation keywords.
    write: fn(&Composition<'_>, &mut Writer<'_>, usize, &mut bool, bool),
}

impl fmt::Debug for Ops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ops")
    }
}

/// There is one `Ops` value (what [`Composition::new`] stores).
impl PartialEq for Ops {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The value keywords of a [`Schema`]: `enum`, `const`, `minimum`,
/// `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
/// `minLength`, `maxLength`, `minItems`, `maxItems` and `default`. A schema
/// holds them behind one pointer ([`Schema::with`]): most schemas use none,
/// and on a microcontroller each schema is then about 150 B smaller in
/// flash. Built with `const fn`s, in place: in a `const` the reference is
/// promoted to `'static`.
///
/// ```
/// use picomcp::schema::{Keywords, Schema};
///
/// const N: Schema = Schema::integer().with(&Keywords::new().minimum(0).maximum(50));
/// assert_eq!(N.value_keywords().maximum, Some(picomcp::schema::Bound::Int(50)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Keywords<'s> {
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
    /// `minItems`.
    pub min_items: Option<u32>,
    /// `maxItems`.
    pub max_items: Option<u32>,
    /// `default`, as raw JSON text (emitted only).
    pub default: Option<&'s str>,
}

impl<'s> Keywords<'s> {
    /// No value keyword.
    pub const NONE: Keywords<'static> = Keywords {
        enum_values: &[],
        const_value: None,
        minimum: None,
        maximum: None,
        exclusive_minimum: None,
        exclusive_maximum: None,
        multiple_of: None,
        min_length: None,
        max_length: None,
        min_items: None,
        max_items: None,
        default: None,
    };

    /// No value keyword, to build on.
    #[must_use]
    pub const fn new() -> Self {
        Keywords::NONE
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
}

impl Default for Keywords<'_> {
    fn default() -> Self {
        Keywords::NONE
    }
}

// The size the README and `Keywords`' docs state for a 32-bit target,
// checked wherever the library is built for one (CI's no_std builds).
#[cfg(target_pointer_width = "32")]
const _: () = assert!(core::mem::size_of::<Schema<'static>>() == 56);

/// How deep a schema may nest before the checker gives up (guards
/// self-referencing `static` schemas and `$ref` cycles; the JSON scanner
/// bounds input depth).
pub const MAX_SCHEMA_DEPTH: usize = 32;

impl<'s> Schema<'s> {
    /// `{}`: accepts anything.
    pub const ANY: Schema<'static> = Schema {
        types: Types::ANY,
        title: None,
        description: None,
        header: None,
        properties: &[],
        required: &[],
        additional_properties: None,
        items: None,
        keywords: None,
        composition: None,
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

    /// Add `null` to the accepted types (`["string","null"]`; a schema
    /// without `type` already accepts `null` and stays so). With `enum` or
    /// `const`, `null` must be one of their values too; for a schema with
    /// those, or with applicators, `anyOf` it and [`Schema::null`] instead.
    pub const fn nullable(mut self) -> Self {
        if self.types.0 != Types::ANY.0 {
            self.types = self.types.or(Types::NULL);
        }
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

    /// Set `x-mcp-header` (2026-07-28): clients calling over Streamable
    /// HTTP send this property's argument in the header `Mcp-Param-{name}`
    /// as well, for intermediaries to route on, and the server refuses a
    /// header that does not match the body (see [`crate::http`]).
    ///
    /// The spec's rules for it, which are not checked here: `name` is an
    /// HTTP token (`1*tchar`), unique among the schema's `x-mcp-header`
    /// values ignoring case; the property is a string, an integer or a
    /// boolean (not a number), reached from the root through `properties`
    /// only (not `items`, a composition, a conditional or a `$ref`: an
    /// annotation there is not enforced by [`crate::http`], and a client
    /// drops a tool that has one).
    pub const fn header(mut self, name: &'s str) -> Self {
        self.header = Some(name);
        self
    }

    /// Set `properties` (without setting `type`: for a subschema such as
    /// the `if` of an object, which applies only when the value is one).
    pub const fn properties(mut self, properties: &'s [Property<'s>]) -> Self {
        self.properties = properties;
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

    /// Attach the value keywords of `keywords` (`enum`, `const`,
    /// `minimum`, …, `default`), replacing any attached before:
    /// `Schema::integer().with(&Keywords::new().minimum(0).maximum(50))`.
    pub const fn with(mut self, keywords: &'s Keywords<'s>) -> Self {
        self.keywords = Some(keywords);
        self
    }

    /// The value keywords ([`Keywords::NONE`] when none are attached).
    #[must_use]
    pub const fn value_keywords(&self) -> &'s Keywords<'s> {
        match self.keywords {
            Some(k) => k,
            None => &Keywords::NONE,
        }
    }

    /// Attach the 2020-12 keywords of `composition` (`$schema`, `$defs`,
    /// `$ref`, `allOf`, …).
    pub const fn composition(mut self, composition: &'s Composition<'s>) -> Self {
        self.composition = Some(composition);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{Schema, Types};

    /// The size the README and `Keywords`' docs state: the value keywords
    /// behind one pointer keep a schema small in flash.
    #[test]
    fn a_schema_is_small() {
        let want = if cfg!(target_pointer_width = "64") {
            112
        } else {
            56
        };
        assert_eq!(core::mem::size_of::<Schema<'static>>(), want);
    }

    /// A schema that contains itself (emission and checking both stop at
    /// `MAX_SCHEMA_DEPTH`).
    pub(super) static LOOP: Schema = Schema {
        items: Some(&LOOP),
        ..Schema::of(Types::ARRAY)
    };
}
