//! The card for a call of a plug-in (MCP) tool: the generic card, titled with the server's name
//! and the tool's, with the result as the tool's text (or a small table) when it reads as one.
//! Everything the server answered is shown as text.

use hearth_protocol::mcp::McpToolRef;
use leptos::prelude::*;

use super::{pretty_json, status_label};
use crate::state::chat::{ToolCallView, ToolStatus};
use crate::state::mcp::{McpResult, read_result, result_marks};

/// Title (`server · tool`), pretty-printed arguments, status and result.
#[component]
pub fn McpCard(tool: McpToolRef, call: ToolCallView) -> impl IntoView {
    let status = status_label(call.status);
    let complete = call.status == ToolStatus::Complete;
    view! {
        <article class="card card-generic card-mcp" data-tool=call.name data-server=tool.server.as_str().to_owned() data-status=status>
            <header>
                <span class="card-title" title="A plug-in tool">{tool.to_string()}</span>
                <span class=format!("status status-{status}")>{status}</span>
            </header>
            <pre class="card-args">{pretty_json(&call.args)}</pre>
            {call.result.map(|result| if complete { view! { <McpResultView result /> }.into_any() } else {
                view! { <pre class="card-result">{pretty_json(&result)}</pre> }.into_any()
            })}
        </article>
    }
}

/// A completed call's result.
#[component]
fn McpResultView(result: String) -> impl IntoView {
    let marks = result_marks(&result);
    let shown = match read_result(&result) {
        McpResult::Text(text) => view! { <pre class="card-result mcp-result-text">{text}</pre> }.into_any(),
        McpResult::Table { columns, rows, more } => view! {
            <div class="card-result mcp-result-table-wrap">
                <table class="mcp-result-table">
                    <thead><tr>{columns.into_iter().map(|column| view! { <th>{column}</th> }).collect_view()}</tr></thead>
                    <tbody>
                        {rows.into_iter().map(|row| view! {
                            <tr>{row.into_iter().map(|cell| view! { <td>{cell}</td> }).collect_view()}</tr>
                        }).collect_view()}
                    </tbody>
                </table>
                {(more > 0).then(|| view! { <p class="empty">{format!("… and {more} more")}</p> })}
            </div>
        }
        .into_any(),
        McpResult::Raw(text) => view! { <pre class="card-result">{pretty_json(&text)}</pre> }.into_any(),
    };
    view! {
        {marks.into_iter().map(|mark| view! { <p class="mcp-result-mark">{mark}</p> }).collect_view()}
        {shown}
    }
}
