//! A schema as JSON text (`inputSchema` / `outputSchema` in `tools/list`).

use super::{Bound, Literal, MAX_SCHEMA_DEPTH, Schema, Types};
use crate::wire::emit::Writer;

impl Bound<'_> {
    fn write(self, w: &mut Writer<'_>) {
        match self {
            Bound::Int(i) => w.i64(i),
            Bound::Number(n) => w.raw(n.raw().as_bytes()),
        }
    }
}

impl Literal<'_> {
    fn write(self, w: &mut Writer<'_>) {
        match self {
            Literal::Null => w.null(),
            Literal::Bool(b) => w.bool(b),
            Literal::Int(i) => w.i64(i),
            Literal::Str(s) => w.string(s),
        }
    }
}

/// Start the member `k` of an object being written (`first`: no comma yet).
pub(super) fn key(w: &mut Writer<'_>, first: &mut bool, k: &str) {
    if !*first {
        w.raw(b",");
    }
    *first = false;
    w.string(k);
    w.raw(b":");
}

/// `{"NAME":SCHEMA,...}` (`properties`, `$defs`), each schema at `depth`.
pub(super) fn write_members<'x>(
    w: &mut Writer<'_>,
    members: impl Iterator<Item = (&'x str, &'x Schema<'x>)>,
    depth: usize,
) {
    w.raw(b"{");
    for (i, (name, schema)) in members.enumerate() {
        if i > 0 {
            w.raw(b",");
        }
        w.string(name);
        w.raw(b":");
        schema.write_at(w, depth);
    }
    w.raw(b"}");
}

impl Schema<'_> {
    /// Write the schema as JSON.
    pub fn write(&self, w: &mut Writer<'_>) {
        self.write_at(w, 0);
    }

    /// A self-referencing `static` schema is cut at [`MAX_SCHEMA_DEPTH`]
    /// (written as `{}`, "anything"), as the checker stops there too.
    ///
    /// Key order: `$schema`, `$anchor`, `$ref`, then the validation keywords
    /// below, then `allOf`, `anyOf`, `oneOf`, `not`, `if`, `then`, `else`,
    /// `$defs` (the [`Composition`](super::Composition) keywords).
    pub(super) fn write_at(&self, w: &mut Writer<'_>, depth: usize) {
        if depth > MAX_SCHEMA_DEPTH {
            w.raw(b"{}");
            return;
        }
        w.raw(b"{");
        let mut first = true;
        if let Some(c) = self.composition {
            (c.ops.write)(c, w, depth, &mut first, true);
        }
        let mut key = |w: &mut Writer<'_>, k: &str| key(w, &mut first, k);
        if self.types.count() == 1 {
            key(w, "type");
            for (t, name) in Types::NAMES {
                if self.types.contains(t) {
                    w.string(name);
                }
            }
        } else if self.types.count() > 1 {
            key(w, "type");
            w.raw(b"[");
            let mut first_t = true;
            for (t, name) in Types::NAMES {
                if self.types.contains(t) {
                    if !first_t {
                        w.raw(b",");
                    }
                    first_t = false;
                    w.string(name);
                }
            }
            w.raw(b"]");
        }
        if let Some(t) = self.title {
            key(w, "title");
            w.string(t);
        }
        if let Some(d) = self.description {
            key(w, "description");
            w.string(d);
        }
        if let Some(h) = self.header {
            key(w, "x-mcp-header");
            w.string(h);
        }
        // An object schema always lists its properties (MCP clients expect
        // `properties` on every `inputSchema`, even when empty).
        if !self.properties.is_empty() || self.types == Types::OBJECT {
            key(w, "properties");
            let members = self.properties.iter().map(|p| (p.name, &p.schema));
            write_members(w, members, depth + 1);
        }
        if !self.required.is_empty() {
            key(w, "required");
            w.raw(b"[");
            for (i, r) in self.required.iter().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                w.string(r);
            }
            w.raw(b"]");
        }
        if let Some(a) = self.additional_properties {
            key(w, "additionalProperties");
            w.bool(a);
        }
        // Keywords::NONE is never read here: no copy of it in flash.
        if let Some(k) = self.keywords {
            if !k.enum_values.is_empty() {
                key(w, "enum");
                w.raw(b"[");
                for (i, l) in k.enum_values.iter().enumerate() {
                    if i > 0 {
                        w.raw(b",");
                    }
                    l.write(w);
                }
                w.raw(b"]");
            }
            if let Some(c) = k.const_value {
                key(w, "const");
                c.write(w);
            }
            let bounds = [
                ("minimum", k.minimum),
                ("maximum", k.maximum),
                ("exclusiveMinimum", k.exclusive_minimum),
                ("exclusiveMaximum", k.exclusive_maximum),
            ];
            for (name, b) in bounds {
                if let Some(b) = b {
                    key(w, name);
                    b.write(w);
                }
            }
            if let Some(m) = k.multiple_of {
                key(w, "multipleOf");
                w.u64(m);
            }
            let counts = [("minLength", k.min_length), ("maxLength", k.max_length)];
            for (name, c) in counts {
                if let Some(c) = c {
                    key(w, name);
                    w.u64(u64::from(c));
                }
            }
        }
        if let Some(items) = self.items {
            key(w, "items");
            items.write_at(w, depth + 1);
        }
        if let Some(k) = self.keywords {
            let counts = [("minItems", k.min_items), ("maxItems", k.max_items)];
            for (name, c) in counts {
                if let Some(c) = c {
                    key(w, name);
                    w.u64(u64::from(c));
                }
            }
            if let Some(d) = k.default {
                key(w, "default");
                w.raw_str(d);
            }
        }
        if let Some(c) = self.composition {
            (c.ops.write)(c, w, depth, &mut first, false);
        }
        w.raw(b"}");
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::LOOP;
    use super::*;
    use crate::schema::Keywords;
    use crate::wire::json::{Limits, Value};

    #[test]
    fn emits_schema_text() {
        let mut buf = [0u8; 512];
        let mut w = Writer::new(&mut buf);
        Schema::string()
            .nullable()
            .description("d")
            .with(&Keywords::new().default_json("null"))
            .write(&mut w);
        let n = w.finish().unwrap();
        assert_eq!(
            &buf[..n],
            br#"{"type":["string","null"],"description":"d","default":null}"#
        );
    }

    #[test]
    fn self_referencing_schema_is_emitted_bounded() {
        let mut buf = std::vec![0u8; 4096];
        let mut w = Writer::new(&mut buf);
        LOOP.write(&mut w);
        let n = w.finish().unwrap();
        assert!(Value::parse(&buf[..n], &Limits::DEFAULT.max_depth(64)).is_ok());
    }
}
