//! Derive macros for [picomcp](https://docs.rs/picomcp): a tool's JSON Schema,
//! its structured output writer and a prompt's argument list, from Rust types.
//!
//! Use them through `picomcp` with its feature `derive`
//! (`picomcp::{ToolArgs, ToolOutput, PromptArgs}`); the generated code names
//! only `::picomcp::...` and `::core::...` paths, so it builds for `no_std`
//! targets. Documented in the picomcp README ("Deriving schemas").
//!
//! * `#[derive(ToolArgs)]`: `impl picomcp::derive_support::HasSchema`
//!   (`const SCHEMA`); deserializing is serde's (`#[derive(serde::Deserialize)]`
//!   alongside). Also for nested structs and unit-variant enums.
//! * `#[derive(ToolOutput)]`: `HasSchema` plus
//!   `picomcp::derive_support::WriteJson` (writes `structuredContent`). A type
//!   derives one of `ToolArgs` / `ToolOutput`, not both (`ToolOutput` already
//!   gives the schema; add `serde::Deserialize` to also take it as input).
//! * `#[derive(PromptArgs)]`: `impl picomcp::derive_support::PromptArguments`
//!   on a struct of `&str` (required) and `Option<&str>` (optional) fields.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Error, Expr, ExprLit, ExprUnary, Fields, GenericArgument, Lit, LitStr,
    PathArguments, Result, Type, UnOp,
};

/// `#[derive(ToolArgs)]`: the type's JSON Schema as `const` data
/// (`picomcp::derive_support::HasSchema`), for tool arguments, nested
/// argument structs and unit-variant enums. Pair it with
/// `#[derive(serde::Deserialize)]`.
#[proc_macro_derive(ToolArgs, attributes(mcp))]
pub fn derive_tool_args(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    expand(&input, Mode::Args)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// `#[derive(ToolOutput)]`: the type's JSON Schema (the tool's
/// `outputSchema`) and a writer for its `structuredContent`
/// (`picomcp::derive_support::{HasSchema, WriteJson}`).
#[proc_macro_derive(ToolOutput, attributes(mcp))]
pub fn derive_tool_output(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    expand(&input, Mode::Output)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// `#[derive(PromptArgs)]`: a prompt's `arguments` list and typed access
/// (`picomcp::derive_support::PromptArguments`) from a struct of `&str`
/// (required) and `Option<&str>` (optional) fields.
#[proc_macro_derive(PromptArgs, attributes(mcp))]
pub fn derive_prompt_args(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    expand_prompt(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Args,
    Output,
}

impl Mode {
    fn derive_name(self) -> &'static str {
        match self {
            Mode::Args => "ToolArgs",
            Mode::Output => "ToolOutput",
        }
    }
}

/// What a field's type is, as far as the schema is concerned.
enum Shape {
    Str,
    FixedString(Expr),
    Int(syn::Ident),
    Float,
    Bool,
    Option(Box<Shape>),
    List {
        item: Box<Shape>,
        len: Expr,
        exact: bool,
    },
    /// `&[T]`: output only (serde cannot borrow it from a request).
    Slice(Box<Shape>),
    Nested(Type),
}

impl Shape {
    fn kind(&self) -> &'static str {
        match self {
            Shape::Str | Shape::FixedString(_) => "string",
            Shape::Int(_) | Shape::Float => "number",
            Shape::List { .. } | Shape::Slice(_) => "array",
            _ => "other",
        }
    }
}

const INTS: &[&str] = &[
    "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize",
];

fn last_segment_args(seg: &syn::PathSegment) -> Vec<&GenericArgument> {
    match &seg.arguments {
        PathArguments::AngleBracketed(a) => a.args.iter().collect(),
        _ => Vec::new(),
    }
}

fn arg_type(a: &GenericArgument) -> Option<&Type> {
    match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// A const generic argument as an expression (`32`, `{ N }`, or a path the
/// parser saw as a type).
fn arg_expr(a: &GenericArgument) -> Option<Expr> {
    match a {
        GenericArgument::Const(e) => Some(e.clone()),
        GenericArgument::Type(Type::Path(p)) => Some(Expr::Path(syn::ExprPath {
            attrs: Vec::new(),
            qself: p.qself.clone(),
            path: p.path.clone(),
        })),
        _ => None,
    }
}

/// A type as the user wrote it (token spacing tidied).
fn show(ty: &Type) -> String {
    let mut s = quote!(#ty).to_string();
    for (from, to) in [
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        (" ::", "::"),
        (":: ", "::"),
        (" ;", ";"),
        ("[ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
    ] {
        s = s.replace(from, to);
    }
    s
}

fn unsupported(ty: &Type, why: &str) -> Error {
    Error::new_spanned(
        ty,
        format!("picomcp: unsupported field type `{}`: {why}", show(ty)),
    )
}

fn classify(ty: &Type, mode: Mode) -> Result<Shape> {
    match ty {
        Type::Group(g) => classify(&g.elem, mode),
        Type::Paren(p) => classify(&p.elem, mode),
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => Ok(Shape::Str),
            Type::Slice(s) if mode == Mode::Output => {
                Ok(Shape::Slice(Box::new(classify(&s.elem, mode)?)))
            }
            Type::Slice(_) => Err(unsupported(
                ty,
                "a borrowed slice cannot be deserialized in place; use `heapless::Vec<T, N>` or `[T; N]`",
            )),
            _ => Err(unsupported(
                ty,
                "the only supported reference is `&str`; use the referenced type itself",
            )),
        },
        Type::Array(a) => Ok(Shape::List {
            item: Box::new(classify(&a.elem, mode)?),
            len: a.len.clone(),
            exact: true,
        }),
        Type::Tuple(t) if t.elems.is_empty() => Err(unsupported(
            ty,
            "`()` has no JSON Schema; leave the field out",
        )),
        Type::Tuple(_) => Err(unsupported(
            ty,
            "tuples have no named members; use a struct that derives ToolArgs/ToolOutput",
        )),
        Type::Slice(_) => Err(unsupported(ty, "unsized slice; use `heapless::Vec<T, N>`")),
        Type::Path(p) if p.qself.is_none() => {
            let Some(seg) = p.path.segments.last() else {
                return Err(unsupported(ty, "empty path"));
            };
            let name = seg.ident.to_string();
            let args = last_segment_args(seg);
            match name.as_str() {
                n if INTS.contains(&n) && args.is_empty() => Ok(Shape::Int(seg.ident.clone())),
                "u128" | "i128" => Err(unsupported(
                    ty,
                    "128-bit integers do not fit a JSON number exactly; use a 64-bit integer or a string",
                )),
                "f32" | "f64" if args.is_empty() => Ok(Shape::Float),
                "bool" if args.is_empty() => Ok(Shape::Bool),
                "char" => Err(unsupported(ty, "use `&str` or `heapless::String<1>`")),
                "str" => Err(unsupported(ty, "use `&str`")),
                "String" => match args.first().and_then(|a| arg_expr(a)) {
                    Some(n) if args.len() <= 2 => Ok(Shape::FixedString(n)),
                    _ => Err(unsupported(
                        ty,
                        "`String` allocates; use `&str` (borrowed from the request) or `heapless::String<N>`",
                    )),
                },
                "Vec" => match (args.len(), args.first().and_then(|a| arg_type(a))) {
                    (2 | 3, Some(item)) => match arg_expr(args[1]) {
                        Some(len) => Ok(Shape::List {
                            item: Box::new(classify(item, mode)?),
                            len,
                            exact: false,
                        }),
                        None => Err(unsupported(ty, "expected `heapless::Vec<T, N>`")),
                    },
                    _ => Err(unsupported(
                        ty,
                        "`Vec<T>` allocates; use `heapless::Vec<T, N>` (bounded: `maxItems` N) or `[T; N]`",
                    )),
                },
                "Option" => match args.first().and_then(|a| arg_type(a)) {
                    Some(inner) if args.len() == 1 => {
                        Ok(Shape::Option(Box::new(classify(inner, mode)?)))
                    }
                    _ => Err(unsupported(ty, "expected `Option<T>`")),
                },
                "HashMap" | "BTreeMap" | "IndexMap" | "LinearMap" | "FnvIndexMap" | "HashSet"
                | "BTreeSet" | "IndexSet" | "FnvIndexSet" => Err(unsupported(
                    ty,
                    "maps and sets have no fixed members; use a struct that derives ToolArgs/ToolOutput",
                )),
                "Box" | "Rc" | "Arc" | "Cow" | "VecDeque" | "LinkedList" | "BinaryHeap"
                | "Deque" => Err(unsupported(
                    ty,
                    "picomcp types borrow or hold fixed capacity; use `&str`, `heapless::String<N>` or `heapless::Vec<T, N>`",
                )),
                _ => Ok(Shape::Nested(ty.clone())),
            }
        }
        _ => Err(unsupported(
            ty,
            "supported: &str, heapless::String<N>, integers, floats, bool, Option<T>, heapless::Vec<T, N>, [T; N], and types deriving ToolArgs/ToolOutput",
        )),
    }
}

/// `#[mcp(...)]` and `#[serde(...)]` attributes of a field.
#[derive(Default)]
struct FieldAttrs {
    rename: Option<LitStr>,
    serde_rename: Option<LitStr>,
    serde_default: bool,
    serde_skip: bool,
    description: Option<String>,
    title: Option<LitStr>,
    default: Option<LitStr>,
    minimum: Option<(Span, Expr)>,
    maximum: Option<(Span, Expr)>,
    exclusive_minimum: Option<(Span, Expr)>,
    exclusive_maximum: Option<(Span, Expr)>,
    multiple_of: Option<(Span, Expr)>,
    min_length: Option<(Span, Expr)>,
    max_length: Option<(Span, Expr)>,
    min_items: Option<(Span, Expr)>,
    max_items: Option<(Span, Expr)>,
}

/// Container-level attributes.
#[derive(Default)]
struct ContainerAttrs {
    description: Option<LitStr>,
    title: Option<LitStr>,
    deny_unknown_fields: bool,
    rename_all: Option<(Span, String)>,
}

/// Doc comments, joined: lines of a paragraph with spaces, paragraphs with
/// a blank line.
fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let mut out = String::new();
    let mut pending_break = false;
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        let syn::Meta::NameValue(nv) = &a.meta else {
            continue;
        };
        let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        else {
            continue;
        };
        let text = s.value();
        if text.trim().is_empty() {
            pending_break = !out.is_empty();
            continue;
        }
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() {
                pending_break = !out.is_empty();
                continue;
            }
            if pending_break {
                out.push_str("\n\n");
                pending_break = false;
            } else if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(line);
        }
    }
    (!out.is_empty()).then_some(out)
}

fn parse_field_attrs(attrs: &[syn::Attribute]) -> Result<FieldAttrs> {
    let mut f = FieldAttrs {
        description: doc_text(attrs),
        ..FieldAttrs::default()
    };
    for attr in attrs {
        if attr.path().is_ident("mcp") {
            attr.parse_nested_meta(|meta| {
                let key = meta
                    .path
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                let span = meta.path.span();
                let expr = |m: &syn::meta::ParseNestedMeta| -> Result<(Span, Expr)> {
                    Ok((span, m.value()?.parse::<Expr>()?))
                };
                match key.as_str() {
                    "rename" => f.rename = Some(meta.value()?.parse()?),
                    "description" => f.description = Some(meta.value()?.parse::<LitStr>()?.value()),
                    "title" => f.title = Some(meta.value()?.parse()?),
                    "default" => f.default = Some(meta.value()?.parse()?),
                    "minimum" => f.minimum = Some(expr(&meta)?),
                    "maximum" => f.maximum = Some(expr(&meta)?),
                    "exclusive_minimum" => f.exclusive_minimum = Some(expr(&meta)?),
                    "exclusive_maximum" => f.exclusive_maximum = Some(expr(&meta)?),
                    "multiple_of" => f.multiple_of = Some(expr(&meta)?),
                    "min_length" => f.min_length = Some(expr(&meta)?),
                    "max_length" => f.max_length = Some(expr(&meta)?),
                    "min_items" => f.min_items = Some(expr(&meta)?),
                    "max_items" => f.max_items = Some(expr(&meta)?),
                    _ => {
                        return Err(meta.error(
                            "unknown picomcp field attribute; expected one of: rename, description, title, default, minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of, min_length, max_length, min_items, max_items",
                        ));
                    }
                }
                Ok(())
            })?;
        } else if attr.path().is_ident("serde") {
            // Read what changes the wire shape; ignore the rest.
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    if let Ok(v) = meta.value() {
                        f.serde_rename = v.parse().ok();
                    }
                } else if meta.path.is_ident("default") {
                    f.serde_default = true;
                    if let Ok(v) = meta.value() {
                        let _: Option<LitStr> = v.parse().ok();
                    }
                } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
                    f.serde_skip = true;
                } else if let Ok(v) = meta.value() {
                    let _: Option<Expr> = v.parse().ok();
                } else if meta.input.peek(syn::token::Paren) {
                    let _ = meta.parse_nested_meta(|m| {
                        if let Ok(v) = m.value() {
                            let _: Option<Expr> = v.parse().ok();
                        }
                        Ok(())
                    });
                }
                Ok(())
            });
        }
    }
    Ok(f)
}

fn parse_container_attrs(attrs: &[syn::Attribute]) -> Result<ContainerAttrs> {
    let mut c = ContainerAttrs::default();
    for attr in attrs {
        if attr.path().is_ident("mcp") {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("description") {
                    c.description = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident("title") {
                    c.title = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident("deny_unknown_fields") {
                    c.deny_unknown_fields = true;
                } else if meta.path.is_ident("rename_all") {
                    let s: LitStr = meta.value()?.parse()?;
                    c.rename_all = Some((s.span(), s.value()));
                } else {
                    return Err(meta.error(
                        "unknown picomcp container attribute; expected one of: description, title, deny_unknown_fields, rename_all",
                    ));
                }
                Ok(())
            })?;
        } else if attr.path().is_ident("serde") {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("deny_unknown_fields") {
                    c.deny_unknown_fields = true;
                } else if meta.path.is_ident("rename_all") {
                    if let Ok(v) = meta.value()
                        && let Ok(s) = v.parse::<LitStr>()
                    {
                        c.rename_all = Some((s.span(), s.value()));
                    }
                } else if let Ok(v) = meta.value() {
                    let _: Option<Expr> = v.parse().ok();
                } else if meta.input.peek(syn::token::Paren) {
                    let _ = meta.parse_nested_meta(|m| {
                        if let Ok(v) = m.value() {
                            let _: Option<Expr> = v.parse().ok();
                        }
                        Ok(())
                    });
                }
                Ok(())
            });
        }
    }
    Ok(c)
}

/// Split an identifier into lowercase words (`fooBar`, `foo_bar`, `FooBar`).
fn words(ident: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for ch in ident.chars() {
        if ch == '_' || ch == '-' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else if ch.is_uppercase() && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
            cur.extend(ch.to_lowercase());
        } else {
            cur.extend(ch.to_lowercase());
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn apply_rename_all(rule: &(Span, String), ident: &str) -> Result<String> {
    let w = words(ident);
    let cap = |s: &String| {
        let mut c = s.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect::<String>())
            .unwrap_or_default()
    };
    Ok(match rule.1.as_str() {
        "lowercase" => ident.to_lowercase(),
        "UPPERCASE" => ident.to_uppercase(),
        "snake_case" => w.join("_"),
        "SCREAMING_SNAKE_CASE" => w.join("_").to_uppercase(),
        "kebab-case" => w.join("-"),
        "SCREAMING-KEBAB-CASE" => w.join("-").to_uppercase(),
        "camelCase" => w
            .iter()
            .enumerate()
            .map(|(i, s)| if i == 0 { s.clone() } else { cap(s) })
            .collect(),
        "PascalCase" => w.iter().map(cap).collect(),
        other => {
            return Err(Error::new(
                rule.0,
                format!("picomcp: unsupported rename_all rule `{other}`"),
            ));
        }
    })
}

fn schema_path() -> TokenStream2 {
    quote!(::picomcp::schema::Schema)
}

/// A float literal (`0.5`, `-1e3`, `2.5f64`) as JSON number text, so the
/// bound is compared and emitted without floating point on the target;
/// `None` for anything else (an integer expression).
fn float_literal_text(e: &Expr) -> Result<Option<String>> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => {
            let x: f64 = f.base10_parse()?;
            if !x.is_finite() {
                return Err(Error::new(f.span(), "picomcp: the bound must be finite"));
            }
            // `{:?}` is the shortest text that reads back as the same f64,
            // always JSON-valid: `0.5`, `1.0`, `1e300`, `1e-7`.
            Ok(Some(format!("{x:?}")))
        }
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => Ok(
            float_literal_text(expr)?.map(|t| match t.strip_prefix('-') {
                Some(positive) => positive.to_owned(),
                None => format!("-{t}"),
            }),
        ),
        Expr::Group(g) => float_literal_text(&g.expr),
        Expr::Paren(p) => float_literal_text(&p.expr),
        _ => Ok(None),
    }
}

/// Whether every value of a shape's Rust type matches the shape's schema
/// (a `const bool` expression): not for floats (NaN is written as `null`).
fn shape_exact(shape: &Shape) -> TokenStream2 {
    match shape {
        Shape::Str | Shape::FixedString(_) | Shape::Int(_) | Shape::Bool => quote!(true),
        Shape::Float => quote!(false),
        Shape::Option(inner) | Shape::List { item: inner, .. } | Shape::Slice(inner) => {
            shape_exact(inner)
        }
        Shape::Nested(ty) => {
            quote_spanned!(ty.span()=> <#ty as ::picomcp::derive_support::WriteJson>::EXACT_SCHEMA.is_some())
        }
    }
}

/// The schema expression of a shape (without field attributes).
fn shape_schema(shape: &Shape) -> TokenStream2 {
    let s = schema_path();
    match shape {
        Shape::Str => quote!(#s::string()),
        Shape::FixedString(n) => {
            quote!(#s::string().max_length(::picomcp::derive_support::count(#n)))
        }
        Shape::Int(t) => quote!(::picomcp::derive_support::int_range(
            #s::integer(),
            <#t>::MIN as i128,
            <#t>::MAX as i128
        )),
        Shape::Float => quote!(#s::number()),
        Shape::Bool => quote!(#s::boolean()),
        Shape::Option(inner) => {
            let inner = shape_schema(inner);
            quote!(#inner.nullable())
        }
        Shape::List { item, len, exact } => {
            let item = shape_schema(item);
            let min = exact.then(|| quote!(.min_items(::picomcp::derive_support::count(#len))));
            quote!(#s::array(&#item) #min .max_items(::picomcp::derive_support::count(#len)))
        }
        Shape::Slice(item) => {
            let item = shape_schema(item);
            quote!(#s::array(&#item))
        }
        Shape::Nested(ty) => {
            quote_spanned!(ty.span()=> <#ty as ::picomcp::derive_support::HasSchema>::SCHEMA)
        }
    }
}

/// The schema expression of a field: its shape (top-level `Option` means
/// "not required", not "nullable") with its attributes applied.
fn field_schema(ty: &Type, shape: &Shape, a: &FieldAttrs) -> Result<TokenStream2> {
    let top = match shape {
        Shape::Option(inner) => inner,
        s => s,
    };
    let mut out = shape_schema(top);
    let kind = top.kind();
    let need = |what: &str, ok: bool, span: Span| -> Result<()> {
        if ok {
            Ok(())
        } else {
            Err(Error::new(
                span,
                format!(
                    "picomcp: `{what}` does not apply to a field of type `{}`",
                    show(ty)
                ),
            ))
        }
    };
    for (name, v) in [("minimum", &a.minimum), ("maximum", &a.maximum)] {
        if let Some((span, e)) = v {
            need(name, kind == "number", *span)?;
            if let Some(text) = float_literal_text(e)? {
                let m = syn::Ident::new(&format!("{name}_decimal"), *span);
                out = quote!(#out.#m(#text));
            } else {
                let m = syn::Ident::new(name, *span);
                out = quote!(#out.#m(#e));
            }
        }
    }
    for (name, v) in [
        ("exclusive_minimum", &a.exclusive_minimum),
        ("exclusive_maximum", &a.exclusive_maximum),
    ] {
        if let Some((span, e)) = v {
            need(name, kind == "number", *span)?;
            let m = syn::Ident::new(name, *span);
            let bound = if let Some(text) = float_literal_text(e)? {
                quote!(::picomcp::schema::Bound::decimal(#text))
            } else {
                quote!(::picomcp::schema::Bound::Int(#e))
            };
            out = quote!(#out.#m(#bound));
        }
    }
    if let Some((span, e)) = &a.multiple_of {
        need("multiple_of", matches!(top, Shape::Int(_)), *span)?;
        out = quote!(#out.multiple_of(#e));
    }
    for (name, v, want) in [
        ("min_length", &a.min_length, "string"),
        ("max_length", &a.max_length, "string"),
        ("min_items", &a.min_items, "array"),
        ("max_items", &a.max_items, "array"),
    ] {
        if let Some((span, e)) = v {
            need(name, kind == want, *span)?;
            let m = syn::Ident::new(name, *span);
            out = quote!(#out.#m(#e));
        }
    }
    if let Some(t) = &a.title {
        out = quote!(#out.title(#t));
    }
    if let Some(d) = &a.description {
        out = quote!(#out.description(#d));
    }
    if let Some(d) = &a.default {
        out = quote!(#out.default_json(#d));
    }
    Ok(out)
}

fn check_generics(input: &DeriveInput, derive: &str) -> Result<()> {
    for p in &input.generics.params {
        if !matches!(p, syn::GenericParam::Lifetime(_)) {
            return Err(Error::new(
                p.span(),
                format!("picomcp: #[derive({derive})] supports lifetime parameters only"),
            ));
        }
    }
    Ok(())
}

fn expand(input: &DeriveInput, mode: Mode) -> Result<TokenStream2> {
    let derive = mode.derive_name();
    check_generics(input, derive)?;
    let container = parse_container_attrs(&input.attrs)?;
    let ident = &input.ident;
    let (impl_g, ty_g, where_c) = input.generics.split_for_impl();
    let s = schema_path();
    let mut tail = TokenStream2::new();
    if let Some(t) = &container.title {
        tail.extend(quote!(.title(#t)));
    }
    if let Some(d) = &container.description {
        tail.extend(quote!(.description(#d)));
    }

    let (schema, write_body, exact) = match &input.data {
        Data::Struct(data) => {
            let Fields::Named(named) = &data.fields else {
                return Err(Error::new(
                    input.ident.span(),
                    format!(
                        "picomcp: #[derive({derive})] needs a struct with named fields (a JSON object)"
                    ),
                ));
            };
            let mut props = Vec::new();
            let mut required = Vec::new();
            let mut writes = Vec::new();
            let mut exact_parts = Vec::new();
            for field in &named.named {
                let a = parse_field_attrs(&field.attrs)?;
                if a.serde_skip {
                    continue;
                }
                let Some(fident) = &field.ident else { continue };
                let raw = fident.to_string();
                let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
                let name = match (&a.rename, &a.serde_rename) {
                    (Some(r), Some(sr)) if r.value() != sr.value() => {
                        return Err(Error::new(
                            r.span(),
                            "picomcp: `#[mcp(rename)]` and `#[serde(rename)]` disagree",
                        ));
                    }
                    (Some(r), None) if mode == Mode::Args => {
                        return Err(Error::new(
                            r.span(),
                            format!(
                                "picomcp: serde deserializes ToolArgs: write `#[serde(rename = \"{}\")]` (it names the field for the schema too)",
                                r.value()
                            ),
                        ));
                    }
                    (Some(r), _) | (None, Some(r)) => r.value(),
                    (None, None) => match &container.rename_all {
                        Some(rule) => apply_rename_all(rule, &raw)?,
                        None => raw,
                    },
                };
                let shape = classify(&field.ty, mode)?;
                let fs = field_schema(&field.ty, &shape, &a)?;
                let constrained = a.minimum.is_some()
                    || a.maximum.is_some()
                    || a.exclusive_minimum.is_some()
                    || a.exclusive_maximum.is_some()
                    || a.multiple_of.is_some()
                    || a.min_length.is_some()
                    || a.max_length.is_some()
                    || a.min_items.is_some()
                    || a.max_items.is_some();
                exact_parts.push(if constrained {
                    quote!(false)
                } else {
                    shape_exact(&shape)
                });
                props.push(quote!(::picomcp::schema::Property::new(#name, #fs)));
                let optional = matches!(shape, Shape::Option(_));
                if !optional && !a.serde_default {
                    required.push(name.clone());
                }
                let fspan = field.ty.span();
                writes.push(if optional {
                    quote_spanned! {fspan=>
                        if let ::core::option::Option::Some(value) = &self.#fident {
                            ::picomcp::derive_support::WriteJson::write_json(value, object.member(#name));
                        }
                    }
                } else {
                    quote_spanned! {fspan=>
                        ::picomcp::derive_support::WriteJson::write_json(&self.#fident, object.member(#name));
                    }
                });
            }
            let req = (!required.is_empty()).then(|| quote!(.required(&[#(#required),*])));
            let deny = container
                .deny_unknown_fields
                .then(|| quote!(.additional_properties(false)));
            (
                quote!(#s::object(&[#(#props),*]) #req #deny #tail),
                quote! {
                    #[allow(unused_mut)]
                    let mut object = v.object();
                    #(#writes)*
                },
                quote!(true #(&& #exact_parts)*),
            )
        }
        Data::Enum(data) => {
            let mut lits = Vec::new();
            let mut arms = Vec::new();
            for variant in &data.variants {
                if !matches!(variant.fields, Fields::Unit) {
                    return Err(Error::new(
                        variant.fields.span(),
                        format!(
                            "picomcp: #[derive({derive})] supports enums of unit variants only (a string `enum`); variant `{}` carries data",
                            variant.ident
                        ),
                    ));
                }
                let a = parse_field_attrs(&variant.attrs)?;
                if a.serde_skip {
                    continue;
                }
                let raw = variant.ident.to_string();
                let name = match (&a.rename, &a.serde_rename) {
                    (Some(r), Some(sr)) if r.value() != sr.value() => {
                        return Err(Error::new(
                            r.span(),
                            "picomcp: `#[mcp(rename)]` and `#[serde(rename)]` disagree",
                        ));
                    }
                    (Some(r), None) if mode == Mode::Args => {
                        return Err(Error::new(
                            r.span(),
                            format!(
                                "picomcp: serde deserializes ToolArgs: write `#[serde(rename = \"{}\")]`",
                                r.value()
                            ),
                        ));
                    }
                    (Some(r), _) | (None, Some(r)) => r.value(),
                    (None, None) => match &container.rename_all {
                        Some(rule) => apply_rename_all(rule, &raw)?,
                        None => raw,
                    },
                };
                let v = &variant.ident;
                lits.push(quote!(::picomcp::schema::Literal::Str(#name)));
                arms.push(quote!(Self::#v => v.str(#name),));
            }
            if container.deny_unknown_fields {
                return Err(Error::new(
                    input.ident.span(),
                    "picomcp: deny_unknown_fields applies to structs",
                ));
            }
            (
                quote!(#s::string().enum_values(&[#(#lits),*]) #tail),
                quote! {
                    #[allow(unreachable_patterns)]
                    match self { #(#arms)* _ => v.null() }
                },
                quote!(true),
            )
        }
        Data::Union(_) => {
            return Err(Error::new(
                input.ident.span(),
                format!("picomcp: #[derive({derive})] does not support unions"),
            ));
        }
    };

    let has_schema = quote! {
        #[automatically_derived]
        impl #impl_g ::picomcp::derive_support::HasSchema for #ident #ty_g #where_c {
            const SCHEMA: ::picomcp::schema::Schema<'static> = #schema;
        }
    };
    Ok(match mode {
        Mode::Args => has_schema,
        Mode::Output => {
            // A static, so that every use of `EXACT_SCHEMA` (the handler's
            // claim, `tool!`'s output schema) is the same address and the
            // server recognises it without comparing schemas.
            let statics = input.generics.lifetimes().map(|_| quote!('static));
            let static_ty = if input.generics.params.is_empty() {
                quote!(#ident)
            } else {
                quote!(#ident<#(#statics),*>)
            };
            let static_name =
                syn::Ident::new(&format!("__PICOMCP_EXACT_SCHEMA_{ident}"), ident.span());
            quote! {
            #has_schema
            #[doc(hidden)]
            #[allow(non_upper_case_globals)]
            static #static_name: ::picomcp::schema::Schema<'static> =
                <#static_ty as ::picomcp::derive_support::HasSchema>::SCHEMA;
            #[automatically_derived]
            impl #impl_g ::picomcp::derive_support::WriteJson for #ident #ty_g #where_c {
                const EXACT_SCHEMA: ::core::option::Option<&'static ::picomcp::schema::Schema<'static>> =
                    if #exact {
                        ::core::option::Option::Some(&#static_name)
                    } else {
                        ::core::option::Option::None
                    };
                fn write_json(&self, v: ::picomcp::wire::emit::ValueWriter<'_, '_>) {
                    #write_body
                }
            }
            }
        }
    })
}

fn expand_prompt(input: &DeriveInput) -> Result<TokenStream2> {
    let ident = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(Error::new(
            ident.span(),
            "picomcp: #[derive(PromptArgs)] needs a struct of `&str` / `Option<&str>` fields",
        ));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(Error::new(
            ident.span(),
            "picomcp: #[derive(PromptArgs)] needs a struct with named fields",
        ));
    };
    let lifetimes: Vec<_> = input.generics.lifetimes().collect();
    if input.generics.params.len() != lifetimes.len() || lifetimes.len() > 1 {
        return Err(Error::new(
            input.generics.span(),
            "picomcp: #[derive(PromptArgs)] takes at most one lifetime parameter",
        ));
    }
    let container = parse_container_attrs(&input.attrs)?;
    let (lt, ty_g, impl_g) = match lifetimes.first() {
        Some(l) => {
            let l = &l.lifetime;
            (quote!(#l), quote!(<#l>), quote!(<#l>))
        }
        None => (quote!('__picomcp), quote!(), quote!(<'__picomcp>)),
    };
    let mut args = Vec::new();
    let mut inits = Vec::new();
    for field in &named.named {
        let a = parse_field_attrs(&field.attrs)?;
        for (name, bad) in [
            ("default", a.default.is_some()),
            ("minimum", a.minimum.is_some()),
            ("maximum", a.maximum.is_some()),
            ("exclusive_minimum", a.exclusive_minimum.is_some()),
            ("exclusive_maximum", a.exclusive_maximum.is_some()),
            ("multiple_of", a.multiple_of.is_some()),
            ("min_length", a.min_length.is_some()),
            ("max_length", a.max_length.is_some()),
            ("min_items", a.min_items.is_some()),
            ("max_items", a.max_items.is_some()),
        ] {
            if bad {
                return Err(Error::new(
                    field.span(),
                    format!("picomcp: prompt arguments take no `{name}` (they are plain strings)"),
                ));
            }
        }
        let Some(fident) = &field.ident else { continue };
        let raw = fident.to_string();
        let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
        let name = match (&a.rename, &container.rename_all) {
            (Some(r), _) => r.value(),
            (None, Some(rule)) => apply_rename_all(rule, &raw)?,
            (None, None) => raw,
        };
        let required = match classify(&field.ty, Mode::Args) {
            Ok(Shape::Str) => true,
            Ok(Shape::Option(inner)) if matches!(*inner, Shape::Str) => false,
            _ => {
                return Err(unsupported(
                    &field.ty,
                    "prompt arguments are strings: use `&str` (required) or `Option<&str>` (optional)",
                ));
            }
        };
        let mut arg = quote!(::picomcp::prompt::PromptArgument::new(#name));
        if let Some(t) = &a.title {
            arg = quote!(#arg.title(#t));
        }
        if let Some(d) = &a.description {
            arg = quote!(#arg.description(#d));
        }
        if required {
            arg = quote!(#arg.required());
            inits.push(quote!(#fident: ::picomcp::derive_support::prompt_required(request, #name)));
        } else {
            inits.push(quote!(#fident: request.get(#name)));
        }
        args.push(arg);
    }
    Ok(quote! {
        #[automatically_derived]
        impl #impl_g ::picomcp::derive_support::PromptArguments<#lt> for #ident #ty_g {
            const ARGUMENTS: &'static [::picomcp::prompt::PromptArgument<'static>] = &[#(#args),*];
            fn from_request(request: &::picomcp::prompt::PromptRequest<#lt>) -> Self {
                Self { #(#inits),* }
            }
        }
    })
}
