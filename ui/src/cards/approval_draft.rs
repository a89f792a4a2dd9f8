//! What a proposal will do, field by field: the email as it will be sent or the event as it
//! will be written. Everything is rendered as text (a body is never HTML), and empty parts
//! are shown as "none" rather than hidden, so the owner sees the whole of it.

use hearth_protocol::approvals::{
    DraftAttachment, EmailDraft, EventDraft, EventTiming, HeldCallDraft, HeldTool, ProposalDraft, ProposalView, WebSubmitDraft,
};
use leptos::prelude::*;

use crate::clock::{parse_time, zoned_time};
use crate::navigation::Navigation;
use crate::state::approvals::{form_rows, gesture_line, timing_label};
use crate::state::files::size_label;

/// The draft of `proposal`, with the account it acts as.
#[component]
pub fn DraftView(proposal: ProposalView) -> impl IntoView {
    let account = proposal.connection.account;
    match proposal.draft {
        ProposalDraft::EmailSend(email) => view! { <EmailDraftView email account /> }.into_any(),
        ProposalDraft::CalendarCreate(event) | ProposalDraft::CalendarUpdate(event) | ProposalDraft::CalendarDelete(event) => {
            view! { <EventDraftView event account /> }.into_any()
        }
        ProposalDraft::WebSubmit(form) => view! { <WebSubmitDraftView form /> }.into_any(),
        ProposalDraft::HeldCall(call) => view! { <HeldCallView call /> }.into_any(),
    }
}

/// A call held for the owner (after reading outside content, or a plug-in tool's call): why it
/// waits, the tool — for a plug-in tool, its server and its name at the server — and its
/// arguments exactly as they will run.
#[component]
fn HeldCallView(call: HeldCallDraft) -> impl IntoView {
    let arguments = serde_json::to_string_pretty(&call.arguments).unwrap_or_else(|_| call.arguments.to_string());
    let kind = if matches!(call.tool, HeldTool::Mcp(_)) { "mcp" } else { "hearth" };
    let tool = match call.tool {
        HeldTool::Hearth(tool) => view! {
            <dt>"Tool"</dt>
            <dd class="approval-held-tool">{tool.as_str()}</dd>
        }
        .into_any(),
        HeldTool::Mcp(tool) => view! {
            <dt>"Plug-in tool"</dt>
            <dd class="approval-held-tool">{tool.tool}</dd>
            <dt>"From the MCP server"</dt>
            <dd class="approval-held-server">{tool.server.as_str().to_owned()}</dd>
        }
        .into_any(),
    };
    view! {
        <p class="approval-note approval-held-reason">{call.reason}</p>
        <dl class="approval-fields" data-held-tool=kind>
            {tool}
            <dt>"What"</dt>
            <dd class="approval-held-summary">{call.summary}</dd>
        </dl>
        <pre class="approval-held-arguments">{arguments}</pre>
        <p class="approval-note">"Approve runs exactly this call, once."</p>
    }
}

/// A form the agent's browser would send: from which page, by which button, to where, and
/// every field, as text.
#[component]
fn WebSubmitDraftView(form: WebSubmitDraft) -> impl IntoView {
    let rows = form_rows(&form.fields);
    let sent_by = gesture_line(&form);
    let page = if form.page_title.trim().is_empty() { form.page_url.clone() } else { format!("{} — {}", form.page_title, form.page_url) };
    view! {
        <dl class="approval-fields">
            <dt>"Browser"</dt>
            <dd class="approval-account">{form.profile}</dd>
            <dt>"Page"</dt>
            <dd class="approval-page">{page}</dd>
            <dt>"Sent by"</dt>
            <dd class="approval-element">{sent_by}</dd>
            <dt>"Sends to"</dt>
            <dd class="approval-destination">{format!("{} {}", form.method, form.destination)}</dd>
        </dl>
        <p class="approval-note">"Sent only if the page and the form are still exactly as shown."</p>
        <dl class="approval-form-fields">
            {rows.into_iter().map(|row| view! { <dt>{row.field}</dt><dd class="approval-form-value">{row.value}</dd> }).collect_view()}
        </dl>
    }
}

#[component]
fn EmailDraftView(email: EmailDraft, account: String) -> impl IntoView {
    view! {
        <dl class="approval-fields">
            <dt>"From"</dt>
            <dd class="approval-account">{account}</dd>
            <dt>"To"</dt>
            <dd class="approval-to">{addresses(&email.to)}</dd>
            <dt>"Cc"</dt>
            <dd class="approval-cc">{addresses(&email.cc)}</dd>
            <dt>"Bcc"</dt>
            <dd class="approval-bcc">{addresses(&email.bcc)}</dd>
            <dt>"Subject"</dt>
            <dd class="approval-subject">{email.subject}</dd>
        </dl>
        {email.in_reply_to.map(|_| view! { <p class="approval-note">"Sent as a reply in the existing conversation."</p> })}
        <pre class="approval-body">{email.body}</pre>
        {(!email.attachments.is_empty()).then(|| view! {
            <ul class="approval-attachments">
                {email.attachments.into_iter().map(|attachment| view! { <li><AttachmentButton attachment /></li> }).collect_view()}
            </ul>
        })}
    }
}

/// An attached file; opens it in the Files viewer when the app's navigation is there.
#[component]
fn AttachmentButton(attachment: DraftAttachment) -> impl IntoView {
    let label = format!("{} · {}", attachment.name, size_label(attachment.size));
    let file_id = attachment.file_id;
    let nav = Navigation::from_context();
    view! {
        <button
            class="approval-attachment"
            data-file-id=file_id.to_string()
            disabled=nav.is_none()
            title="Open in Files"
            on:click=move |_| {
                if let Some(nav) = nav {
                    nav.open_file(file_id.clone());
                }
            }
        >{label}</button>
    }
}

#[component]
fn EventDraftView(event: EventDraft, account: String) -> impl IntoView {
    let zoned = zoned_timing(&event.timing, &event.time_zone);
    view! {
        <dl class="approval-fields">
            <dt>"Account"</dt>
            <dd class="approval-account">{account}</dd>
            <dt>"Calendar"</dt>
            <dd class="approval-calendar">{event.calendar_id}</dd>
            {event.event_id.map(|id| view! { <dt>"Event"</dt><dd class="approval-event-id">{id}</dd> })}
            <dt>"Title"</dt>
            <dd class="approval-title">{event.title}</dd>
            <dt>"When"</dt>
            <dd class="approval-when">
                {zoned.map(|zoned| view! { <span class="approval-when-zoned">{zoned}</span> })}
                <span class="approval-when-exact">{timing_label(&event.timing)}</span>
            </dd>
            <dt>"Time zone"</dt>
            <dd class="approval-time-zone">{event.time_zone}</dd>
            <dt>"Location"</dt>
            <dd class="approval-location">{or_none(event.location)}</dd>
            <dt>"Attendees"</dt>
            <dd class="approval-attendees">{addresses(&event.attendees)}</dd>
        </dl>
        {(!event.description.is_empty()).then(|| view! { <pre class="approval-description">{event.description}</pre> })}
    }
}

/// A timed event's start and end in its own time zone, when the webview knows the zone.
fn zoned_timing(timing: &EventTiming, time_zone: &str) -> Option<String> {
    let EventTiming::Timed { start, end } = timing else { return None };
    let start = zoned_time(parse_time(start)?, time_zone)?;
    let end = zoned_time(parse_time(end)?, time_zone)?;
    Some(format!("{start} – {end}"))
}

fn addresses(list: &[String]) -> String {
    if list.is_empty() { "none".to_owned() } else { list.join(", ") }
}

fn or_none(text: String) -> String {
    if text.trim().is_empty() { "none".to_owned() } else { text }
}
