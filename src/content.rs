//! Content blocks: text, image, audio, resource link, embedded resource.
//!
//! [`Block`] writes one MCP content block, shaped for the negotiated version:
//! audio and resource links become text blocks for versions that lack them.
//! Tool results write any number of blocks; a prompt message holds exactly
//! one.

use core::fmt;

pub use crate::context::{MAX_PROGRESS_TOKEN, Notify};
use crate::mcp::{Fields, ProtocolVersion, write_resource_naming};
use crate::wire::emit::{TextWriter, Writer};

/// Writes exactly one content block.
pub struct Block<'x, 'r> {
    w: &'x mut Writer<'r>,
    version: ProtocolVersion,
}

impl<'x, 'r> Block<'x, 'r> {
    pub(crate) fn new(w: &'x mut Writer<'r>, version: ProtocolVersion) -> Self {
        Self { w, version }
    }

    fn fields(&self) -> Fields {
        self.version.fields()
    }

    /// A text block.
    pub fn text(self, text: &str) {
        self.w.raw(b"{\"type\":\"text\",\"text\":");
        self.w.string(text);
        self.w.raw(b"}");
    }

    /// A text block from formatted text.
    pub fn text_fmt(self, args: fmt::Arguments<'_>) {
        self.w.raw(b"{\"type\":\"text\",\"text\":");
        self.w.string_fmt(args);
        self.w.raw(b"}");
    }

    /// A text block written through [`core::fmt::Write`].
    pub fn text_with(self, write: impl FnOnce(&mut TextWriter<'_, 'r>)) {
        self.w.raw(b"{\"type\":\"text\",\"text\":\"");
        write(&mut TextWriter::new(self.w));
        self.w.raw(b"\"}");
    }

    /// An image block; `data` is base64-encoded as it is written.
    pub fn image(self, mime_type: &str, data: &[u8]) {
        self.media("image", mime_type, data);
    }

    /// An audio block (2025-03-26+). Older versions get a text block saying
    /// audio was left out.
    pub fn audio(self, mime_type: &str, data: &[u8]) {
        if !self.fields().audio {
            let version = self.version;
            return self.text_fmt(format_args!(
                "[{mime_type} audio omitted: protocol {version} has no audio content]"
            ));
        }
        self.media("audio", mime_type, data);
    }

    fn media(self, kind: &str, mime_type: &str, data: &[u8]) {
        self.w.raw(b"{\"type\":");
        self.w.string(kind);
        self.w.raw(b",\"data\":\"");
        self.w.base64(data);
        self.w.raw(b"\",\"mimeType\":");
        self.w.string(mime_type);
        self.w.raw(b"}");
    }

    /// A `resource_link` block (2025-06-18+). Older versions get a text
    /// block `NAME: URI`.
    pub fn resource_link(self, link: &ResourceLink<'_>) {
        let fields = self.fields();
        if !fields.resource_link {
            return self.text_fmt(format_args!("{}: {}", link.name, link.uri));
        }
        let w = self.w;
        w.raw(b"{\"type\":\"resource_link\",\"uri\":");
        w.string(link.uri);
        write_resource_naming(
            w,
            fields,
            link.name,
            link.title,
            link.description,
            link.mime_type,
        );
        if let (true, Some(s)) = (fields.resource_size, link.size) {
            w.raw(b",\"size\":");
            w.u64(s);
        }
        w.raw(b"}");
    }

    /// An embedded text resource.
    pub fn embedded_text(mut self, uri: &str, mime_type: Option<&str>, text: &str) {
        self.embedded_head(uri, mime_type);
        self.w.raw(b",\"text\":");
        self.w.string(text);
        self.w.raw(b"}}");
    }

    /// An embedded binary resource (base64 written on the fly).
    pub fn embedded_blob(mut self, uri: &str, mime_type: Option<&str>, data: &[u8]) {
        self.embedded_head(uri, mime_type);
        self.w.raw(b",\"blob\":\"");
        self.w.base64(data);
        self.w.raw(b"\"}}");
    }

    fn embedded_head(&mut self, uri: &str, mime_type: Option<&str>) {
        self.w.raw(b"{\"type\":\"resource\",\"resource\":{\"uri\":");
        self.w.string(uri);
        if let Some(m) = mime_type {
            self.w.raw(b",\"mimeType\":");
            self.w.string(m);
        }
    }
}

/// A link to a resource, for [`Content::resource_link`](crate::tool::Content::resource_link).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceLink<'s> {
    /// The URI.
    pub uri: &'s str,
    /// The name.
    pub name: &'s str,
    /// Display title.
    pub title: Option<&'s str>,
    /// Description.
    pub description: Option<&'s str>,
    /// MIME type.
    pub mime_type: Option<&'s str>,
    /// Size in bytes.
    pub size: Option<u64>,
}

impl<'s> ResourceLink<'s> {
    /// A link with a URI and a name.
    pub const fn new(uri: &'s str, name: &'s str) -> Self {
        Self {
            uri,
            name,
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    crate::mcp::setters! {
        /// Set the MIME type.
        mime_type?: &'s str;
        /// Set the title.
        title?: &'s str;
        /// Set the description.
        description?: &'s str;
        /// Set the size.
        size?: u64;
    }
}
