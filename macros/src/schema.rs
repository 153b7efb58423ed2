//! Schema codegen: the `::picomcp::schema::Schema` expression of a shape and
//! of a field with its attributes, and whether a shape's schema is exact.

use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Error, Expr, ExprLit, ExprUnary, Lit, Result, Type, UnOp};

use crate::attrs::{FieldAttrs, Takes};
use crate::shape::{Shape, show};

pub(crate) fn schema_path() -> TokenStream2 {
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
pub(crate) fn shape_exact(shape: &Shape) -> TokenStream2 {
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

/// The schema expression of a shape (without field attributes), its value
/// keywords attached.
fn shape_schema(shape: &Shape) -> TokenStream2 {
    let (schema, keywords) = shape_parts(shape);
    match keywords {
        Some(k) => quote!(#schema.with(&#k)),
        None => schema,
    }
}

/// The value keywords' path.
fn keywords_path() -> TokenStream2 {
    quote!(::picomcp::schema::Keywords)
}

/// A shape's schema without its value keywords, and those keywords (a
/// `Keywords` expression) when it has any: a field's attributes add to
/// them before they are attached, once.
fn shape_parts(shape: &Shape) -> (TokenStream2, Option<TokenStream2>) {
    let s = schema_path();
    let k = keywords_path();
    match shape {
        Shape::Str => (quote!(#s::string()), None),
        Shape::FixedString(n) => (
            quote!(#s::string()),
            Some(quote!(#k::new().max_length(::picomcp::derive_support::count(#n)))),
        ),
        Shape::Int(t) => (
            quote!(#s::integer()),
            Some(quote!(::picomcp::derive_support::int_range(
                #k::new(),
                <#t>::MIN as i128,
                <#t>::MAX as i128
            ))),
        ),
        Shape::Float => (quote!(#s::number()), None),
        Shape::Bool => (quote!(#s::boolean()), None),
        // A nested `Option` of a derived (or hand-written `HasSchema`) type:
        // `{"anyOf":[T,{"type":"null"}]}`, since adding `null` to `type`
        // would not admit `null` past T's `enum`, `const` or applicators.
        Shape::Option(inner) if matches!(**inner, Shape::Nested(_)) => {
            let inner = shape_schema(inner);
            (
                quote!(#s::ANY.composition(
                    &::picomcp::schema::Composition::new().any_of(&[#inner, #s::null()])
                )),
                None,
            )
        }
        Shape::Option(inner) => {
            let (inner, keywords) = shape_parts(inner);
            (quote!(#inner.nullable()), keywords)
        }
        Shape::List { item, len, exact } => {
            let item = shape_schema(item);
            let min = exact.then(|| quote!(.min_items(::picomcp::derive_support::count(#len))));
            (
                quote!(#s::array(&#item)),
                Some(quote!(#k::new() #min .max_items(::picomcp::derive_support::count(#len)))),
            )
        }
        Shape::Slice(item) => {
            let item = shape_schema(item);
            (quote!(#s::array(&#item)), None)
        }
        // Its own keywords, if any, stay attached unless an attribute adds
        // to them (then they are the start: see `field_schema`).
        Shape::Nested(ty) => (
            quote_spanned!(ty.span()=> <#ty as ::picomcp::derive_support::HasSchema>::SCHEMA),
            None,
        ),
    }
}

/// The schema expression of a field: its shape (top-level `Option` means
/// "not required", not "nullable") with its attributes applied.
pub(crate) fn field_schema(ty: &Type, shape: &Shape, a: &FieldAttrs) -> Result<TokenStream2> {
    let top = match shape {
        Shape::Option(inner) => inner,
        s => s,
    };
    let (mut out, shape_keywords) = shape_parts(top);
    let k = keywords_path();
    // The value keywords: the shape's (a nested type's own, read back from
    // its schema), then the attributes'. Attached only when there are any.
    let mut has_keywords = shape_keywords.is_some();
    let mut keywords = match (shape_keywords, top) {
        (Some(kw), _) => kw,
        (None, Shape::Nested(ty)) => quote_spanned!(ty.span()=>
            (*<#ty as ::picomcp::derive_support::HasSchema>::SCHEMA.value_keywords())),
        (None, _) => quote!(#k::new()),
    };
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
    for (name, takes, span, e) in a.constraints() {
        let applies = match takes {
            Takes::Bound | Takes::ExclusiveBound => kind == "number",
            Takes::Multiple => matches!(top, Shape::Int(_)),
            Takes::Length => kind == "string",
            Takes::Items => kind == "array",
        };
        need(name, applies, span)?;
        let m = syn::Ident::new(name, span);
        keywords = match takes {
            Takes::Bound => match float_literal_text(e)? {
                Some(text) => {
                    let m = syn::Ident::new(&format!("{name}_decimal"), span);
                    quote!(#keywords.#m(#text))
                }
                None => quote!(#keywords.#m(#e)),
            },
            Takes::ExclusiveBound => {
                let bound = if let Some(text) = float_literal_text(e)? {
                    quote!(::picomcp::schema::Bound::decimal(#text))
                } else {
                    quote!(::picomcp::schema::Bound::Int(#e))
                };
                quote!(#keywords.#m(#bound))
            }
            Takes::Multiple | Takes::Length | Takes::Items => quote!(#keywords.#m(#e)),
        };
        has_keywords = true;
    }
    if let Some(d) = &a.default {
        keywords = quote!(#keywords.default_json(#d));
        has_keywords = true;
    }
    if has_keywords {
        out = quote!(#out.with(&#keywords));
    }
    if let Some(t) = &a.title {
        out = quote!(#out.title(#t));
    }
    if let Some(d) = &a.description {
        out = quote!(#out.description(#d));
    }
    Ok(out)
}
