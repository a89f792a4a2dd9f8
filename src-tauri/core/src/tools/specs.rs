//! What the model (or an AG-UI harness) is told about each tool: its description and the JSON
//! Schema generated from the very argument type dispatch parses, both read off the registry,
//! so the schema a model sees and the shape Hearth accepts cannot drift.

use hearth_protocol::ToolName;
use hearth_protocol::agui::Tool as ToolSpec;
use serde_json::Value;

use super::context::Vision;
use super::registry::visit;
use super::traits::{DirectTool, EffectTool, PrepareTool, Tool, Visitor};

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

/// The tools Hearth can run for a caller that sees as `vision`, with descriptions and JSON
/// Schemas, for a model or a harness.
pub fn tool_specs(vision: Vision) -> Vec<ToolSpec> {
    ToolName::ALL.iter().filter(|&&tool| vision.offers(tool)).filter_map(|&tool| visit(tool, SpecOf)).collect()
}
