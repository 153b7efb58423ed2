//! The derived arguments check (`picomcp::derive_support::args`): a
//! function that walks a call's arguments once and says "surely matches the
//! schema" or "not sure", generated from the same fields as the schema.

use proc_macro2::TokenStream as TokenStream2;
use quote::{quote, quote_spanned};
use syn::LitByteStr;
use syn::spanned::Spanned;

use crate::shape::Shape;

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
pub(crate) fn value_test(shape: &Shape, top: bool) -> Option<TokenStream2> {
    let a = args_path();
    Some(match shape {
        Shape::Str => quote!(#a::is_string(v)),
        Shape::Int(t) => quote!(#a::is_int_in(v, <#t>::MIN as i128, <#t>::MAX as i128)),
        Shape::Float => quote!(#a::is_number(v)),
        Shape::Bool => quote!(#a::is_bool(v)),
        Shape::Option(inner) if top => return value_test(inner, false),
        Shape::Option(inner) => {
            let inner = value_test(inner, false)?;
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
    let mut arms = Vec::new();
    let mut required = 0u64;
    for (i, p) in props.iter().enumerate() {
        let bit = 1u64 << i;
        if p.required {
            required |= bit;
        }
        let key = LitByteStr::new(p.name.as_bytes(), proc_macro2::Span::call_site());
        let test = &p.test;
        arms.push(quote!(#key => (#bit, #test),));
    }
    let unknown = !deny_unknown;
    Some(quote! {
        let ::core::option::Option::Some(mut members) = #a::Members::new(raw) else {
            return false;
        };
        let mut seen = 0u64;
        loop {
            let (bit, ok) = match members.next_member() {
                #a::Member::Next(key, v) => match key {
                    #(#arms)*
                    _ => (0u64, #unknown),
                },
                #a::Member::End => break,
                _ => return false,
            };
            if !ok || seen & bit != 0 {
                return false;
            }
            seen |= bit;
        }
        seen & #required == #required
    })
}

/// The body of a unit-variant enum's check: one of its names.
pub(crate) fn enum_body(names: &[String]) -> TokenStream2 {
    let a = args_path();
    quote!(#a::is_one_of(raw, &[#(#names),*]))
}
