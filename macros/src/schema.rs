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
        // A nested `Option` of a derived (or hand-written `HasSchema`) type:
        // `{"anyOf":[T,{"type":"null"}]}`, since adding `null` to `type`
        // would not admit `null` past T's `enum`, `const` or applicators.
        Shape::Option(inner) if matches!(**inner, Shape::Nested(_)) => {
            let inner = shape_schema(inner);
            quote!(#s::ANY.composition(
                &::picomcp::schema::Composition::new().any_of(&[#inner, #s::null()])
            ))
        }
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
pub(crate) fn field_schema(ty: &Type, shape: &Shape, a: &FieldAttrs) -> Result<TokenStream2> {
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
    for (name, takes, span, e) in a.constraints() {
        let applies = match takes {
            Takes::Bound | Takes::ExclusiveBound => kind == "number",
            Takes::Multiple => matches!(top, Shape::Int(_)),
            Takes::Length => kind == "string",
            Takes::Items => kind == "array",
        };
        need(name, applies, span)?;
        let m = syn::Ident::new(name, span);
        out = match takes {
            Takes::Bound => match float_literal_text(e)? {
                Some(text) => {
                    let m = syn::Ident::new(&format!("{name}_decimal"), span);
                    quote!(#out.#m(#text))
                }
                None => quote!(#out.#m(#e)),
            },
            Takes::ExclusiveBound => {
                let bound = if let Some(text) = float_literal_text(e)? {
                    quote!(::picomcp::schema::Bound::decimal(#text))
                } else {
                    quote!(::picomcp::schema::Bound::Int(#e))
                };
                quote!(#out.#m(#bound))
            }
            Takes::Multiple | Takes::Length | Takes::Items => quote!(#out.#m(#e)),
        };
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
