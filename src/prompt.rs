//! Prompts: descriptors with arguments, and the messages a handler writes.
//!
//! `prompts/get` checks the request before the handler runs: an unknown
//! prompt, a missing required argument, or an argument value that is not a
//! string is `-32602`. Arguments the descriptor does not declare are ignored.

use core::fmt;

use crate::content::Block;
use crate::context::{Ctx, Done};
use crate::error::ProtocolError;
pub use crate::mcp::Role;
use crate::mcp::{Fields, Icon, write_icons, write_naming};
use crate::wire::emit::Writer;

/// One argument of a prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct PromptArgument<'s> {
    /// Name.
    pub name: &'s str,
    /// Display title (2025-06-18+).
    pub title: Option<&'s str>,
    /// Description.
    pub description: Option<&'s str>,
    /// Must be given.
    pub required: bool,
}

impl<'s> PromptArgument<'s> {
    /// An optional argument.
    pub const fn new(name: &'s str) -> Self {
        Self {
            name,
            title: None,
            description: None,
            required: false,
        }
    }

    /// Make it required.
    pub const fn required(mut self) -> Self {
        self.required = true;
        self
    }

    crate::mcp::setters! {
        /// Set the title.
        title?: &'s str;
        /// Set the description.
        description?: &'s str;
    }
}

/// A prompt's static description, listed by `prompts/list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct PromptDescriptor<'s> {
    /// Unique name.
    pub name: &'s str,
    /// Display title (2025-06-18+).
    pub title: Option<&'s str>,
    /// Description.
    pub description: Option<&'s str>,
    /// Arguments (at most [`MAX_PROMPT_ARGUMENTS`]).
    pub arguments: &'s [PromptArgument<'s>],
    /// Icons (2025-11-25+).
    pub icons: &'s [Icon<'s>],
}

/// Most arguments one prompt may declare.
pub const MAX_PROMPT_ARGUMENTS: usize = 16;

impl<'s> PromptDescriptor<'s> {
    /// A prompt with a name and its arguments.
    pub const fn new(name: &'s str, arguments: &'s [PromptArgument<'s>]) -> Self {
        Self {
            name,
            title: None,
            description: None,
            arguments,
            icons: &[],
        }
    }

    crate::mcp::setters! {
        /// Set the title.
        title?: &'s str;
        /// Set the description.
        description?: &'s str;
        /// Set the icons.
        icons: &'s [Icon<'s>];
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>, fields: Fields) {
        w.raw(b"{");
        write_naming(w, fields, self.name, self.title, self.description);
        if !self.arguments.is_empty() {
            w.raw(b",\"arguments\":[");
            for (i, a) in self.arguments.iter().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                w.raw(b"{");
                write_naming(w, fields, a.name, a.title, a.description);
                w.raw(b",\"required\":");
                w.bool(a.required);
                w.raw(b"}");
            }
            w.raw(b"]");
        }
        write_icons(w, self.icons, fields);
        w.raw(b"}");
    }
}

/// What a prompt handler returns: messages, or a JSON-RPC error (prompts have
/// no tool-error channel).
pub type PromptOutcome<'a> = Result<Done, ProtocolError<'a>>;

/// A prompt handler. `S` is the server's application state.
pub type PromptFn<S> = for<'a, 'r> fn(&'a S, PromptRequest<'a>, Messages<'r>) -> PromptOutcome<'a>;

crate::context::registration!(
    /// A registered prompt.
    Prompt(PromptDescriptor, PromptFn, awaits)
);

#[cfg(feature = "async-handlers")]
impl<S> Prompt<S> {
    /// An async prompt: its messages are written by the handler at `index`
    /// of the server's
    /// [`AsyncHandlers::get_prompt`](crate::asynch::AsyncHandlers::get_prompt)
    /// ([`async_handlers!`](crate::async_handlers) writes these constants).
    pub const fn awaiting(descriptor: PromptDescriptor<'static>, index: u16) -> Self {
        Self {
            descriptor,
            handler: needs_async,
            awaits: Some(index),
        }
    }
}

/// The `handler` of an async prompt, for a caller that invokes it
/// directly: it cannot write the messages.
#[cfg(feature = "async-handlers")]
fn needs_async<'a, S>(_: &'a S, _: PromptRequest<'a>, _: Messages<'_>) -> PromptOutcome<'a> {
    Err(ProtocolError::internal(
        "this prompt is async: serve it with Server::handle_async",
    ))
}

/// A `prompts/get` request: the declared arguments' values, decoded.
#[derive(Clone, Copy, Debug)]
pub struct PromptRequest<'a> {
    arguments: &'static [PromptArgument<'static>],
    values: [Option<&'a str>; MAX_PROMPT_ARGUMENTS],
}

impl<'a> PromptRequest<'a> {
    pub(crate) fn new(
        arguments: &'static [PromptArgument<'static>],
        values: [Option<&'a str>; MAX_PROMPT_ARGUMENTS],
    ) -> Self {
        Self { arguments, values }
    }

    /// The value of argument `name`, if given.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.arguments
            .iter()
            .position(|a| a.name == name)
            .and_then(|i| self.values.get(i).copied().flatten())
    }
}

/// Where a prompt handler writes its messages. Consumed by
/// [`finish`](Self::finish).
pub struct Messages<'r> {
    ctx: Ctx<'r>,
    count: u32,
    open: bool,
}

impl<'r> Messages<'r> {
    pub(crate) fn new(mut ctx: Ctx<'r>) -> Self {
        ctx.w.raw(b"\"messages\":[");
        Self {
            ctx,
            count: 0,
            open: false,
        }
    }

    crate::context::notify_methods!(ctx);

    fn close_open(&mut self) {
        if self.open {
            self.ctx.w.raw(b"}");
            self.open = false;
        }
    }

    /// Answer `input_required` instead (2026-07-28 MRTR).
    pub fn input_required(self) -> crate::mrtr::InputRequired<'r> {
        crate::mrtr::InputRequired::new(self.ctx)
    }

    /// Start a message; write its one content block with the returned
    /// [`Block`].
    #[must_use = "a message needs its content block"]
    pub fn message(&mut self, role: Role) -> Block<'_, 'r> {
        self.close_open();
        let w = &mut self.ctx.w;
        if self.count > 0 {
            w.raw(b",");
        }
        self.count += 1;
        w.raw(match role {
            Role::User => b"{\"role\":\"user\",\"content\":",
            Role::Assistant => b"{\"role\":\"assistant\",\"content\":",
        });
        self.open = true;
        Block::new(w, self.ctx.version)
    }

    /// A user message with one text block.
    pub fn user(&mut self, text: &str) -> &mut Self {
        self.message(Role::User).text(text);
        self
    }

    /// An assistant message with one text block.
    pub fn assistant(&mut self, text: &str) -> &mut Self {
        self.message(Role::Assistant).text(text);
        self
    }

    /// Finish, with an optional `description` of the result.
    pub fn finish<'a>(mut self, description: Option<&str>) -> PromptOutcome<'a> {
        self.close_open();
        let w = &mut self.ctx.w;
        w.raw(b"]");
        if let Some(d) = description {
            w.raw(b",\"description\":");
            w.string(d);
        }
        Ok(self.ctx.finish())
    }
}

impl fmt::Debug for Messages<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Messages")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}
