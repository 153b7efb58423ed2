//! What broke a schema, and where: the violation and its message.

use core::fmt;

use super::vocab::{Bound, Literal, Types};
use crate::wire::emit::Decimal;
use crate::wire::json::JsonStr;

/// One step of a JSON pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Seg<'a> {
    Key(JsonStr<'a>),
    Name(&'a str),
    Index(usize),
}

/// Bounded path from the root to the value being checked.
const MAX_PATH: usize = 8;

#[derive(Clone, Copy, Debug)]
pub(super) struct PathBuf<'a> {
    segs: [Option<Seg<'a>>; MAX_PATH],
    len: usize,
}

impl<'a> PathBuf<'a> {
    pub(super) fn new() -> Self {
        Self {
            segs: [None; MAX_PATH],
            len: 0,
        }
    }

    pub(super) fn push(&mut self, s: Seg<'a>) {
        if let Some(slot) = self.segs.get_mut(self.len) {
            *slot = Some(s);
        }
        self.len += 1;
    }

    pub(super) fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
        if let Some(slot) = self.segs.get_mut(self.len) {
            *slot = None;
        }
    }

    /// How many segments deep (may exceed what is kept).
    pub(super) fn depth(&self) -> usize {
        self.len
    }

    /// Back to `depth` segments (after a branch that failed part-way).
    pub(super) fn truncate(&mut self, depth: usize) {
        while self.len > depth {
            self.pop();
        }
    }
}

/// The constraint a value broke.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Constraint<'s> {
    /// Wrong JSON type.
    Type(Types),
    /// A required property is missing (the path names it).
    Required,
    /// A property not allowed by `additionalProperties: false`.
    NotAllowed,
    /// A declared property appears twice in the object.
    Duplicate,
    /// Not one of the `enum` values.
    Enum(&'s [Literal<'s>]),
    /// Not the `const` value.
    Const(Literal<'s>),
    /// Below `minimum`.
    Minimum(Bound<'s>),
    /// Above `maximum`.
    Maximum(Bound<'s>),
    /// Not above `exclusiveMinimum`.
    ExclusiveMinimum(Bound<'s>),
    /// Not below `exclusiveMaximum`.
    ExclusiveMaximum(Bound<'s>),
    /// Not a multiple of `multipleOf`.
    MultipleOf(u64),
    /// Shorter than `minLength`.
    MinLength(u32),
    /// Longer than `maxLength`.
    MaxLength(u32),
    /// Fewer than `minItems`.
    MinItems(u32),
    /// More than `maxItems`.
    MaxItems(u32),
    /// Nested deeper than [`MAX_SCHEMA_DEPTH`](super::MAX_SCHEMA_DEPTH)
    /// (a `$ref` cycle ends here too).
    TooDeep,
    /// Matches no schema of `anyOf`.
    AnyOf,
    /// Matches this many schemas of `oneOf` (not exactly one).
    OneOf(usize),
    /// Matches the schema of `not`.
    Not,
    /// A `$ref` that does not resolve (only `#`, `#/$defs/NAME` and
    /// `#ANCHOR` do); the schema cannot be checked, so nothing passes it.
    Unresolved(&'s str),
}

/// Where the arguments broke the schema, and how.
///
/// Displays as `PATH CONSTRAINT`, e.g. `/n must be <= 50`, `/title is
/// required`, `/tags/2 must be of type string`.
#[derive(Clone, Copy, Debug)]
pub struct Violation<'s, 'a> {
    pub(super) path: PathBuf<'a>,
    /// The broken constraint.
    pub constraint: Constraint<'s>,
    /// How the constraint reads, when the code that found it says so (the
    /// 2020-12 applicators, whose messages are then linked only with them).
    pub(super) describe: Option<Describe>,
}

/// Writes a constraint's text (after the path).
pub(super) type Describe = fn(&Constraint<'_>, &mut fmt::Formatter<'_>) -> fmt::Result;

impl fmt::Display for Violation<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.len == 0 {
            f.write_str("/")?;
        }
        for seg in self
            .path
            .segs
            .iter()
            .take(self.path.len.min(MAX_PATH))
            .flatten()
        {
            f.write_str("/")?;
            match seg {
                // On 64-bit targets a name, and a key without an escape
                // (most), in runs; small ones keep the one loop (flash).
                Seg::Key(k) => match cfg!(target_pointer_width = "64")
                    .then(|| k.as_plain())
                    .flatten()
                {
                    Some(plain) => pointer_str(f, plain)?,
                    None => pointer_chars(f, k.chars())?,
                },
                Seg::Name(n) if cfg!(target_pointer_width = "64") => pointer_str(f, n)?,
                Seg::Name(n) => pointer_chars(f, n.chars())?,
                Seg::Index(i) => Decimal::from(*i).fmt(f)?,
            }
        }
        if self.path.len > MAX_PATH {
            f.write_str("/...")?;
        }
        if let Some(describe) = self.describe {
            return describe(&self.constraint, f);
        }
        // Plain `write_str` and `Display::fmt` calls rather than `write!`:
        // no format arguments to build, less flash on a microcontroller.
        // `text`, then a value, then `tail`: plain `write_str`/`fmt` calls
        // rather than `write!` (no format arguments, less flash).
        let count;
        let (text, then, tail): (&str, Option<&dyn fmt::Display>, &str) = match &self.constraint {
            Constraint::Type(t) => (" must be of type ", Some(t), ""),
            Constraint::Required => (" is required", None, ""),
            Constraint::NotAllowed => (" is not an allowed property", None, ""),
            Constraint::Duplicate => (" appears more than once", None, ""),
            Constraint::Enum(values) => {
                f.write_str(" must be one of ")?;
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    v.fmt(f)?;
                }
                return Ok(());
            }
            Constraint::Const(v) => (" must be ", Some(v), ""),
            Constraint::Minimum(b) => (" must be >= ", Some(b), ""),
            Constraint::Maximum(b) => (" must be <= ", Some(b), ""),
            Constraint::ExclusiveMinimum(b) => (" must be > ", Some(b), ""),
            Constraint::ExclusiveMaximum(b) => (" must be < ", Some(b), ""),
            Constraint::MultipleOf(m) => {
                count = Decimal::from(*m);
                (" must be a multiple of ", Some(&count), "")
            }
            Constraint::MinLength(n)
            | Constraint::MaxLength(n)
            | Constraint::MinItems(n)
            | Constraint::MaxItems(n) => {
                count = Decimal::from(*n);
                let (text, tail) = match self.constraint {
                    Constraint::MinLength(_) => (" must be at least ", " characters long"),
                    Constraint::MaxLength(_) => (" must be at most ", " characters long"),
                    Constraint::MinItems(_) => (" must have at least ", " items"),
                    _ => (" must have at most ", " items"),
                };
                (text, Some(&count), tail)
            }
            Constraint::TooDeep => (" is nested too deeply", None, ""),
            // Described by `compose.rs` (`describe` above).
            Constraint::AnyOf
            | Constraint::OneOf(_)
            | Constraint::Not
            | Constraint::Unresolved(_) => ("", None, ""),
        };
        f.write_str(text)?;
        if let Some(d) = then {
            d.fmt(f)?;
        }
        f.write_str(tail)
    }
}

/// `s` with JSON Pointer escaping (`~` → `~0`, `/` → `~1`): the runs
/// between `~` and `/` written whole, one call into the formatter each
/// (a character at a time, the bookshop's schema rejection cost 98
/// instructions more: `tools/call-wrongtype` in `scripts/list_cost.sh`).
fn pointer_str(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    let mut rest = s;
    // `~` and `/` are ASCII: every split is at a character boundary.
    while let Some(at) = rest.bytes().position(|b| b == b'~' || b == b'/') {
        let (run, tail) = (rest.get(..at), rest.get(at + 1..));
        f.write_str(run.unwrap_or_default())?;
        f.write_str(if rest.as_bytes().get(at) == Some(&b'~') {
            "~0"
        } else {
            "~1"
        })?;
        rest = tail.unwrap_or_default();
    }
    f.write_str(rest)
}

/// JSON Pointer escaping of each of `chars`.
#[inline]
fn pointer_chars(f: &mut fmt::Formatter<'_>, chars: impl Iterator<Item = char>) -> fmt::Result {
    for c in chars {
        pointer_char(f, c)?;
    }
    Ok(())
}

/// JSON Pointer escaping of one character.
fn pointer_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    match c {
        '~' => f.write_str("~0"),
        '/' => f.write_str("~1"),
        c => fmt::Write::write_char(f, c),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// `pointer_str` writes what the character-at-a-time escaping writes.
    #[test]
    fn pointer_runs_are_escaped_as_characters_are() {
        struct Runs<'a>(&'a str);
        impl fmt::Display for Runs<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                pointer_str(f, self.0)
            }
        }
        // The escaping a character at a time.
        struct Chars<'a>(&'a str);
        impl fmt::Display for Chars<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                pointer_chars(f, self.0.chars())
            }
        }
        for s in ["", "a", "~", "/", "a~b/c", "~~//", "/é~ü/", "title", "x/y~"] {
            let (runs, chars) = (std::format!("{}", Runs(s)), std::format!("{}", Chars(s)));
            assert_eq!(runs, chars, "{s}");
        }
        assert_eq!(std::format!("{}", Runs("a~b/c")), "a~0b~1c");
    }
}
