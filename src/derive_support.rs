//! What the derive macros (feature `derive`) generate code against, and the
//! [`tool!`](crate::tool!) macro that declares a tool in one place.
//!
//! Everything here also works without the derives: implement [`HasSchema`]
//! by hand (a `const` [`Schema`]) and [`WriteJson`] for your output type, and
//! [`tool!`](crate::tool!) builds the [`Tool`](crate::tool::Tool) the same way.
//!
//! | trait | derived by | gives |
//! |---|---|---|
//! | [`HasSchema`] | `ToolArgs`, `ToolOutput` | `const SCHEMA`: the JSON Schema, checked before the handler runs and listed by `tools/list` |
//! | [`WriteJson`] | `ToolOutput` | writes the value as JSON (`structuredContent`) |
//! | [`PromptArguments`] | `PromptArgs` | a prompt's `arguments` list and typed access to their values |

pub mod args;

use crate::prompt::{PromptArgument, PromptRequest};
use crate::schema::{Bound, Keywords, Schema};
use crate::tool::{Content, Reply, ToolOutcome};
use crate::wire::emit::ValueWriter;

/// A type with a `const` JSON Schema.
///
/// Derived by `#[derive(ToolArgs)]` and `#[derive(ToolOutput)]`; a nested
/// struct or enum field refers to its type's `SCHEMA`.
pub trait HasSchema {
    /// The schema, as `const` data.
    const SCHEMA: Schema<'static>;

    /// A check of arguments against `SCHEMA` written for this type by
    /// `#[derive(ToolArgs)]` (see [`args`]): it says only "surely valid"
    /// or "not sure", and the server runs the full check on "not sure".
    /// A hand-written impl leaves the default, `None`.
    #[doc(hidden)]
    const ARGS_CHECK: Option<&'static args::ArgsCheck> = None;
}

/// A value that writes itself as one JSON value (derived by
/// `#[derive(ToolOutput)]`; implemented here for the field types the derive
/// supports).
pub trait WriteJson {
    /// A schema that every value `write_json` writes is guaranteed to match,
    /// by construction. When a tool's output schema is this one, the server
    /// skips re-checking the structured content it finishes with
    /// [`ContentExt::finish_output`].
    ///
    /// `#[derive(ToolOutput)]` sets it to the type's own schema when nothing
    /// in it constrains values beyond their Rust types (no `minimum`,
    /// `max_length`, … attributes, no float fields, nested types exact too).
    /// A hand-written impl should leave the default, `None`: a wrong claim
    /// lets invalid structured content through.
    const EXACT_SCHEMA: Option<&'static Schema<'static>> = None;

    /// Write `self` as one JSON value.
    fn write_json(&self, v: ValueWriter<'_, '_>);
}

/// A prompt's typed arguments (derived by `#[derive(PromptArgs)]` on a struct
/// of `&str` (required) and `Option<&str>` (optional) fields).
pub trait PromptArguments<'a>: Sized {
    /// The `arguments` list of the prompt's descriptor.
    const ARGUMENTS: &'static [PromptArgument<'static>];

    /// The values of a request. The server has checked that every required
    /// argument is present before the handler runs; a required argument read
    /// from a request that lacks it (only possible when the descriptor does
    /// not use [`PromptArguments::ARGUMENTS`]) is `""`.
    fn from_request(request: &PromptRequest<'a>) -> Self;
}

/// Reply with a typed output value as `structuredContent` (a text block
/// carrying the same JSON is added for clients that read only `content`).
pub trait ReplyExt<'r> {
    /// Succeed with `value` as structured content.
    fn output<'a, T: WriteJson + ?Sized>(self, value: &T) -> ToolOutcome<'a>;
}

impl<'r> ReplyExt<'r> for Reply<'r> {
    fn output<'a, T: WriteJson + ?Sized>(self, value: &T) -> ToolOutcome<'a> {
        self.content()
            .finish_structured_exact(T::EXACT_SCHEMA, |v| value.write_json(v))
    }
}

/// Finish content blocks with a typed output value as `structuredContent`.
pub trait ContentExt<'r> {
    /// [`Content::finish_structured`] with `value`.
    fn finish_output<'a, T: WriteJson + ?Sized>(self, value: &T) -> ToolOutcome<'a>;
}

impl<'r> ContentExt<'r> for Content<'r> {
    fn finish_output<'a, T: WriteJson + ?Sized>(self, value: &T) -> ToolOutcome<'a> {
        self.finish_structured_exact(T::EXACT_SCHEMA, |v| value.write_json(v))
    }
}

/// The output schema of `T` for `tool!`: the very reference `T` claims in
/// [`WriteJson::EXACT_SCHEMA`] when it has one (so the server recognises it
/// by address), else `T`'s schema.
#[doc(hidden)]
pub const fn output_schema<T: HasSchema + WriteJson + ?Sized>() -> &'static Schema<'static> {
    match T::EXACT_SCHEMA {
        Some(s) => s,
        None => &T::SCHEMA,
    }
}

/// A bound for an integer limit: `Int` when it fits an `i64`; the one
/// larger limit of a supported type, `u64::MAX`, as number text.
///
/// # Panics
///
/// On any other value beyond `i64` (a compile error: the derive calls this
/// in `const`, and rejects 128-bit fields).
#[doc(hidden)]
#[allow(
    clippy::panic,
    reason = "const-evaluated; unreachable for the types the derive accepts"
)]
pub const fn int_bound(n: i128) -> Bound<'static> {
    if n >= i64::MIN as i128 && n <= i64::MAX as i128 {
        Bound::Int(n as i64)
    } else if n == u64::MAX as i128 {
        Bound::decimal("18446744073709551615")
    } else {
        panic!("integer bound beyond the 64-bit range")
    }
}

/// `keywords` with `minimum`/`maximum` set to an integer type's range.
#[doc(hidden)]
pub const fn int_range(mut keywords: Keywords<'static>, min: i128, max: i128) -> Keywords<'static> {
    keywords.minimum = Some(int_bound(min));
    keywords.maximum = Some(int_bound(max));
    keywords
}

/// A capacity (`N` of `String<N>`, `Vec<T, N>`, `[T; N]`) as a schema
/// count, saturating.
#[doc(hidden)]
pub const fn count(n: usize) -> u32 {
    if n > u32::MAX as usize {
        u32::MAX
    } else {
        n as u32
    }
}

/// The value of a required prompt argument (`""` if absent).
#[doc(hidden)]
pub fn prompt_required<'a>(request: &PromptRequest<'a>, name: &str) -> &'a str {
    request.get(name).unwrap_or_default()
}

impl WriteJson for str {
    fn write_json(&self, v: ValueWriter<'_, '_>) {
        v.str(self);
    }
}

impl<T: WriteJson + ?Sized> WriteJson for &T {
    const EXACT_SCHEMA: Option<&'static Schema<'static>> = T::EXACT_SCHEMA;

    fn write_json(&self, v: ValueWriter<'_, '_>) {
        (**self).write_json(v);
    }
}

impl<const N: usize, L: heapless::LenType> WriteJson for heapless::String<N, L> {
    fn write_json(&self, v: ValueWriter<'_, '_>) {
        v.str(self.as_str());
    }
}

impl WriteJson for bool {
    fn write_json(&self, v: ValueWriter<'_, '_>) {
        v.bool(*self);
    }
}

macro_rules! write_ints {
    ($($t:ty => $m:ident as $as:ty),*) => {$(
        impl WriteJson for $t {
            fn write_json(&self, v: ValueWriter<'_, '_>) {
                v.$m(*self as $as);
            }
        }
    )*};
}

write_ints!(
    u8 => u64 as u64, u16 => u64 as u64, u32 => u64 as u64, u64 => u64 as u64, usize => u64 as u64,
    i8 => i64 as i64, i16 => i64 as i64, i32 => i64 as i64, i64 => i64 as i64, isize => i64 as i64,
    f32 => f64 as f64, f64 => f64 as f64
);

impl<T: WriteJson> WriteJson for Option<T> {
    fn write_json(&self, v: ValueWriter<'_, '_>) {
        match self {
            Some(x) => x.write_json(v),
            None => v.null(),
        }
    }
}

impl<T: WriteJson> WriteJson for [T] {
    fn write_json(&self, v: ValueWriter<'_, '_>) {
        let mut a = v.array();
        for x in self {
            x.write_json(a.item());
        }
    }
}

impl<T: WriteJson, const N: usize> WriteJson for [T; N] {
    fn write_json(&self, v: ValueWriter<'_, '_>) {
        self.as_slice().write_json(v);
    }
}

impl<T: WriteJson, const N: usize, L: heapless::LenType> WriteJson for heapless::Vec<T, N, L> {
    fn write_json(&self, v: ValueWriter<'_, '_>) {
        self.as_slice().write_json(v);
    }
}

/// Declare a tool in one place: name, typed arguments (their schema is the
/// input schema), optional typed output (its schema is the output schema),
/// and a handler that receives the arguments already parsed.
///
/// ```
/// use picomcp::derive_support::{HasSchema, ReplyExt, WriteJson};
/// use picomcp::schema::{Property, Schema};
/// use picomcp::tool::{Reply, Tool, ToolOutcome};
/// use picomcp::wire::emit::ValueWriter;
///
/// struct Shop;
///
/// // Usually `#[derive(ToolArgs, serde::Deserialize)]` (feature `derive`).
/// #[derive(serde::Deserialize)]
/// struct TitleArgs<'a> { title: &'a str }
/// impl HasSchema for TitleArgs<'_> {
///     const SCHEMA: Schema<'static> =
///         Schema::object(&[Property::new("title", Schema::string())]).required(&["title"]);
/// }
///
/// // Usually `#[derive(ToolOutput)]`.
/// struct Author<'a> { name: &'a str }
/// impl HasSchema for Author<'_> {
///     const SCHEMA: Schema<'static> =
///         Schema::object(&[Property::new("name", Schema::string())]).required(&["name"]);
/// }
/// impl WriteJson for Author<'_> {
///     fn write_json(&self, v: ValueWriter<'_, '_>) {
///         v.object().str("name", self.name);
///     }
/// }
///
/// fn get_author<'a>(_: &'a Shop, args: TitleArgs<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
///     let name = if args.title == "Dune" { "Frank Herbert" } else { "?" };
///     reply.output(&Author { name })
/// }
///
/// static TOOLS: &[Tool<Shop>] = &[picomcp::tool! {
///     name: "get_author",
///     description: "Look up the author of a book.",
///     args: TitleArgs,
///     output: Author,
///     handler: get_author,
/// }];
/// assert_eq!(TOOLS[0].descriptor.output_schema, Some(&Author::SCHEMA));
/// ```
///
/// Keys: `name` and `args` and `handler` (required), and optionally
/// `output` (a type), `title`, `description`, `annotations`, `icons` and
/// `since` (each an expression handed to the
/// [`ToolDescriptor`](crate::tool::ToolDescriptor) method of that name), in
/// any order. The handler is
/// `fn(&'a S, Args<'a>, Reply<'_>) -> ToolOutcome<'a>`; arguments that do not
/// deserialize into `Args` are a tool error (after the schema check, which
/// normally catches everything first).
#[macro_export]
macro_rules! tool {
    ($($body:tt)*) => {
        $crate::__tool!(@munch [] [] [] [] $($body)*)
    };
}

/// The descriptor [`tool!`](crate::tool!) would build, without a handler:
/// for an async tool ([`async_handlers!`](crate::async_handlers)), whose
/// handler the registry names.
///
/// ```
/// # #[cfg(feature = "derive")] {
/// #[derive(picomcp::ToolArgs, serde::Deserialize)]
/// struct TitleArgs<'a> {
///     title: &'a str,
/// }
///
/// const GET_AUTHOR: picomcp::tool::ToolDescriptor<'static> = picomcp::tool_descriptor! {
///     name: "get_author",
///     description: "Look up the author of a book.",
///     args: TitleArgs,
/// };
/// assert_eq!(GET_AUTHOR.name, "get_author");
/// # }
/// ```
///
/// Keys: `name` and `args` (required), and optionally `output`, `title`,
/// `description`, `annotations`, `icons` and `since`, as for `tool!`.
#[macro_export]
macro_rules! tool_descriptor {
    ($($body:tt)*) => {
        $crate::__tool_descriptor!(@munch [] [] [] $($body)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __tool_descriptor {
    // [name] [args type] [descriptor modifiers]
    (@munch [] [$($a:ty)?] [$($m:tt)*] name: $n:expr $(, $($rest:tt)*)?) => {
        $crate::__tool_descriptor!(@munch [$n] [$($a)?] [$($m)*] $($($rest)*)?)
    };
    (@munch [$($n:expr)?] [] [$($m:tt)*] args: $a:ty $(, $($rest:tt)*)?) => {
        $crate::__tool_descriptor!(@munch [$($n)?] [$a] [$($m)*] $($($rest)*)?)
    };
    (@munch [$($n:expr)?] [$($a:ty)?] [$($m:tt)*] output: $o:ty $(, $($rest:tt)*)?) => {
        $crate::__tool_descriptor!(@munch [$($n)?] [$($a)?]
            [$($m)* .output_schema($crate::derive_support::output_schema::<$o>())] $($($rest)*)?)
    };
    (@munch [$($n:expr)?] [$($a:ty)?] [$($m:tt)*] $key:ident : $v:expr $(, $($rest:tt)*)?) => {
        $crate::__tool_descriptor!(@munch [$($n)?] [$($a)?] [$($m)* .$key($v)] $($($rest)*)?)
    };
    (@munch [$n:expr] [$a:ty] [$($m:tt)*]) => {
        $crate::tool::ToolDescriptor::new(
            $n,
            &<$a as $crate::derive_support::HasSchema>::SCHEMA,
        )
        .args_check(<$a as $crate::derive_support::HasSchema>::ARGS_CHECK)
        $($m)*
    };
    (@munch [] $($rest:tt)*) => {
        ::core::compile_error!("picomcp::tool_descriptor! needs `name: \"...\"`")
    };
    (@munch [$n:expr] [] $($rest:tt)*) => {
        ::core::compile_error!("picomcp::tool_descriptor! needs `args: Type` (a type with HasSchema)")
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __tool {
    // [name] [args type] [handler] [descriptor modifiers]
    (@munch [] [$($a:ty)?] [$($h:expr)?] [$($m:tt)*] name: $n:expr $(, $($rest:tt)*)?) => {
        $crate::__tool!(@munch [$n] [$($a)?] [$($h)?] [$($m)*] $($($rest)*)?)
    };
    (@munch [$($n:expr)?] [] [$($h:expr)?] [$($m:tt)*] args: $a:ty $(, $($rest:tt)*)?) => {
        $crate::__tool!(@munch [$($n)?] [$a] [$($h)?] [$($m)*] $($($rest)*)?)
    };
    (@munch [$($n:expr)?] [$($a:ty)?] [] [$($m:tt)*] handler: $h:expr $(, $($rest:tt)*)?) => {
        $crate::__tool!(@munch [$($n)?] [$($a)?] [$h] [$($m)*] $($($rest)*)?)
    };
    (@munch [$($n:expr)?] [$($a:ty)?] [$($h:expr)?] [$($m:tt)*] output: $o:ty $(, $($rest:tt)*)?) => {
        $crate::__tool!(@munch [$($n)?] [$($a)?] [$($h)?]
            [$($m)* .output_schema($crate::derive_support::output_schema::<$o>())] $($($rest)*)?)
    };
    (@munch [$($n:expr)?] [$($a:ty)?] [$($h:expr)?] [$($m:tt)*] $key:ident : $v:expr $(, $($rest:tt)*)?) => {
        $crate::__tool!(@munch [$($n)?] [$($a)?] [$($h)?] [$($m)* .$key($v)] $($($rest)*)?)
    };
    (@munch [$n:expr] [$a:ty] [$h:expr] [$($m:tt)*]) => {
        $crate::tool::Tool::new(
            $crate::tool::ToolDescriptor::new(
                $n,
                &<$a as $crate::derive_support::HasSchema>::SCHEMA,
            )
            .args_check(<$a as $crate::derive_support::HasSchema>::ARGS_CHECK)
            $($m)*,
            |state, arguments, reply| {
                // The derived parse when `$a` has one (`#[mcp(parse)]`),
                // else serde (`derive_support::args::Pick`).
                #[allow(unused_imports)]
                use $crate::derive_support::args::{ByDerive as _, BySerde as _};
                let args: $a =
                    (&$crate::derive_support::args::Pick::<$a>::new()).parse_args(arguments)?;
                $h(state, args, reply)
            },
        )
    };
    (@munch [] $($rest:tt)*) => {
        ::core::compile_error!("picomcp::tool! needs `name: \"...\"`")
    };
    (@munch [$n:expr] [] $($rest:tt)*) => {
        ::core::compile_error!("picomcp::tool! needs `args: Type` (a type with HasSchema + serde::Deserialize)")
    };
    (@munch [$n:expr] [$a:ty] [] $($rest:tt)*) => {
        ::core::compile_error!("picomcp::tool! needs `handler: function`")
    };
}
