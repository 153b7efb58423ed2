//! `#[derive(PromptArgs)]`: a prompt's argument list and typed access.

use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, Result};

use crate::Mode;
use crate::attrs::{Member, parse_container_attrs, parse_field_attrs, wire_name};
use crate::shape::{Shape, classify, unsupported};

/// The `PromptArguments` impl of a struct of `&str` (required) and
/// `Option<&str>` (optional) fields, named on the wire as struct fields are
/// (`wire_name`).
pub(crate) fn expand_prompt(input: &DeriveInput) -> Result<TokenStream2> {
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
        let a = parse_field_attrs(&field.attrs, Member::Field)?;
        let bad = match &a.default {
            Some(_) => Some("default"),
            None => a.constraints().next().map(|(name, ..)| name),
        };
        if let Some(name) = bad {
            return Err(Error::new(
                field.span(),
                format!("picomcp: prompt arguments take no `{name}` (they are plain strings)"),
            ));
        }
        let Some(fident) = &field.ident else { continue };
        let name = wire_name(fident, Member::Field, &a, &container, Mode::Prompt)?;
        let required = match classify(&field.ty, Mode::Prompt) {
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
