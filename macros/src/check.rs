//! The derived arguments check (`picomcp::derive_support::args`): a
//! function that walks a call's arguments once and says "surely matches the
//! schema" or "not sure", generated from the same fields as the schema.

use proc_macro2::TokenStream as TokenStream2;
use quote::{quote, quote_spanned};
use syn::LitByteStr;
use syn::spanned::Spanned;

use crate::shape::Shape;

/// Properties whose values a derived check records
/// (`picomcp::derive_support::args::SPANS`).
const SPANS: usize = 8;

/// A property of the check: its wire name, the test of its value (an
/// expression over `v: &[u8]`), and whether it is required.
pub(crate) struct Prop {
    pub(crate) name: String,
    pub(crate) test: TokenStream2,
    pub(crate) required: bool,
}

fn args_path() -> TokenStream2 {
    quote!(::picomcp::derive_support::args)
}

/// The test of a value of `shape` (over `v`), or `None` when the shape's
/// schema is not one the check covers. `top`: a field's own type, whose
/// outer `Option` means "not required" (the schema does not admit `null`).
/// `plain`: the check of a type with a derived parse, unsure of escaped
/// strings too (serde decodes those).
pub(crate) fn value_test(shape: &Shape, top: bool, plain: bool) -> Option<TokenStream2> {
    let a = args_path();
    Some(match shape {
        Shape::Str if plain => quote!(plain),
        Shape::Str => quote!(#a::is_string(v)),
        Shape::Int(t) => quote!(#a::is_int_in(v, <#t>::MIN as i128, <#t>::MAX as i128)),
        Shape::Float => quote!(#a::is_number(v)),
        Shape::Bool => quote!(#a::is_bool(v)),
        Shape::Option(inner) if top => return value_test(inner, false, plain),
        Shape::Option(inner) => {
            let inner = value_test(inner, false, plain)?;
            quote!(#a::is_null(v) || #inner)
        }
        Shape::Nested(ty) => quote_spanned!(ty.span()=>
            #a::is_nested(v, <#ty as ::picomcp::derive_support::HasSchema>::ARGS_CHECK)),
        Shape::FixedString(_) | Shape::List { .. } | Shape::Slice(_) => return None,
    })
}

/// The body of a struct's check (`raw: &[u8]` in scope), or `None` past 64
/// properties.
pub(crate) fn struct_body(props: &[Prop], deny_unknown: bool) -> Option<TokenStream2> {
    if props.len() > 64 {
        return None;
    }
    let a = args_path();
    let mut keys = Vec::new();
    let mut heads = Vec::new();
    let mut arms = Vec::new();
    let mut required = 0u64;
    let span = proc_macro2::Span::call_site();
    for (i, p) in props.iter().enumerate() {
        let bit = 1u64 << i;
        if p.required {
            required |= bit;
        }
        let key = LitByteStr::new(p.name.as_bytes(), span);
        keys.push(quote!(#key => (#i, v, plain)));
        // The member as written without spaces, `"name":`, tried first
        // after the field before it (fields in declaration order: the
        // order arguments usually come in); none for a name with a byte
        // that is not plain ASCII (`next_member` is unsure of those keys).
        let plain = p
            .name
            .bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\');
        let head = if plain {
            format!("\"{}\":", p.name)
        } else {
            String::new()
        };
        heads.push(LitByteStr::new(head.as_bytes(), span));
        let test = &p.test;
        // The first `SPANS` properties' values are recorded.
        let record = (i < SPANS).then(|| quote!(if !spans.record(#i, raw, v) { return false; }));
        arms.push(quote!(#i => {
            if !(#test) || seen & #bit != 0 {
                return false;
            }
            #record
            seen |= #bit;
        }));
    }
    let unknown = (!deny_unknown)
        .then(|| quote!(continue))
        .unwrap_or(quote!(return false));
    let n = props.len();
    Some(quote! {
        let ::core::option::Option::Some(mut members) = #a::Members::new(raw) else {
            return false;
        };
        const HEADS: [&[u8]; #n] = [#(#heads),*];
        let mut seen = 0u64;
        // The field expected next.
        let mut expect = 0usize;
        loop {
            let (i, v, plain) = match HEADS.get(expect).and_then(|h| members.next_if(h)) {
                ::core::option::Option::Some((v, plain)) => (expect, v, plain),
                ::core::option::Option::None => match members.next_member() {
                    #a::Member::Next(key, v, plain) => match key {
                        #(#keys,)*
                        _ => #unknown,
                    },
                    #a::Member::End => break,
                    _ => return false,
                },
            };
            expect = i + 1;
            match i {
                #(#arms)*
                _ => return false,
            }
        }
        seen & #required == #required
    })
}

/// The body of a unit-variant enum's check: one of its names.
pub(crate) fn enum_body(names: &[String]) -> TokenStream2 {
    let a = args_path();
    quote!(#a::is_one_of(raw, &[#(#names),*]))
}

/// A field of a derived parse: its identifier, type and wire name, its
/// shape, and how a missing member is filled.
pub(crate) struct ParseField {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: syn::Type,
    pub(crate) name: String,
    /// `None` for a skipped field (any type).
    pub(crate) shape: Option<Shape>,
    pub(crate) fill: Fill,
}

/// What a field of a derived parse holds when its member is missing.
pub(crate) enum Fill {
    /// Nothing: the check vouched that the member is there.
    Required,
    /// `None` (an `Option` field), or `Default::default()`
    /// (`#[serde(default)]`): serde's choice for each.
    Default,
    /// `#[serde(skip)]`: never read, `Default::default()`.
    Skipped,
}

/// The expression building a value of `shape` from `v`, or `None` for a
/// shape the derived parse does not cover.
fn build(shape: &Shape) -> Option<TokenStream2> {
    let a = args_path();
    Some(match shape {
        Shape::Str => quote!(#a::plain_str(v)?),
        Shape::Int(_) => quote!(#a::int(v)?),
        Shape::Float => quote!(#a::float(v)?),
        Shape::Bool => quote!(#a::boolean(v)?),
        // serde: `null` is `None` at every level of `Option`.
        Shape::Option(inner) => {
            let inner = build(inner)?;
            quote!(if #a::is_null(v) { ::core::option::Option::None } else { ::core::option::Option::Some(#inner) })
        }
        Shape::Nested(ty) => quote_spanned!(ty.span()=> #a::nested::<#ty>(v)?),
        Shape::FixedString(_) | Shape::List { .. } | Shape::Slice(_) => return None,
    })
}

/// The body of a struct's `parse_plain` (`raw: &'de [u8]` and `spans:
/// Option<&Spans>` in scope), or the field whose type it does not cover.
pub(crate) fn parse_struct_body(fields: &[ParseField]) -> Result<TokenStream2, &ParseField> {
    let a = args_path();
    let mut locals = Vec::new();
    let mut arms = Vec::new();
    let mut from_spans = Vec::new();
    let mut inits = Vec::new();
    // The check's property index: fields not skipped, in order.
    let mut prop = 0usize;
    for (i, f) in fields.iter().enumerate() {
        let ident = &f.ident;
        if matches!(f.fill, Fill::Skipped) {
            inits.push(quote!(#ident: ::core::default::Default::default()));
            continue;
        }
        let local = syn::Ident::new(&format!("__field{i}"), proc_macro2::Span::call_site());
        let ty = &f.ty;
        let value = f.shape.as_ref().and_then(build).ok_or(f)?;
        let key = LitByteStr::new(f.name.as_bytes(), proc_macro2::Span::call_site());
        locals.push(
            quote!(let mut #local: ::core::option::Option<#ty> = ::core::option::Option::None;),
        );
        arms.push(quote!(#key => #local = ::core::option::Option::Some(#value),));
        from_spans.push(quote! {
            if let ::core::option::Option::Some(v) = spans.value(#prop, raw) {
                #local = ::core::option::Option::Some(#value);
            }
        });
        prop += 1;
        inits.push(match f.fill {
            Fill::Required => quote!(#ident: #local?),
            _ => quote!(#ident: #local.unwrap_or_default()),
        });
    }
    // Every property recorded by the check: built from its spans.
    let spans_path = (prop <= SPANS).then(|| {
        quote! {
            if let ::core::option::Option::Some(spans) = spans {
                const _: () = ::core::assert!(#prop <= ::picomcp::derive_support::args::SPANS || !::picomcp::derive_support::args::FAST_ARGS);
                #(#from_spans)*
                return ::core::option::Option::Some(Self { #(#inits),* });
            }
        }
    });
    Ok(quote! {
        #(#locals)*
        #spans_path
        let mut members = #a::Members::new(raw)?;
        loop {
            match members.next_member() {
                #a::Member::Next(key, v, _) => match key {
                    #(#arms)*
                    _ => {}
                },
                #a::Member::End => break,
                _ => return ::core::option::Option::None,
            }
        }
        ::core::option::Option::Some(Self { #(#inits),* })
    })
}

/// The body of a unit-variant enum's `parse_plain`: `(wire name, variant)`.
pub(crate) fn parse_enum_body(variants: &[(String, syn::Ident)]) -> TokenStream2 {
    let arms = variants.iter().map(|(name, v)| {
        let lit = LitByteStr::new(format!("\"{name}\"").as_bytes(), v.span());
        quote!(#lit => ::core::option::Option::Some(Self::#v),)
    });
    quote! {
        match raw {
            #(#arms)*
            _ => ::core::option::Option::None,
        }
    }
}
