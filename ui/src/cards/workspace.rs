//! Cards for the computer's file tools: what was listed, read, written or moved.

use hearth_protocol::ToolName;
use leptos::prelude::*;
use serde_json::Value;

use crate::state::cards::tool_result;
use crate::state::chat::ToolCallView;
use crate::state::computer::kind_marker;

/// A one-line summary of a completed file tool call, with its details below.
#[component]
pub fn WorkspaceCard(tool: ToolName, call: ToolCallView) -> impl IntoView {
    let result: Option<Value> = tool_result(&call);
    let args: Value = serde_json::from_str(&call.args).unwrap_or(Value::Null);
    let path = args.get("path").and_then(Value::as_str).unwrap_or(crate::state::computer::WORKSPACE).to_owned();
    let (title, detail) = match tool {
        ToolName::ListComputerFiles => {
            let listing: Option<hearth_protocol::computer::WorkspaceListing> = tool_result(&call);
            let lines =
                listing.map(|l| l.entries.iter().map(|e| format!("{} {}", kind_marker(e.kind), e.name)).collect::<Vec<_>>().join("\n"));
            (format!("Listed {path}"), lines)
        }
        ToolName::ReadComputerFile => {
            let text = result.as_ref().and_then(|r| r.get("content")).and_then(Value::as_str).map(str::to_owned);
            (format!("Read {path}"), text)
        }
        ToolName::WriteComputerFile => {
            let bytes = result.as_ref().and_then(|r| r.get("bytes")).and_then(Value::as_u64).unwrap_or(0);
            (format!("Wrote {path} ({bytes} bytes)"), None)
        }
        ToolName::MkdirComputer => (format!("Made the folder {path}"), None),
        ToolName::ImportComputerPdf => (format!("Copied a PDF to {path}"), None),
        ToolName::ExportComputerPdf => (format!("Copied {path} into Files"), None),
        _ => (path, None),
    };
    view! {
        <article class="card workspace-card" data-tool=tool.as_str()>
            <header>
                <span class="card-kind">"Computer"</span>
                <span class="card-title">{title}</span>
            </header>
            {detail.map(|text| view! { <pre class="workspace-detail">{text}</pre> })}
        </article>
    }
}
