//! A tool's descriptor: the static data `tools/list` lists (and a sampling
//! request can offer the client's model). The handler side is
//! [`crate::tool`](mod@crate::tool).

use crate::mcp::{Fields, Icon, write_icons, write_naming};
use crate::schema::Schema;
use crate::wire::emit::Writer;

/// Tool behaviour hints (`ToolAnnotations`, 2025-03-26+).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ToolAnnotations<'s> {
    /// Display title.
    pub title: Option<&'s str>,
    /// Does not modify its environment.
    pub read_only_hint: Option<bool>,
    /// May perform destructive updates.
    pub destructive_hint: Option<bool>,
    /// Repeated calls with the same arguments have no further effect.
    pub idempotent_hint: Option<bool>,
    /// Interacts with an open world of external entities.
    pub open_world_hint: Option<bool>,
}

impl<'s> ToolAnnotations<'s> {
    /// No hints.
    pub const fn new() -> Self {
        Self {
            title: None,
            read_only_hint: None,
            destructive_hint: None,
            idempotent_hint: None,
            open_world_hint: None,
        }
    }

    /// Set `title`.
    pub const fn title(mut self, t: &'s str) -> Self {
        self.title = Some(t);
        self
    }

    /// Set `readOnlyHint`.
    pub const fn read_only(mut self, b: bool) -> Self {
        self.read_only_hint = Some(b);
        self
    }

    /// Set `destructiveHint`.
    pub const fn destructive(mut self, b: bool) -> Self {
        self.destructive_hint = Some(b);
        self
    }

    /// Set `idempotentHint`.
    pub const fn idempotent(mut self, b: bool) -> Self {
        self.idempotent_hint = Some(b);
        self
    }

    /// Set `openWorldHint`.
    pub const fn open_world(mut self, b: bool) -> Self {
        self.open_world_hint = Some(b);
        self
    }
}

/// A tool's static description, listed by `tools/list`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ToolDescriptor<'s> {
    /// Unique name.
    pub name: &'s str,
    /// Display title (2025-06-18+).
    pub title: Option<&'s str>,
    /// What the tool does, for the model.
    pub description: Option<&'s str>,
    /// Schema the arguments are checked against before the handler runs.
    pub input_schema: &'s Schema<'s>,
    /// Schema of `structuredContent` (2025-06-18+); when set, every success
    /// must carry structured content that matches it.
    pub output_schema: Option<&'s Schema<'s>>,
    /// Behaviour hints (2025-03-26+).
    pub annotations: Option<ToolAnnotations<'s>>,
    /// Icons (2025-11-25+).
    pub icons: &'s [Icon<'s>],
    /// The oldest protocol version the tool is offered to (listed and
    /// callable); e.g. a tool that needs MRTR input sets 2026-07-28.
    pub since: Option<crate::mcp::ProtocolVersion>,
    /// The derived check of `input_schema`, set by [`tool!`](crate::tool!)
    /// for a derived argument type (see [`crate::derive_support::args`]).
    #[doc(hidden)]
    pub args_check: Option<&'static crate::schema::derived::ArgsCheck>,
}

impl<'s> ToolDescriptor<'s> {
    /// A tool with a name and an input schema.
    pub const fn new(name: &'s str, input_schema: &'s Schema<'s>) -> Self {
        Self {
            name,
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: &[],
            since: None,
            args_check: None,
        }
    }

    /// Attach a derived argument check: its schema becomes the input
    /// schema (what [`tool!`](crate::tool!) does for a derived type).
    #[doc(hidden)]
    pub const fn args_check(
        mut self,
        check: Option<&'static crate::schema::derived::ArgsCheck>,
    ) -> Self {
        if let Some(c) = check {
            self.input_schema = c.schema;
        }
        self.args_check = check;
        self
    }

    /// Check arguments against the input schema: the derived check first,
    /// when it applies and is sure, else [`Schema::validate`]. `Ok` holds
    /// the derived check's schema when that check vouched for the
    /// arguments (what a derived parse builds on), `None` when the full
    /// check accepted them. Inlined: on small targets, with no derived
    /// checks, the `None` is then a constant (76 B of flash otherwise).
    #[inline(always)]
    pub(crate) fn check_arguments<'a>(
        &'s self,
        args: &crate::wire::json::Value<'a>,
        spans: &mut crate::schema::derived::Spans,
    ) -> Result<Option<&'static Schema<'static>>, crate::schema::Violation<'s, 'a>>
    where
        's: 'a,
    {
        // `FAST_ARGS` is a constant: small targets keep no branch for it.
        if crate::schema::derived::FAST_ARGS
            && let Some(c) = self.args_check
            && c.accepts(self.input_schema, args.raw(), spans)
        {
            return Ok(Some(c.schema));
        }
        self.input_schema.validate(args).map(|()| None)
    }

    /// Offer the tool only to clients of `version` or newer.
    pub const fn since(mut self, version: crate::mcp::ProtocolVersion) -> Self {
        self.since = Some(version);
        self
    }

    /// Whether clients of `version` see the tool.
    pub fn offered_to(&self, version: crate::mcp::ProtocolVersion) -> bool {
        self.since.is_none_or(|v| version >= v)
    }

    crate::mcp::setters! {
        /// Set the title.
        title?: &'s str;
        /// Set the description.
        description?: &'s str;
        /// Set the output schema.
        output_schema?: &'s Schema<'s>;
        /// Set the annotations.
        annotations?: ToolAnnotations<'s>;
        /// Set the icons.
        icons: &'s [Icon<'s>];
    }

    /// Write the `Tool` object shaped for a version.
    pub(crate) fn write(&self, w: &mut Writer<'_>, fields: Fields) {
        w.raw(b"{");
        write_naming(w, fields, self.name, self.title, self.description);
        w.raw(b",\"inputSchema\":");
        self.input_schema.write(w);
        // Before 2026-07-28 an output schema must describe an object.
        let shown = |s: &Schema<'_>| fields.result_type || s.types == crate::schema::Types::OBJECT;
        if let (true, Some(s)) = (
            fields.output_schema,
            self.output_schema.filter(|s| shown(s)),
        ) {
            w.raw(b",\"outputSchema\":");
            s.write(w);
        }
        if let (true, Some(a)) = (fields.tool_annotations, self.annotations) {
            w.raw(b",\"annotations\":");
            let mut o = w.value().object();
            if let Some(t) = a.title {
                o.str("title", t);
            }
            for (k, v) in [
                ("readOnlyHint", a.read_only_hint),
                ("destructiveHint", a.destructive_hint),
                ("idempotentHint", a.idempotent_hint),
                ("openWorldHint", a.open_world_hint),
            ] {
                if let Some(v) = v {
                    o.bool(k, v);
                }
            }
        }
        write_icons(w, self.icons, fields);
        w.raw(b"}");
    }
}
