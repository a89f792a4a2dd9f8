//! A tool's argument schema, compiled once: with `jsonschema` in a build with the MCP client,
//! and in one without (feature `mcp` off) a schema that never compiles, so no tool is offered.

use serde_json::Value;

/// A compiled argument schema.
#[cfg(feature = "mcp")]
pub struct ArgsSchema(jsonschema::Validator);

#[cfg(feature = "mcp")]
impl ArgsSchema {
    /// Compiles `schema` (no remote or file references are fetched); `None` when it cannot be.
    pub fn compile(schema: &Value) -> Option<Self> {
        jsonschema::validator_for(schema).ok().map(Self)
    }

    /// What in `arguments` does not fit (at most five things), empty when they fit.
    pub fn problems(&self, arguments: &Value) -> Vec<String> {
        self.0.iter_errors(arguments).take(5).map(|e| format!("{} at {}", e, e.instance_path())).collect()
    }
}

/// A compiled argument schema (never made in this build).
#[cfg(not(feature = "mcp"))]
pub struct ArgsSchema;

#[cfg(not(feature = "mcp"))]
impl ArgsSchema {
    /// Never compiles in this build.
    pub fn compile(_schema: &Value) -> Option<Self> {
        None
    }

    /// Unreachable in this build (nothing compiles); said as a refusal all the same.
    pub fn problems(&self, _arguments: &Value) -> Vec<String> {
        vec!["this build has no MCP client".to_owned()]
    }
}
