//! Derive macros for [picomcp](https://docs.rs/picomcp): a tool's JSON Schema,
//! its structured output writer and a prompt's argument list, from Rust types.
//!
//! Use them through `picomcp` with its feature `derive`
//! (`picomcp::{ToolArgs, ToolOutput, PromptArgs}`); the generated code names
//! only `::picomcp::...` and `::core::...` paths, so it builds for `no_std`
//! targets. Documented in the picomcp README ("Deriving schemas").
//!
//! * `#[derive(ToolArgs)]`: `impl picomcp::derive_support::HasSchema`
//!   (`const SCHEMA`) and, on 64-bit targets, a check of that schema
//!   (`check`); deserializing is serde's (`#[derive(serde::Deserialize)]`
//!   alongside), unless `#[mcp(parse)]` asks for a derived parse too
//!   (`picomcp::derive_support::args::DerivedParse`, built from arguments
//!   the check vouched for). Also for nested structs and unit-variant enums.
//! * `#[derive(ToolOutput)]`: `HasSchema` plus
//!   `picomcp::derive_support::WriteJson` (writes `structuredContent`). A type
//!   derives one of `ToolArgs` / `ToolOutput`, not both (`ToolOutput` already
//!   gives the schema; add `serde::Deserialize` to also take it as input).
//! * `#[derive(PromptArgs)]`: `impl picomcp::derive_support::PromptArguments`
//!   on a struct of `&str` (required) and `Option<&str>` (optional) fields.
//!
//! Modules: `shape` (what a field's type is), `attrs` (the attributes and
//! the rename rules), `schema` (schema codegen), `check` (the derived check
//! and parse), `prompt`
//! (`#[derive(PromptArgs)]`); this file holds the entry points and the
//! `ToolArgs` / `ToolOutput` expansion.

mod attrs;
mod check;
mod prompt;
mod schema;
mod shape;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, LitStr, Result};

use crate::attrs::{Member, parse_container_attrs, parse_field_attrs, wire_name};
use crate::prompt::expand_prompt;
use crate::schema::{field_schema, schema_path, shape_exact};
use crate::shape::{Shape, classify};

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

/// Which derive is expanding.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Args,
    Output,
    Prompt,
}

impl Mode {
    fn derive_name(self) -> &'static str {
        match self {
            Mode::Args => "ToolArgs",
            Mode::Output => "ToolOutput",
            Mode::Prompt => "PromptArgs",
        }
    }
}

/// A `#[serde(...)]` item that `#[mcp(parse)]` cannot follow.
fn serde_unread_error(span: proc_macro2::Span, item: &str) -> Error {
    Error::new(
        span,
        format!(
            "picomcp: `#[mcp(parse)]` builds what serde's derive builds, and does not follow `#[serde({item})]`: drop one of them"
        ),
    )
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

    if let Some(span) = container.parse
        && mode != Mode::Args
    {
        return Err(Error::new(
            span,
            format!("picomcp: `#[mcp(parse)]` applies to `#[derive(ToolArgs)]`, not `{derive}`"),
        ));
    }
    if let Some((span, item)) = &container.serde_unread
        && container.parse.is_some()
    {
        return Err(serde_unread_error(*span, item));
    }
    // The derived parse's fields (`#[mcp(parse)]`), and an enum's variants.
    let mut parse_fields = Vec::new();
    let mut parse_variants = Vec::new();
    let (schema, write_body, exact, check_body) = match &input.data {
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
            // The derived arguments check's properties, while every field
            // is one it covers.
            let mut checked = Some(Vec::new());
            for field in &named.named {
                let a = parse_field_attrs(&field.attrs, Member::Field)?;
                if let Some((span, item)) = &a.serde_unread
                    && container.parse.is_some()
                {
                    return Err(serde_unread_error(*span, item));
                }
                let Some(fident) = &field.ident else { continue };
                if a.serde_skip {
                    parse_fields.push(check::ParseField {
                        ident: fident.clone(),
                        ty: field.ty.clone(),
                        name: String::new(),
                        shape: None,
                        fill: check::Fill::Skipped,
                    });
                    continue;
                }
                let name = wire_name(fident, Member::Field, &a, &container, mode)?;
                let shape = classify(&field.ty, mode)?;
                let fs = field_schema(&field.ty, &shape, &a)?;
                let constrained = a.constraints().next().is_some();
                exact_parts.push(if constrained {
                    quote!(false)
                } else {
                    shape_exact(&shape)
                });
                props.push(quote!(::picomcp::schema::Property::new(#name, #fs)));
                let optional = matches!(shape, Shape::Option(_));
                let is_required = !optional && !a.serde_default;
                if is_required {
                    required.push(name.clone());
                }
                let test = (!constrained)
                    .then(|| check::value_test(&shape, true, container.parse.is_some()))
                    .flatten();
                parse_fields.push(check::ParseField {
                    ident: fident.clone(),
                    ty: field.ty.clone(),
                    name: name.clone(),
                    shape: Some(shape.clone()),
                    fill: if is_required {
                        check::Fill::Required
                    } else {
                        check::Fill::Default
                    },
                });
                checked = match (checked, test) {
                    (Some(mut props), Some(test)) => {
                        props.push(check::Prop {
                            name: name.clone(),
                            test,
                            required: is_required,
                        });
                        Some(props)
                    }
                    _ => None,
                };
                let fspan = field.ty.span();
                // The key as JSON (`"name":`), written as is, when it needs
                // no escape (else the writer escapes it at run time).
                let member = match plain_json_key(&name) {
                    Some(json) => {
                        let json = LitStr::new(&json, fident.span());
                        quote!(object.member_json(#json))
                    }
                    None => quote!(object.member(#name)),
                };
                writes.push(if optional {
                    quote_spanned! {fspan=>
                        if let ::core::option::Option::Some(value) = &self.#fident {
                            ::picomcp::derive_support::WriteJson::write_json(value, #member);
                        }
                    }
                } else {
                    quote_spanned! {fspan=>
                        ::picomcp::derive_support::WriteJson::write_json(&self.#fident, #member);
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
                checked.and_then(|p| check::struct_body(&p, container.deny_unknown_fields)),
            )
        }
        Data::Enum(data) => {
            let mut lits = Vec::new();
            let mut arms = Vec::new();
            let mut names = Vec::new();
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
                let a = parse_field_attrs(&variant.attrs, Member::Variant)?;
                if a.serde_skip {
                    continue;
                }
                let name = wire_name(&variant.ident, Member::Variant, &a, &container, mode)?;
                let v = &variant.ident;
                parse_variants.push((name.clone(), v.clone()));
                lits.push(quote!(::picomcp::schema::Literal::Str(#name)));
                names.push(name.clone());
                arms.push(quote!(Self::#v => v.str(#name),));
            }
            if container.deny_unknown_fields {
                return Err(Error::new(
                    input.ident.span(),
                    "picomcp: deny_unknown_fields applies to structs",
                ));
            }
            (
                quote!(#s::string().with(&::picomcp::schema::Keywords::new().enum_values(&[#(#lits),*])) #tail),
                quote! {
                    #[allow(unreachable_patterns)]
                    match self { #(#arms)* _ => v.null() }
                },
                quote!(true),
                Some(check::enum_body(&names)),
            )
        }
        Data::Union(_) => {
            return Err(Error::new(
                input.ident.span(),
                format!("picomcp: #[derive({derive})] does not support unions"),
            ));
        }
    };

    // A static, so that every use of the schema by reference (the output
    // handler's `EXACT_SCHEMA` claim, `tool!`'s output schema, the input
    // schema a derived check belongs to) is the same address and the server
    // recognises it without comparing schemas.
    let statics = input.generics.lifetimes().map(|_| quote!('static));
    let static_ty = if input.generics.params.is_empty() {
        quote!(#ident)
    } else {
        quote!(#ident<#(#statics),*>)
    };
    let static_name = syn::Ident::new(&format!("__PICOMCP_SCHEMA_{ident}"), ident.span());
    let static_schema = quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        static #static_name: ::picomcp::schema::Schema<'static> =
            <#static_ty as ::picomcp::derive_support::HasSchema>::SCHEMA;
    };
    // The derived arguments check (`derive_support::args`), on the targets
    // that take it (`FAST_ARGS`).
    let (args_check, check_fn) = match &check_body {
        Some(body) => (
            quote! {
                const ARGS_CHECK: ::core::option::Option<&'static ::picomcp::derive_support::args::ArgsCheck> =
                    if ::picomcp::derive_support::args::FAST_ARGS {
                        ::core::option::Option::Some(&::picomcp::derive_support::args::ArgsCheck {
                            schema: &#static_name,
                            check: Self::__picomcp_check_args,
                        })
                    } else {
                        ::core::option::Option::None
                    };
            },
            quote! {
                #[automatically_derived]
                impl #impl_g #ident #ty_g #where_c {
                    #[doc(hidden)]
                    #[allow(dead_code, unused_variables, unreachable_patterns, clippy::all, clippy::pedantic)]
                    fn __picomcp_check_args(raw: &[u8], spans: &mut ::picomcp::derive_support::args::Spans) -> bool {
                        #body
                    }
                }
            },
        ),
        None => (TokenStream2::new(), TokenStream2::new()),
    };
    let parse_impl = match container.parse {
        Some(span) => {
            if check_body.is_none() {
                return Err(Error::new(
                    span,
                    "picomcp: `#[mcp(parse)]` builds on the derived argument check, which a type with value constraints (`minimum`, `max_length`, …), `heapless` strings or lists, or more than 64 fields does not get",
                ));
            }
            let body = match &input.data {
                Data::Enum(_) => check::parse_enum_body(&parse_variants),
                _ => check::parse_struct_body(&parse_fields).map_err(|f| {
                    Error::new(
                        f.ty.span(),
                        format!(
                            "picomcp: `#[mcp(parse)]` does not cover `{}` (it covers `&str`, integers, floats, `bool`, `Option` of those and types with `#[mcp(parse)]`)",
                            shape::show(&f.ty)
                        ),
                    )
                })?,
            };
            let mut generics = input.generics.clone();
            let mut de: syn::LifetimeParam = syn::parse_quote!('__picomcp_de);
            for lt in input.generics.lifetimes() {
                de.bounds.push(lt.lifetime.clone());
            }
            generics.params.insert(0, syn::GenericParam::Lifetime(de));
            let (parse_g, _, parse_where) = generics.split_for_impl();
            quote! {
                #[automatically_derived]
                impl #parse_g ::picomcp::derive_support::args::DerivedParse<'__picomcp_de> for #ident #ty_g #parse_where {
                    const SCHEMA: &'static ::picomcp::schema::Schema<'static> = &#static_name;
                    #[allow(unused_mut, unused_variables, clippy::all, clippy::pedantic)]
                    fn parse_plain(
                        raw: &'__picomcp_de [u8],
                        spans: ::core::option::Option<&::picomcp::derive_support::args::Spans>,
                    ) -> ::core::option::Option<Self> {
                        #body
                    }
                }
            }
        }
        None => TokenStream2::new(),
    };
    let has_schema = quote! {
        #[automatically_derived]
        impl #impl_g ::picomcp::derive_support::HasSchema for #ident #ty_g #where_c {
            const SCHEMA: ::picomcp::schema::Schema<'static> = #schema;
            #args_check
        }
        #static_schema
        #check_fn
        #parse_impl
    };
    Ok(match mode {
        Mode::Args | Mode::Prompt => has_schema,
        Mode::Output => {
            quote! {
            #has_schema
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

/// `"key":`, when `key` is printable ASCII without `"` or `\\` (what the
/// writer would write unescaped); `None` otherwise.
fn plain_json_key(key: &str) -> Option<String> {
    key.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
        .then(|| format!("\"{key}\":"))
}
