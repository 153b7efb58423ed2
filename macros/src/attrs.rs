//! The `#[mcp(...)]` attributes and the `#[serde(...)]` ones that change the
//! wire shape.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Error, Expr, ExprLit, Lit, LitStr, Result};

/// `#[mcp(...)]` and `#[serde(...)]` attributes of a field.
#[derive(Default)]
pub(crate) struct FieldAttrs {
    pub(crate) rename: Option<LitStr>,
    pub(crate) serde_rename: Option<LitStr>,
    pub(crate) serde_default: bool,
    pub(crate) serde_skip: bool,
    pub(crate) description: Option<String>,
    pub(crate) title: Option<LitStr>,
    pub(crate) default: Option<LitStr>,
    pub(crate) minimum: Option<(Span, Expr)>,
    pub(crate) maximum: Option<(Span, Expr)>,
    pub(crate) exclusive_minimum: Option<(Span, Expr)>,
    pub(crate) exclusive_maximum: Option<(Span, Expr)>,
    pub(crate) multiple_of: Option<(Span, Expr)>,
    pub(crate) min_length: Option<(Span, Expr)>,
    pub(crate) max_length: Option<(Span, Expr)>,
    pub(crate) min_items: Option<(Span, Expr)>,
    pub(crate) max_items: Option<(Span, Expr)>,
}

/// Container-level attributes.
#[derive(Default)]
pub(crate) struct ContainerAttrs {
    pub(crate) description: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) deny_unknown_fields: bool,
    pub(crate) rename_all: Option<(Span, String)>,
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

pub(crate) fn parse_field_attrs(attrs: &[syn::Attribute]) -> Result<FieldAttrs> {
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

pub(crate) fn parse_container_attrs(attrs: &[syn::Attribute]) -> Result<ContainerAttrs> {
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

pub(crate) fn apply_rename_all(rule: &(Span, String), ident: &str) -> Result<String> {
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
