//! A tool's result, as text for the model: bounded, and what is not text named rather than
//! passed on.

#[cfg(feature = "mcp")]
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The most characters of a result the model is given (the rest is cut, and it is told).
pub const MAX_RESULT_CHARS: usize = 20_000;

/// What a call answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOutput {
    /// Its text (bounded), with a note for each part that is not text.
    pub text: String,
    /// The server said the call failed (`isError`).
    pub is_error: bool,
    /// The text was cut to [`MAX_RESULT_CHARS`].
    pub truncated: bool,
}

impl McpOutput {
    #[cfg(feature = "mcp")]
    pub(super) fn from_result(result: &CallToolResult) -> Self {
        let mut parts: Vec<String> = Vec::new();
        for block in &result.content {
            parts.push(match block {
                ContentBlock::Text(text) => text.text.clone(),
                ContentBlock::Image(image) => format!("[an image ({}) the server sent is not shown to the model]", image.mime_type),
                ContentBlock::Audio(audio) => format!("[audio ({}) the server sent is not passed on]", audio.mime_type),
                ContentBlock::Resource(embedded) => match &embedded.resource {
                    ResourceContents::TextResourceContents { uri, text, .. } => format!("[resource {uri}]\n{text}"),
                    ResourceContents::BlobResourceContents { uri, .. } => format!("[a binary resource {uri} is not passed on]"),
                    _ => "[a resource of a kind this version of Hearth does not read]".to_owned(),
                },
                ContentBlock::ResourceLink(link) => format!("[a link to resource {} ({}), not followed]", link.uri, link.name),
                _ => "[content of a kind this version of Hearth does not read]".to_owned(),
            });
        }
        if parts.is_empty()
            && let Some(structured) = &result.structured_content
        {
            parts.push(structured.to_string());
        }
        let whole = parts.join("\n");
        let truncated = whole.chars().count() > MAX_RESULT_CHARS;
        let text = if truncated {
            let mut cut: String = whole.chars().take(MAX_RESULT_CHARS).collect();
            cut.push_str("\n[… cut: the result was longer than Hearth passes on]");
            cut
        } else {
            whole
        };
        Self { text, is_error: result.is_error.unwrap_or(false), truncated }
    }
}
