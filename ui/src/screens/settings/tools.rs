//! Settings → Tools: the owner's MCP servers. Each shows how it is reached, whether it is on
//! and connected, and its tools with the owner's choice for each (Allowed, Ask every time,
//! Off; every tool starts Off). Test connects again now, Show log shows what the server wrote
//! on its standard error, Remove takes a second click. The Add form keeps what was typed until
//! a save succeeds.
//!
//! A server's words (its name and version, its tools' descriptions) are shown as its words,
//! as text, in a muted style: they are not Hearth's and may say anything.

use hearth_protocol::mcp::{McpServerSaveParams, McpServerView, McpToolPolicy, McpToolPolicyParams, McpToolView};
use leptos::prelude::*;

use crate::ipc;
use crate::request::{Reply, action_failure};
use crate::state::mcp::{
    McpForm, McpKind, POLICIES, connection_label, connection_slug, merge_server, policy_effect, policy_label, tool_badges, transport_line,
    transport_note,
};

/// The servers shown: `None` until the first list lands.
type Servers = RwSignal<Option<Vec<McpServerView>>>;

/// What the section asks about one server; each answer replaces what is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
enum McpChange {
    Test(String),
    Enable(String, bool),
    Remove(String),
    Policy(McpToolPolicyParams),
}

impl McpChange {
    /// The server it is about.
    fn server(&self) -> &str {
        match self {
            Self::Test(name) | Self::Enable(name, _) | Self::Remove(name) => name,
            Self::Policy(params) => &params.server,
        }
    }
}

/// The actions a server's row shares with the section: one change at a time, and the last one
/// sent (so its row says it is on its way, and shows its refusal beside it).
#[derive(Clone, Copy)]
struct Changes {
    action: Action<McpChange, Reply<()>>,
    sent: RwSignal<Option<McpChange>>,
}

impl Changes {
    fn send(self, change: McpChange) {
        if self.action.pending().get_untracked() {
            return;
        }
        self.sent.set(Some(change.clone()));
        self.action.dispatch_local(change);
    }

    /// Whether the last change sent was about `server`.
    fn about(self, server: &str) -> bool {
        self.sent.with(|sent| sent.as_ref().is_some_and(|change| change.server() == server))
    }
}

/// The section.
#[component]
pub fn ToolsSection() -> impl IntoView {
    let servers: Servers = RwSignal::new(None);
    let load = Action::new_local(move |()| async move { ipc::mcp_server_list().await.map(|list| servers.set(Some(list))) });
    load.dispatch_local(());
    let action = Action::new_local(move |change: &McpChange| {
        let change = change.clone();
        async move {
            match change {
                McpChange::Test(name) => ipc::mcp_server_test(&name).await.map(|view| merge(servers, view)),
                McpChange::Enable(name, on) => ipc::mcp_server_enable(&name, on).await.map(|view| merge(servers, view)),
                McpChange::Remove(name) => ipc::mcp_server_remove(&name).await.map(|list| servers.set(Some(list))),
                McpChange::Policy(params) => ipc::mcp_tool_policy(&params).await.map(|view| merge(servers, view)),
            }
        }
    });
    let changes = Changes { action, sent: RwSignal::new(None) };
    let names =
        Memo::new(move |_| servers.with(|list| list.iter().flatten().map(|server| server.name.as_str().to_owned()).collect::<Vec<_>>()));
    let loaded = move || servers.with(Option::is_some);

    view! {
        <section class="settings-section settings-tools" data-section="tools">
            <h2>"Tools from MCP servers"</h2>
            <p class="settings-note">
                "Plug-in tools come from MCP servers you add here. Each tool is off until you allow it. "
                "An allowed tool the server marks read-only runs on its own; every other call waits for your approval on a card."
            </p>
            <p class="settings-note">"What a server says about itself and its tools is its own words, shown as it gave them."</p>
            {move || action_failure(load).map(|why| view! {
                <p class="error settings-error mcp-load-error">
                    {format!("The servers could not be listed: {why}")} " "
                    <button type="button" data-action="mcp-reload" disabled=move || load.pending().get()
                        on:click=move |_| { load.dispatch_local(()); }>"Try again"</button>
                </p>
            })}
            {move || (!loaded() && load.pending().get()).then(|| view! { <p class="empty">"Loading servers…"</p> })}
            {move || (loaded() && names.with(Vec::is_empty)).then(|| view! { <p class="empty mcp-none">"No server yet."</p> })}
            <ul class="mcp-servers">
                <For each=move || names.get() key=String::clone children=move |name| view! { <ServerRow name servers changes /> } />
            </ul>
            <h3>"Add a server"</h3>
            <AddServer servers />
        </section>
    }
}

/// One server: what it is, its connection, its buttons, its log and its tools.
#[component]
fn ServerRow(name: String, servers: Servers, changes: Changes) -> impl IntoView {
    let server = {
        let name = name.clone();
        Memo::new(move |_| servers.with(|list| list.iter().flatten().find(|server| server.name.as_str() == name).cloned()))
    };
    let name = StoredValue::new(name);
    let confirming = RwSignal::new(false);
    let log_shown = RwSignal::new(false);
    let log = Action::new_local(|name: &String| {
        let name = name.clone();
        async move { ipc::mcp_server_log(&name).await }
    });
    let busy = changes.action.pending();
    let mine = move || name.with_value(|name| changes.about(name));
    // This server's change on its way, for its button's words.
    let going = move |test: fn(&McpChange) -> bool| busy.get() && changes.sent.with(|sent| sent.as_ref().is_some_and(test)) && mine();
    let enabled = move || server.with(|server| server.as_ref().is_some_and(|server| server.enabled));
    let send = move |change: McpChange| {
        confirming.set(false);
        changes.send(change);
    };
    let test = move |_| send(McpChange::Test(name.get_value()));
    let toggle = move |_| send(McpChange::Enable(name.get_value(), !server.with_untracked(|s| s.as_ref().is_some_and(|s| s.enabled))));
    let remove = move |_| send(McpChange::Remove(name.get_value()));
    let show_log = move |_| {
        if log_shown.get_untracked() {
            log_shown.set(false);
        } else {
            log_shown.set(true);
            log.dispatch_local(name.get_value());
        }
    };
    let error = move || if mine() && !busy.get() { action_failure(changes.action) } else { None };

    view! {
        <li class="mcp-server" data-server=name.get_value() data-enabled=move || if enabled() { "true" } else { "false" }>
            {move || server.get().map(|server| view! { <ServerFacts server /> })}
            <div class="mcp-server-actions">
                <button type="button" data-action="mcp-test" disabled=move || busy.get() on:click=test>
                    {move || if going(|c| matches!(c, McpChange::Test(_))) { "Testing…" } else { "Test" }}
                </button>
                <button type="button" data-action="mcp-enable" disabled=move || busy.get() on:click=toggle>
                    {move || if enabled() { "Turn off" } else { "Turn on" }}
                </button>
                <button type="button" data-action="mcp-log" on:click=show_log>
                    {move || if log_shown.get() { "Hide log" } else { "Show log" }}
                </button>
                {move || if confirming.get() {
                    view! {
                        <span class="confirm mcp-remove-confirm">
                            "Remove this server and your choices for its tools? "
                            <button type="button" class="danger" data-action="confirm-mcp-remove" disabled=move || busy.get() on:click=remove>
                                {move || if going(|c| matches!(c, McpChange::Remove(_))) { "Removing…" } else { "Remove" }}
                            </button>
                            <button type="button" data-action="cancel-mcp-remove" on:click=move |_| confirming.set(false)>"Cancel"</button>
                        </span>
                    }.into_any()
                } else {
                    view! {
                        <button type="button" data-action="mcp-remove" disabled=move || busy.get()
                            on:click=move |_| confirming.set(true)>"Remove…"</button>
                    }.into_any()
                }}
            </div>
            {move || error().map(|message| view! { <p class="error settings-error mcp-error">{message}</p> })}
            {move || log_shown.get().then(|| match log.value().get() {
                _ if log.pending().get() => view! { <p class="empty mcp-log-loading">"Reading the log…"</p> }.into_any(),
                Some(Ok(lines)) if lines.is_empty() => view! { <p class="empty mcp-log-empty">"The server has written nothing to its log."</p> }.into_any(),
                Some(Ok(lines)) => view! { <pre class="mcp-log">{lines.join("\n")}</pre> }.into_any(),
                Some(Err(err)) => view! { <p class="error settings-error">{format!("The log could not be read: {}", err.message)}</p> }.into_any(),
                None => ().into_any(),
            })}
            {move || server.get().map(|server| view! { <ToolList server changes /> })}
        </li>
    }
}

/// A server's name, how it is reached and its connection.
#[component]
fn ServerFacts(server: McpServerView) -> impl IntoView {
    let note = transport_note(&server.transport);
    view! {
        <div class="mcp-server-head">
            <strong class="mcp-server-name">{server.name.as_str().to_owned()}</strong>
            <code class="mcp-transport">{transport_line(&server.transport)}</code>
            {note.map(|note| view! { <span class="mcp-transport-note">{note}</span> })}
        </div>
        <p class="mcp-connection" data-state=connection_slug(&server.connection)>{connection_label(&server.connection)}</p>
    }
}

/// A server's tools, each with the owner's choice.
#[component]
fn ToolList(server: McpServerView, changes: Changes) -> impl IntoView {
    if server.tools.is_empty() {
        let words = if server.enabled { "No tools listed yet: Test connects and lists them." } else { "Turn it on to list its tools." };
        return view! { <p class="empty mcp-no-tools">{words}</p> }.into_any();
    }
    let name = server.name.as_str().to_owned();
    view! {
        <ul class="mcp-tools">
            {server.tools.into_iter().map(|tool| view! { <ToolRow server=name.clone() tool changes /> }).collect_view()}
        </ul>
    }
    .into_any()
}

/// One tool: its name, what the server says of it, its badges and the owner's choice.
#[component]
fn ToolRow(server: String, tool: McpToolView, changes: Changes) -> impl IntoView {
    let policy = tool.policy;
    let effect = policy_effect(&tool);
    let badges = tool_badges(&tool);
    let offered = tool.offered_as.is_some();
    let changed = tool.changed;
    let label = format!("What {} may do", tool.name);
    let tool_name = tool.name.clone();
    // The choice holds for the tool exactly as shown here.
    let seen = tool.fingerprint.clone();
    let row_tool = tool.name.clone();
    let choose = move |ev: leptos::ev::Event| {
        if let Some(policy) = McpToolPolicy::parse(&event_target_value(&ev)) {
            changes.send(McpChange::Policy(McpToolPolicyParams {
                server: server.clone(),
                tool: tool_name.clone(),
                policy,
                fingerprint: Some(seen.clone()).filter(|f| !f.is_empty()),
            }));
        }
    };
    // Set again after every answer, so a refused choice goes back to the one in force.
    let version = changes.action.version();
    view! {
        <li class="mcp-tool" data-tool=row_tool data-policy=policy.as_str()>
            <div class="mcp-tool-head">
                <code class="mcp-tool-name">{tool.name}</code>
                {badges.into_iter().map(|(hook, words)| view! { <span class="mcp-badge" data-badge=hook>{words}</span> }).collect_view()}
            </div>
            <select data-field="mcp-policy" aria-label=label disabled=move || changes.action.pending().get()
                prop:value=move || { version.track(); policy.as_str() } on:change=choose>
                {POLICIES.into_iter().map(|choice| view! {
                    <option value=choice.as_str() selected={choice == policy}>{policy_label(choice)}</option>
                }).collect_view()}
            </select>
            {(!tool.description.trim().is_empty()).then(|| view! {
                <p class="mcp-tool-description" title="The server's own description">{tool.description}</p>
            })}
            <p class="mcp-tool-effect">{effect}</p>
            {(!offered).then(|| view! {
                <p class="mcp-tool-note">"Its name, description or schema cannot be offered to a model, so the agent cannot use it."</p>
            })}
            {changed.then(|| view! {
                <p class="mcp-tool-note mcp-tool-changed">
                    "The server changed what it says about this tool since you chose, so it is off until you choose again."
                </p>
            })}
        </li>
    }
}

/// The Add form: a name, then a program (with its arguments and environment) or a URL (with a
/// bearer token). A refusal, Hearth's or the backend's, keeps everything typed.
#[component]
fn AddServer(servers: Servers) -> impl IntoView {
    let form = RwSignal::new(McpForm::default());
    let kind = Memo::new(move |_| form.with(|form| form.kind));
    let error = RwSignal::new(None::<String>);
    let notice = RwSignal::new(None::<String>);
    let save = Action::new_local(move |params: &McpServerSaveParams| {
        let params = params.clone();
        async move {
            match ipc::mcp_server_save(&params).await {
                Ok(view) => {
                    notice.set(Some(format!("Saved {}. Its tools are listed above, each off until you allow it.", view.name)));
                    form.update(|form| *form = form.cleared());
                    merge(servers, view);
                }
                Err(err) => error.set(Some(err.message)),
            }
        }
    });
    let saving = save.pending();
    let submit = move |_| {
        if saving.get_untracked() {
            return;
        }
        notice.set(None);
        match form.with_untracked(McpForm::params) {
            Ok(params) => {
                error.set(None);
                save.dispatch_local(params);
            }
            Err(why) => error.set(Some(why)),
        }
    };
    let field = move |set: fn(&mut McpForm, String)| move |ev: leptos::ev::Event| form.update(|form| set(form, event_target_value(&ev)));

    view! {
        <p class="settings-note">
            "Arguments: one a line (a single line is split at spaces). Environment: one NAME=value a line; "
            "the values and the token are kept sealed and never shown again. Saving a server's name again changes that server and keeps your choices for its tools."
        </p>
        <form class="settings-form mcp-add" on:submit=|ev| ev.prevent_default()>
            <label class="settings-field" for="mcp-name">"Name"</label>
            <input id="mcp-name" data-field="mcp-name" type="text" maxlength="40" placeholder="notes" autocomplete="off" spellcheck="false"
                prop:value=move || form.with(|f| f.name.clone()) on:input=field(|f, v| f.name = v) />
            <label class="settings-field" for="mcp-kind">"Reached by"</label>
            <select id="mcp-kind" data-field="mcp-kind" prop:value=move || kind.get().slug()
                on:change=move |ev| form.update(|f| f.kind = McpKind::parse(&event_target_value(&ev)))>
                <option value="stdio" selected=move || kind.get() == McpKind::Stdio>"A program on this computer (stdio)"</option>
                <option value="http" selected=move || kind.get() == McpKind::Http>"A web address (HTTP)"</option>
            </select>
            {move || match kind.get() {
                McpKind::Stdio => view! {
                    <label class="settings-field" for="mcp-command">"Program"</label>
                    <input id="mcp-command" data-field="mcp-command" type="text" placeholder="npx" autocomplete="off" spellcheck="false"
                        prop:value=move || form.with(|f| f.command.clone()) on:input=field(|f, v| f.command = v) />
                    <label class="settings-field" for="mcp-args">"Arguments"</label>
                    <textarea id="mcp-args" data-field="mcp-args" rows="3" placeholder="-y\n@example/notes-mcp" autocomplete="off" spellcheck="false"
                        prop:value=move || form.with(|f| f.args.clone()) on:input=field(|f, v| f.args = v)></textarea>
                    <label class="settings-field" for="mcp-env">"Environment"</label>
                    <textarea id="mcp-env" data-field="mcp-env" rows="2" placeholder="NOTES_API_KEY=…" autocomplete="off" spellcheck="false"
                        prop:value=move || form.with(|f| f.env.clone()) on:input=field(|f, v| f.env = v)></textarea>
                }.into_any(),
                McpKind::Http => view! {
                    <label class="settings-field" for="mcp-url">"URL"</label>
                    <input id="mcp-url" data-field="mcp-url" type="url" placeholder="https://example.com/mcp" autocomplete="off" spellcheck="false"
                        prop:value=move || form.with(|f| f.url.clone()) on:input=field(|f, v| f.url = v) />
                    <label class="settings-field" for="mcp-bearer">"Bearer token"</label>
                    <input id="mcp-bearer" data-field="mcp-bearer" type="password" placeholder="none" autocomplete="off" spellcheck="false"
                        prop:value=move || form.with(|f| f.bearer.clone()) on:input=field(|f, v| f.bearer = v) />
                }.into_any(),
            }}
            <div class="settings-actions">
                <button type="submit" class="settings-primary" data-action="mcp-add" disabled=move || saving.get() on:click=submit>
                    {move || if saving.get() { "Connecting…" } else { "Save" }}
                </button>
                {move || notice.get().map(|text| view! { <span class="settings-saved">{text}</span> })}
            </div>
        </form>
        {move || error.get().map(|message| view! { <p class="error settings-error mcp-add-error">{message}</p> })}
    }
}

/// A server's answer, in place of what was shown of it.
fn merge(servers: Servers, view: McpServerView) {
    servers.update(|list| merge_server(list.get_or_insert_with(Vec::new), view));
}
