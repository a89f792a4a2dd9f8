//! The selected task's standing orders: what it may do without asking, how much of it is used,
//! when it ends, with Revoke (which also stops the task's run), and a small form to grant one.

use hearth_protocol::ids::TaskId;
use hearth_protocol::mandates::{Mandate, MandateGrant, MandateGrantParams, MandateHolder, MandateWindow};
use leptos::prelude::*;

use crate::clock::local_time;
use crate::ipc;
use crate::request::{Reply, action_failure, failure, last_loaded};

/// A week, the life of a standing order granted here.
const WEEK_MS: i64 = 7 * 24 * 60 * 60 * 1000;

fn grant_label(grant: &MandateGrant) -> String {
    match grant {
        MandateGrant::ComputerCommands => "Run commands and write files in the computer".to_owned(),
        MandateGrant::RememberFacts => "Remember facts".to_owned(),
        MandateGrant::SiteActions { origin } => format!("Open pages on {origin}"),
        MandateGrant::SendForms { origin } => format!("Send forms on {origin}"),
        MandateGrant::SendMail { recipients } => format!("Send email to {}", recipients.join(", ")),
        MandateGrant::PluginTool { tool } => format!("Call the plug-in tool {tool}"),
    }
}

/// A plug-in tool named as `server/tool` (or by its name in the agent's tool list).
fn plugin_tool(named: &str) -> Option<hearth_protocol::mcp::McpToolRef> {
    let named = named.trim();
    if let Some(tool) = hearth_protocol::mcp::McpToolRef::from_wire(named) {
        return Some(tool);
    }
    let (server, tool) = named.split_once('/')?;
    let server = hearth_protocol::mcp::McpServerName::parse(server).ok()?;
    let tool = hearth_protocol::mcp::McpToolRef { server, tool: tool.trim().to_owned() };
    tool.wire_name().map(|_| tool)
}

fn window_label(window: MandateWindow) -> &'static str {
    match window {
        MandateWindow::Hour => "an hour",
        MandateWindow::Day => "a day",
        MandateWindow::Whole => "in all",
    }
}

/// One change to the standing orders, sent through the section's one action, so the answer to
/// the last one sent is the section's error line.
#[derive(Debug, Clone)]
enum MandateEdit {
    Grant(MandateGrantParams),
    Revoke(String),
}

/// The standing orders of `task_id`.
#[component]
pub fn TaskMandates(task_id: TaskId) -> impl IntoView {
    let list = {
        let task_id = task_id.clone();
        LocalResource::new(move || {
            let task_id = task_id.clone();
            async move { ipc::mandate_list(&task_id).await }
        })
    };
    let loaded = last_loaded(list);
    let mandates = move || loaded.with(|l| l.as_ref().map(|l| l.mandates.clone()).unwrap_or_default());
    // A grant the form cannot make says why before anything is sent.
    let invalid = RwSignal::new(None::<String>);
    let kind = RwSignal::new("remember_facts".to_owned());
    let limit = RwSignal::new("3".to_owned());
    // The recipients of a mail grant (comma-separated), or the site of a site grant.
    let scope = RwSignal::new(String::new());
    let edit = Action::new_local(move |edit: &MandateEdit| {
        let edit = edit.clone();
        async move {
            let done: Reply<Mandate> = match edit {
                MandateEdit::Grant(params) => ipc::mandate_grant(&params).await,
                MandateEdit::Revoke(id) => ipc::mandate_revoke(&id).await,
            };
            if done.is_ok() {
                list.refetch();
            }
            done.map(drop)
        }
    });
    let revoke = move |id: String| {
        edit.dispatch_local(MandateEdit::Revoke(id));
    };
    let grant = move |_| {
        // One grant per press: a second click before the answer (a double click) sends nothing.
        if edit.pending().get_untracked() {
            return;
        }
        let named = scope.get_untracked();
        let grant = match kind.get_untracked().as_str() {
            "plugin_tool" => match plugin_tool(&named) {
                Some(tool) => MandateGrant::PluginTool { tool },
                None => {
                    invalid.set(Some("Name the plug-in tool as server/tool (Settings → Tools lists them).".to_owned()));
                    return;
                }
            },
            "computer_commands" => MandateGrant::ComputerCommands,
            "send_mail" => MandateGrant::SendMail {
                recipients: named.split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_owned).collect(),
            },
            "site_actions" => MandateGrant::SiteActions { origin: named.trim().trim_end_matches('/').to_owned() },
            "send_forms" => MandateGrant::SendForms { origin: named.trim().trim_end_matches('/').to_owned() },
            _ => MandateGrant::RememberFacts,
        };
        let Ok(limit) = limit.get_untracked().trim().parse::<u32>() else {
            invalid.set(Some("Give how many times a day, as a number.".to_owned()));
            return;
        };
        let params = MandateGrantParams {
            holder: MandateHolder::Task { task_id: task_id.clone() },
            grant,
            limit,
            window: MandateWindow::Day,
            lasts_ms: WEEK_MS,
        };
        invalid.set(None);
        edit.dispatch_local(MandateEdit::Grant(params));
    };
    let error = move || invalid.get().or_else(|| list.with(|reply| failure(reply.as_ref()))).or_else(|| action_failure(edit));
    view! {
        <section class="task-mandates">
            <h3>"Standing orders"</h3>
            <ul class="mandate-list">
                {move || mandates().into_iter().map(|m| {
                    let id = m.id.clone();
                    let state = match m.revoked_at {
                        Some(at) => format!("revoked {}", local_time(at)),
                        None => format!("until {}", local_time(m.expires_at)),
                    };
                    let live = m.revoked_at.is_none();
                    view! {
                        <li class="mandate" data-mandate-id=m.id>
                            <span class="mandate-grant">{grant_label(&m.grant)}</span>
                            <span class="mandate-use">{format!("{} of {} {}", m.uses, m.limit, window_label(m.window))}</span>
                            <span class="mandate-state">{state}</span>
                            {live.then(|| view! {
                                <button class="mandate-revoke" on:click=move |_| revoke(id.clone())>"Revoke"</button>
                            })}
                        </li>
                    }
                }).collect_view()}
            </ul>
            <div class="mandate-grant-form">
                <select on:change=move |ev| kind.set(event_target_value(&ev))>
                    <option value="remember_facts">"Remember facts"</option>
                    <option value="computer_commands">"Run commands in the computer"</option>
                    <option value="send_mail">"Send email to…"</option>
                    <option value="site_actions">"Open pages on…"</option>
                    <option value="send_forms">"Send forms on…"</option>
                    <option value="plugin_tool">"Call a plug-in tool…"</option>
                </select>
                {move || matches!(kind.get().as_str(), "send_mail" | "site_actions" | "send_forms" | "plugin_tool").then(|| {
                    let hint = match kind.get().as_str() {
                        "send_mail" => "friend@example.com, team@example.com",
                        "plugin_tool" => "server/tool",
                        _ => "https://shop.example",
                    };
                    view! {
                        <input class="mandate-scope" type="text" placeholder=hint prop:value=move || scope.get()
                            on:input=move |ev| scope.set(event_target_value(&ev)) />
                    }
                })}
                <input class="mandate-limit" type="number" min="1" prop:value=move || limit.get()
                    on:input=move |ev| limit.set(event_target_value(&ev)) />
                <span>" times a day, for a week "</span>
                <button class="mandate-grant" disabled=move || edit.pending().get() on:click=grant>"Allow without asking"</button>
            </div>
            {move || error().map(|message| view! { <p class="error mandate-error">{message}</p> })}
        </section>
    }
}
