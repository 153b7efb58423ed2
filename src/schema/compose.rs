//! The JSON Schema 2020-12 keywords of a [`Composition`]: its `const`
//! builders, and the code that checks and writes them.
//!
//! That code is reached only through the [`Ops`] pointers that
//! [`Composition::new`] stores, so it is linked only into programs that
//! build a `Composition`.

use super::check::check;
use super::emit::{key, write_members};
use super::{Composition, Constraint, Def, Ops, Schema, Walk};
use crate::wire::emit::{Decimal, Writer};
use crate::wire::json::Value;
use core::fmt;

impl<'s> Composition<'s> {
    /// No keyword set; add them with the builders below.
    pub const fn new() -> Self {
        Composition {
            dialect: None,
            anchor: None,
            reference: None,
            defs: &[],
            all_of: &[],
            any_of: &[],
            one_of: &[],
            not: None,
            if_: None,
            then: None,
            else_: None,
            ops: Ops {
                check: check_composition,
                write: write_composition,
            },
        }
    }

    /// Set `$schema` (the dialect URI, emitted only), e.g.
    /// [`DRAFT_2020_12`](super::DRAFT_2020_12).
    pub const fn dialect(mut self, uri: &'s str) -> Self {
        self.dialect = Some(uri);
        self
    }

    /// Set `$anchor`.
    pub const fn anchor(mut self, name: &'s str) -> Self {
        self.anchor = Some(name);
        self
    }

    /// Set `$ref`: `#` (the root), `#/$defs/NAME` or `#ANCHOR`. Any other
    /// reference is written as given but fails every check.
    pub const fn reference(mut self, reference: &'s str) -> Self {
        self.reference = Some(reference);
        self
    }

    /// Set `$defs`.
    pub const fn defs(mut self, defs: &'s [Def<'s>]) -> Self {
        self.defs = defs;
        self
    }

    /// Set `allOf`.
    pub const fn all_of(mut self, schemas: &'s [Schema<'s>]) -> Self {
        self.all_of = schemas;
        self
    }

    /// Set `anyOf`.
    pub const fn any_of(mut self, schemas: &'s [Schema<'s>]) -> Self {
        self.any_of = schemas;
        self
    }

    /// Set `oneOf`.
    pub const fn one_of(mut self, schemas: &'s [Schema<'s>]) -> Self {
        self.one_of = schemas;
        self
    }

    /// Set `not`.
    pub const fn not(mut self, schema: &'s Schema<'s>) -> Self {
        self.not = Some(schema);
        self
    }

    /// Set `if`.
    pub const fn if_(mut self, schema: &'s Schema<'s>) -> Self {
        self.if_ = Some(schema);
        self
    }

    /// Set `then`.
    pub const fn then(mut self, schema: &'s Schema<'s>) -> Self {
        self.then = Some(schema);
        self
    }

    /// Set `else`.
    pub const fn else_(mut self, schema: &'s Schema<'s>) -> Self {
        self.else_ = Some(schema);
        self
    }
}

impl Default for Composition<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Record a violation of one of these keywords, with its text.
fn fail<'s>(walk: &mut Walk<'s, '_>, constraint: Constraint<'s>) -> bool {
    walk.fail_as(constraint, Some(describe))
}

/// The text of a violation of one of these keywords (here rather than with
/// the others in `violation.rs`, so it is linked only with this code).
fn describe(c: &Constraint<'_>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Constraint::AnyOf => f.write_str(" must match at least one schema of anyOf"),
        Constraint::OneOf(n) => {
            f.write_str(" must match exactly one schema of oneOf (it matches ")?;
            fmt::Display::fmt(&Decimal::from(*n), f)?;
            f.write_str(")")
        }
        Constraint::Not => f.write_str(" must not match the schema in not"),
        Constraint::Unresolved(r) => {
            f.write_str(" cannot be checked: $ref \"")?;
            f.write_str(r)?;
            f.write_str("\" does not resolve")
        }
        _ => Ok(()),
    }
}

/// The schema a local `$ref` names: `#` (the root), `#/$defs/NAME` (a
/// definition of the root) or `#ANCHOR` (the root or a definition of the
/// root carrying that `$anchor`).
fn resolve<'s>(root: &'s Schema<'s>, reference: &str) -> Option<&'s Schema<'s>> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    let defs = root.composition.map_or(&[][..], |c| c.defs);
    if let Some(name) = fragment.strip_prefix("/$defs/") {
        return defs.iter().find(|d| d.name == name).map(|d| d.schema);
    }
    if fragment.contains('/') {
        return None;
    }
    let anchored = |s: &Schema<'_>| s.composition.and_then(|c| c.anchor) == Some(fragment);
    if anchored(root) {
        return Some(root);
    }
    defs.iter().map(|d| d.schema).find(|s| anchored(s))
}

/// Whether `v` matches `s`, for a branch whose failure is not itself a
/// violation (`anyOf`, `oneOf`, `not`, `if`); the path is restored.
/// `None` when the branch could not be checked (too deep, or a `$ref` that
/// does not resolve): then the whole check fails, with that violation.
fn matches<'s: 'a, 'a>(
    s: &'s Schema<'s>,
    v: &Value<'a>,
    depth: usize,
    walk: &mut Walk<'s, 'a>,
) -> Option<bool> {
    let at = walk.path.depth();
    let ok = check(s, v, depth, walk);
    walk.path.truncate(at);
    let broken = matches!(
        walk.found.map(|f| f.constraint),
        Some(Constraint::TooDeep | Constraint::Unresolved(_))
    );
    if !ok && broken { None } else { Some(ok) }
}

/// `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, then `if`/`then`/`else`, each
/// against the value itself, one level deeper.
fn check_composition<'s, 'a>(
    c: &'s Composition<'s>,
    v: &Value<'a>,
    depth: usize,
    walk: &mut Walk<'s, 'a>,
) -> bool {
    let depth = depth + 1;
    if let Some(r) = c.reference {
        match resolve(walk.root, r) {
            Some(target) => {
                if !check(target, v, depth, walk) {
                    return false;
                }
            }
            None => return fail(walk, Constraint::Unresolved(r)),
        }
    }
    for s in c.all_of {
        if !check(s, v, depth, walk) {
            return false;
        }
    }
    if !c.any_of.is_empty() {
        let mut any = false;
        for s in c.any_of {
            match matches(s, v, depth, walk) {
                None => return false,
                Some(true) => {
                    any = true;
                    break;
                }
                Some(false) => {}
            }
        }
        if !any {
            return fail(walk, Constraint::AnyOf);
        }
    }
    if !c.one_of.is_empty() {
        let mut n = 0;
        for s in c.one_of {
            match matches(s, v, depth, walk) {
                None => return false,
                Some(hit) => n += usize::from(hit),
            }
        }
        if n != 1 {
            return fail(walk, Constraint::OneOf(n));
        }
    }
    if let Some(s) = c.not {
        match matches(s, v, depth, walk) {
            None => return false,
            Some(true) => return fail(walk, Constraint::Not),
            Some(false) => {}
        }
    }
    if let Some(s) = c.if_ {
        let branch = match matches(s, v, depth, walk) {
            None => return false,
            Some(true) => c.then,
            Some(false) => c.else_,
        };
        if let Some(b) = branch
            && !check(b, v, depth, walk)
        {
            return false;
        }
    }
    true
}

/// The keywords before (`head`: `$schema`, `$anchor`, `$ref`) or after the
/// validation keywords (`allOf`, `anyOf`, `oneOf`, `not`, `if`, `then`,
/// `else`, `$defs`).
fn write_composition(
    c: &Composition<'_>,
    w: &mut Writer<'_>,
    depth: usize,
    first: &mut bool,
    head: bool,
) {
    if head {
        let strings = [
            ("$schema", c.dialect),
            ("$anchor", c.anchor),
            ("$ref", c.reference),
        ];
        for (name, s) in strings {
            if let Some(s) = s {
                key(w, first, name);
                w.string(s);
            }
        }
        return;
    }
    let lists = [
        ("allOf", c.all_of),
        ("anyOf", c.any_of),
        ("oneOf", c.one_of),
    ];
    for (name, list) in lists {
        if !list.is_empty() {
            key(w, first, name);
            w.raw(b"[");
            for (i, s) in list.iter().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                s.write_at(w, depth + 1);
            }
            w.raw(b"]");
        }
    }
    let single = [
        ("not", c.not),
        ("if", c.if_),
        ("then", c.then),
        ("else", c.else_),
    ];
    for (name, s) in single {
        if let Some(s) = s {
            key(w, first, name);
            s.write_at(w, depth + 1);
        }
    }
    if !c.defs.is_empty() {
        key(w, first, "$defs");
        write_members(w, c.defs.iter().map(|d| (d.name, d.schema)), depth + 1);
    }
}
