//! Protocol versions, eras, and the one table that says which fields each
//! version may see.

use core::fmt;

/// An MCP protocol revision this crate knows. Compared by membership, never
/// lexically: an unknown string is "not supported", not "newer".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`, the first release.
    V2024_11_05,
    /// `2025-03-26`: batches, audio, tool annotations, completions.
    V2025_03_26,
    /// `2025-06-18`: titles, output schemas, structured content, resource links.
    V2025_06_18,
    /// `2025-11-25`: icons, `Implementation.description`/`websiteUrl`.
    V2025_11_25,
    /// `2026-07-28`: stateless, per-request `_meta` envelope.
    V2026_07_28,
}

/// The two protocol eras.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Era {
    /// `initialize` handshake, per-connection session (2024-11-05 … 2025-11-25).
    Handshake,
    /// Stateless per-request envelope (2026-07-28).
    Modern,
}

impl ProtocolVersion {
    /// Every handshake-era version, oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
    ];

    /// Every version of the stateless era (2026-07-28), as `server/discover`
    /// and an unsupported-version error list them.
    pub const MODERN: [ProtocolVersion; 1] = [Self::V2026_07_28];

    /// The version offered to an `initialize` that asks for one we do not speak.
    pub const LATEST_HANDSHAKE: ProtocolVersion = Self::V2025_11_25;

    /// The wire string, e.g. `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Look a wire string up among the known versions.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::V2024_11_05,
            Self::V2025_03_26,
            Self::V2025_06_18,
            Self::V2025_11_25,
            Self::V2026_07_28,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }

    /// The era this version belongs to.
    pub const fn era(self) -> Era {
        match self {
            Self::V2026_07_28 => Era::Modern,
            _ => Era::Handshake,
        }
    }

    /// What a result shaped for this version may contain.
    pub const fn fields(self) -> Fields {
        // The one table. Each flag is the first version that defines the field.
        const fn since_(v: ProtocolVersion, first: ProtocolVersion) -> bool {
            v as u8 >= first as u8
        }
        macro_rules! since {
            ($first:expr) => {
                since_(self, $first)
            };
        }
        Fields {
            batches: matches!(self, Self::V2025_03_26),
            audio: since!(Self::V2025_03_26),
            resource_size: since!(Self::V2025_03_26),
            tool_annotations: since!(Self::V2025_03_26),
            completions: since!(Self::V2025_03_26),
            title: since!(Self::V2025_06_18),
            output_schema: since!(Self::V2025_06_18),
            structured_content: since!(Self::V2025_06_18),
            resource_link: since!(Self::V2025_06_18),
            content_annotations_last_modified: since!(Self::V2025_06_18),
            meta: since!(Self::V2025_06_18),
            icons: since!(Self::V2025_11_25),
            implementation_description: since!(Self::V2025_11_25),
            result_type: since!(Self::V2026_07_28),
            non_object_structured: since!(Self::V2026_07_28),
            sampling_tools: since!(Self::V2025_11_25),
            elicitation: since!(Self::V2025_06_18),
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which optional fields and content kinds a protocol version defines.
///
/// Emitters consult this so a client never receives a field its version does
/// not define. Content a version lacks is converted where a faithful
/// equivalent exists (audio and resource links become text) and left out
/// otherwise; see the server documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Fields {
    /// JSON-RPC batches (2025-03-26 only).
    pub batches: bool,
    /// `audio` content blocks.
    pub audio: bool,
    /// `Resource.size` and resource-link `size`.
    pub resource_size: bool,
    /// `Tool.annotations`.
    pub tool_annotations: bool,
    /// The `completions` capability.
    pub completions: bool,
    /// `title` on tools, resources, prompts and `Implementation`.
    pub title: bool,
    /// `Tool.outputSchema`.
    pub output_schema: bool,
    /// `CallToolResult.structuredContent`.
    pub structured_content: bool,
    /// `resource_link` content blocks.
    pub resource_link: bool,
    /// `annotations.lastModified`.
    pub content_annotations_last_modified: bool,
    /// `_meta` on results and descriptors.
    pub meta: bool,
    /// `icons` on tools, resources, prompts and `Implementation`.
    pub icons: bool,
    /// `Implementation.description` and `websiteUrl`.
    pub implementation_description: bool,
    /// `resultType` on every result (2026-07-28).
    pub result_type: bool,
    /// `outputSchema` and `structuredContent` may be something other than
    /// an object (2026-07-28; before, they must describe an object).
    pub non_object_structured: bool,
    /// `tools` and `toolChoice` in `sampling/createMessage` (2025-11-25).
    pub sampling_tools: bool,
    /// `elicitation/create` requests to the client (2025-06-18).
    pub elicitation: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips() {
        for v in ProtocolVersion::HANDSHAKE {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            assert_eq!(v.era(), Era::Handshake);
        }
        assert_eq!(
            ProtocolVersion::parse("2026-07-28").map(|v| v.era()),
            Some(Era::Modern)
        );
        assert_eq!(ProtocolVersion::parse("2099-01-01"), None);
    }

    #[test]
    fn table() {
        let old = ProtocolVersion::V2024_11_05.fields();
        assert!(!old.title && !old.output_schema && !old.structured_content && !old.audio);
        assert!(!old.batches && ProtocolVersion::V2025_03_26.fields().batches);
        assert!(!ProtocolVersion::V2025_06_18.fields().batches);
        let new = ProtocolVersion::V2025_11_25.fields();
        assert!(new.title && new.icons && new.structured_content && !new.result_type);
        assert!(!ProtocolVersion::V2025_03_26.fields().elicitation);
        assert!(ProtocolVersion::V2025_06_18.fields().elicitation);
    }
}
