//! Message bodies: a plain string or (AG-UI 1.0) an array of typed content parts.
//!
//! Used by user messages, tool messages and `TOOL_CALL_RESULT`. Parts are named by what
//! they are (text, image, …) rather than by direction, because the same part travels
//! into the model in a user message and back out in a tool result.

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// A message body: a string, or an ordered list of parts.
///
/// Deserialisation is hand-written (not `#[serde(untagged)]`) so a string body is read
/// without buffering and a bad body gets a precise error.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// Plain text.
    Text(String),
    /// Typed parts (text, image, audio, video, document).
    Parts(Vec<ContentPart>),
}

impl Default for MessageContent {
    fn default() -> Self {
        MessageContent::Text(String::new())
    }
}

impl MessageContent {
    /// The body when it is plain text.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            MessageContent::Text(s) => Some(s),
            MessageContent::Parts(_) => None,
        }
    }

    /// The text of the body: the string itself, or the text parts joined in order
    /// (media parts contribute nothing). For showing or feeding to a text-only model.
    pub fn to_text(&self) -> String {
        match self {
            MessageContent::Text(s) => s.clone(),
            MessageContent::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }
}

impl From<String> for MessageContent {
    fn from(s: String) -> Self {
        MessageContent::Text(s)
    }
}

impl From<&str> for MessageContent {
    fn from(s: &str) -> Self {
        MessageContent::Text(s.to_owned())
    }
}

impl From<Vec<ContentPart>> for MessageContent {
    fn from(parts: Vec<ContentPart>) -> Self {
        MessageContent::Parts(parts)
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MessageContent;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(p) = seq.next_element::<ContentPart>()? {
                    parts.push(p);
                }
                Ok(MessageContent::Parts(parts))
            }
        }
        d.deserialize_any(V)
    }
}

/// One part of a message body, discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentPart {
    /// `{"type":"text", "text": …}`.
    Text(TextPart),
    /// `{"type":"image", "source": …}`.
    Image(MediaPart),
    /// `{"type":"audio", "source": …}`.
    Audio(MediaPart),
    /// `{"type":"video", "source": …}`.
    Video(MediaPart),
    /// `{"type":"document", "source": …}`.
    Document(MediaPart),
}

/// A text part.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextPart {
    /// Optional part id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The text.
    pub text: String,
    /// Any non-null JSON value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// An image, audio, video or document part (the kind is the enclosing variant).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaPart {
    /// Optional part id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Where the bytes come from.
    pub source: PartSource,
    /// Any non-null JSON value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Where a media part's bytes come from, discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", rename_all_fields = "camelCase")]
pub enum PartSource {
    /// Bytes carried inline (base64 by convention).
    Data {
        /// The encoded bytes.
        value: String,
        /// MIME type of the bytes (required for inline data).
        mime_type: String,
    },
    /// Bytes referenced by URL.
    Url {
        /// The URL.
        value: String,
        /// MIME type, if known.
        #[serde(skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// Bytes already at a provider, named by a handle it issued.
    File {
        /// The provider's handle.
        value: String,
        /// Which provider minted the handle.
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        /// MIME type, if known.
        #[serde(skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl Default for PartSource {
    fn default() -> Self {
        PartSource::Url { value: String::new(), mime_type: None }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn string_and_parts_round_trip() {
        let s: MessageContent = serde_json::from_str(r#""hi""#).unwrap();
        assert_eq!(s, MessageContent::from("hi"));
        let json = r#"[{"type":"text","text":"a"},{"type":"image","source":{"type":"data","value":"AAA","mimeType":"image/png"}}]"#;
        let p: MessageContent = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&p).unwrap(), json);
        assert_eq!(p.to_text(), "a");
        assert!(serde_json::from_str::<MessageContent>("3").is_err());
    }

    #[test]
    fn data_source_requires_mime_type() {
        let bad = r#"[{"type":"image","source":{"type":"data","value":"AAA"}}]"#;
        assert!(serde_json::from_str::<MessageContent>(bad).is_err());
    }
}
