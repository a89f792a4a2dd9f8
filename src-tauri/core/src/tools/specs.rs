//! What the model (or an AG-UI harness) is told about each tool: its description and the JSON
//! Schema generated from the very argument type dispatch parses, both read off the registry,
//! so the schema a model sees and the shape Hearth accepts cannot drift.

use hearth_protocol::ToolName;
use hearth_protocol::agui::Tool as ToolSpec;
use serde_json::Value;

use super::registry::{DirectTool, EffectTool, PrepareTool, Tool, Visitor, visit};

struct SpecOf;

fn spec<T: Tool>() -> ToolSpec {
    ToolSpec {
        name: T::NAME.as_str().to_owned(),
        description: T::DESCRIPTION.to_owned(),
        parameters: serde_json::to_value(schemars::schema_for!(T::Args)).unwrap_or(Value::Null),
        ..Default::default()
    }
}

impl Visitor for SpecOf {
    type Out = Option<ToolSpec>;
    fn direct<T: DirectTool>(self) -> Self::Out {
        Some(spec::<T>())
    }
    fn effect<T: EffectTool>(self) -> Self::Out {
        Some(spec::<T>())
    }
    fn prepare<T: PrepareTool>(self) -> Self::Out {
        Some(spec::<T>())
    }
}

/// What the caller's model can take in besides text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vision {
    /// Text only: a task (whose conversation is checkpointed), an external agent (AG-UI tool
    /// results are text), or a model the owner did not set to accept images.
    #[default]
    TextOnly,
    /// Text and pictures: look_page is offered and its picture sent.
    Images,
}

impl Vision {
    /// Whether `tool` is offered to a caller that sees this way.
    pub fn offers(self, tool: ToolName) -> bool {
        match self {
            Vision::Images => true,
            Vision::TextOnly => tool != ToolName::LookPage,
        }
    }
}

/// The tools Hearth can run for a caller that sees as `vision`, with descriptions and JSON
/// Schemas, for a model or a harness.
pub fn tool_specs(vision: Vision) -> Vec<ToolSpec> {
    ToolName::ALL.iter().filter(|&&tool| vision.offers(tool)).filter_map(|&tool| visit(tool, SpecOf)).collect()
}
