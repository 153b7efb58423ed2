//! The `#[mcp(...)]` attributes and the `#[serde(...)]` ones that change the
//! wire shape, and the one rule for a member's name on the wire.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Error, Expr, ExprLit, Lit, LitStr, Result};

use crate::Mode;

/// How a constraint keyword applies to a field, and how it is emitted.
#[derive(Clone, Copy)]
pub(crate) enum Takes {
    /// `minimum` / `maximum`: numbers; a float literal becomes
    /// `<keyword>_decimal("text")`, anything else `<keyword>(expr)`.
    Bound,
    /// `exclusive_minimum` / `exclusive_maximum`: numbers, as a `Bound`.
    ExclusiveBound,
    /// `multiple_of`: integers.
    Multiple,
    /// `min_length` / `max_length`: strings.
    Length,
    /// `min_items` / `max_items`: arrays.
    Items,
}

/// The constraint keywords of `#[mcp(...)]`, the one list: parsing, the
/// "unknown attribute" message, the exactness of an output schema, what
/// prompt arguments and enum variants reject, and the order the schema
/// applies them in all read it. Each keyword is also the name of the
/// `picomcp::schema::Schema` builder method it calls.
pub(crate) const CONSTRAINTS: [(&str, Takes); 9] = [
    ("minimum", Takes::Bound),
    ("maximum", Takes::Bound),
    ("exclusive_minimum", Takes::ExclusiveBound),
    ("exclusive_maximum", Takes::ExclusiveBound),
    ("multiple_of", Takes::Multiple),
    ("min_length", Takes::Length),
    ("max_length", Takes::Length),
    ("min_items", Takes::Items),
    ("max_items", Takes::Items),
];

/// `#[mcp(...)]` and `#[serde(...)]` attributes of a field (or of a unit
/// variant, which takes no constraints).
#[derive(Default)]
pub(crate) struct FieldAttrs {
    pub(crate) rename: Option<LitStr>,
    pub(crate) serde_rename: Option<LitStr>,
    pub(crate) serde_default: bool,
    pub(crate) serde_skip: bool,
    pub(crate) description: Option<String>,
    pub(crate) title: Option<LitStr>,
    pub(crate) default: Option<LitStr>,
    /// A `#[serde(...)]` item the derive does not read that changes how
    /// serde deserializes (its span and name): a derived parse
    /// (`#[mcp(parse)]`) could not build what serde builds.
    pub(crate) serde_unread: Option<(Span, String)>,
    /// Per entry of [`CONSTRAINTS`], in its order: the keyword's span and
    /// the value.
    constraints: [Option<(Span, Expr)>; CONSTRAINTS.len()],
}

impl FieldAttrs {
    /// The constraints given, in the order of [`CONSTRAINTS`]: keyword,
    /// how it applies, the keyword's span, the value.
    pub(crate) fn constraints(&self) -> impl Iterator<Item = (&'static str, Takes, Span, &Expr)> {
        CONSTRAINTS
            .iter()
            .zip(&self.constraints)
            .filter_map(|(&(name, takes), v)| v.as_ref().map(|(span, e)| (name, takes, *span, e)))
    }
}

/// Container-level attributes.
#[derive(Default)]
pub(crate) struct ContainerAttrs {
    pub(crate) description: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) deny_unknown_fields: bool,
    pub(crate) rename_all: Option<(Span, String)>,
    /// `#[mcp(parse)]`: the derive also builds the value (`DerivedParse`).
    pub(crate) parse: Option<Span>,
    /// As [`FieldAttrs::serde_unread`], on the container.
    pub(crate) serde_unread: Option<(Span, String)>,
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

/// What carries a wire name: a struct field (also a prompt argument) or a
/// unit variant of an enum.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Member {
    Field,
    Variant,
}

/// The attributes of a field (`Member::Field`) or of a unit variant
/// (`Member::Variant`: constraints are rejected, a variant is a string
/// value).
pub(crate) fn parse_field_attrs(attrs: &[syn::Attribute], member: Member) -> Result<FieldAttrs> {
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
                match key.as_str() {
                    "rename" => f.rename = Some(meta.value()?.parse()?),
                    "description" => f.description = Some(meta.value()?.parse::<LitStr>()?.value()),
                    "title" => f.title = Some(meta.value()?.parse()?),
                    "default" => f.default = Some(meta.value()?.parse()?),
                    _ => match CONSTRAINTS
                        .iter()
                        .position(|(name, _)| *name == key)
                        .and_then(|i| f.constraints.get_mut(i))
                    {
                        Some(_) if member == Member::Variant => {
                            return Err(meta.error(format!(
                                "picomcp: `{key}` does not apply to an enum variant (a variant is a string value)"
                            )));
                        }
                        Some(slot) => *slot = Some((span, meta.value()?.parse::<Expr>()?)),
                        None => {
                            let mut expected = String::from("rename, description, title, default");
                            for (name, _) in CONSTRAINTS {
                                expected.push_str(", ");
                                expected.push_str(name);
                            }
                            return Err(meta.error(format!(
                                "unknown picomcp field attribute; expected one of: {expected}"
                            )));
                        }
                    },
                }
                Ok(())
            })?;
        } else if attr.path().is_ident("serde") {
            // Read what changes the wire shape; ignore the rest.
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    if let Ok(v) = meta.value() {
                        f.serde_rename = v.parse().ok();
                    } else {
                        unread(&mut f.serde_unread, &meta);
                        skip_serde_meta(&meta);
                    }
                } else if meta.path.is_ident("default") {
                    f.serde_default = true;
                    if let Ok(v) = meta.value() {
                        // `default = "path"`: a function the derive does not call.
                        unread(&mut f.serde_unread, &meta);
                        let _: Option<LitStr> = v.parse().ok();
                    }
                } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
                    f.serde_skip = true;
                } else {
                    if !SERDE_NOT_READING.iter().any(|k| meta.path.is_ident(k)) {
                        unread(&mut f.serde_unread, &meta);
                    }
                    skip_serde_meta(&meta);
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
                } else if meta.path.is_ident("parse") {
                    c.parse = Some(meta.path.span());
                } else {
                    return Err(meta.error(
                        "unknown picomcp container attribute; expected one of: description, title, deny_unknown_fields, rename_all, parse",
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
                    } else {
                        unread(&mut c.serde_unread, &meta);
                        skip_serde_meta(&meta);
                    }
                } else {
                    if !SERDE_CONTAINER_NOT_READING
                        .iter()
                        .any(|k| meta.path.is_ident(k))
                    {
                        unread(&mut c.serde_unread, &meta);
                    }
                    skip_serde_meta(&meta);
                }
                Ok(())
            });
        }
    }
    Ok(c)
}

/// Field items of `#[serde(...)]` that do not change what serde's
/// `Deserialize` builds from a JSON object (serializing only, or what a
/// `&str` field does anyway).
const SERDE_NOT_READING: &[&str] = &[
    "skip_serializing",
    "skip_serializing_if",
    "serialize_with",
    "borrow",
];

/// Container items of `#[serde(...)]` that do not change what serde's
/// `Deserialize` builds from a JSON object.
const SERDE_CONTAINER_NOT_READING: &[&str] = &["bound", "crate", "rename", "expecting"];

/// Note the first serde item a derived parse could not follow.
fn unread(slot: &mut Option<(Span, String)>, meta: &ParseNestedMeta<'_>) {
    if slot.is_none() {
        let name = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        *slot = Some((meta.path.span(), name));
    }
}

/// Step over a serde item picomcp does not read (`name`, `name = value` or
/// `name(key = value, ...)`), so the items after it are still read.
fn skip_serde_meta(meta: &ParseNestedMeta<'_>) {
    if let Ok(v) = meta.value() {
        let _: Option<Expr> = v.parse().ok();
    } else if meta.input.peek(syn::token::Paren) {
        let _ = meta.parse_nested_meta(|m| {
            if let Ok(v) = m.value() {
                let _: Option<Expr> = v.parse().ok();
            }
            Ok(())
        });
    }
}

/// The name of a field, variant or prompt argument on the wire (in the
/// schema, the output writer, a prompt's argument list), the one rule for
/// all three, serde's: `#[serde(rename)]` or `#[mcp(rename)]` (both given,
/// they must agree; for `ToolArgs`, which serde deserializes, the rename
/// must be serde's), else the container's `rename_all` applied to the
/// identifier without its `r#`.
pub(crate) fn wire_name(
    ident: &syn::Ident,
    member: Member,
    a: &FieldAttrs,
    container: &ContainerAttrs,
    mode: Mode,
) -> Result<String> {
    let raw = ident.to_string();
    let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
    Ok(match (&a.rename, &a.serde_rename) {
        (Some(r), Some(sr)) if r.value() != sr.value() => {
            return Err(Error::new(
                r.span(),
                "picomcp: `#[mcp(rename)]` and `#[serde(rename)]` disagree",
            ));
        }
        (Some(r), None) if mode == Mode::Args => {
            let why = match member {
                Member::Field => " (it names the field for the schema too)",
                Member::Variant => "",
            };
            return Err(Error::new(
                r.span(),
                format!(
                    "picomcp: serde deserializes ToolArgs: write `#[serde(rename = \"{}\")]`{why}",
                    r.value()
                ),
            ));
        }
        (Some(r), _) | (None, Some(r)) => r.value(),
        (None, None) => match &container.rename_all {
            Some(rule) => apply_rename_all(rule, &raw)?,
            None => raw,
        },
    })
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
