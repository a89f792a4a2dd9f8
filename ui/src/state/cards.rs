//! Tool results read as card models. A card of its own is shown only for a completed call
//! whose result parses as its tool's type; anything else (still running, an error, a result
//! from an older backend) falls back to the generic card, which shows the raw text.

use hearth_protocol::approvals::PrepareResult;
use hearth_protocol::browser::{ActReceipt, MAX_SAVED_PROFILES, PageView};
use hearth_protocol::files::{FileDetail, FileView};
use hearth_protocol::mail::{MailSearchResult, MailThread};
use serde::de::DeserializeOwned;

use crate::state::chat::{ToolCallView, ToolStatus};

/// The completed call's result as `T`, or `None` for the generic card.
pub fn tool_result<T: DeserializeOwned>(call: &ToolCallView) -> Option<T> {
    if call.status != ToolStatus::Complete {
        return None;
    }
    serde_json::from_str(call.result.as_deref()?).ok()
}

/// Whether the call completed with a result (an error or a running call gets the generic card).
pub fn completed(call: &ToolCallView) -> bool {
    call.status == ToolStatus::Complete && call.result.is_some()
}

/// `prepare_email` / `prepare_event`: the proposal to review.
pub fn prepared(call: &ToolCallView) -> Option<PrepareResult> {
    tool_result(call)
}

/// Any tool: the card of a call the trust policy held for the owner (its result is the
/// proposal, not the tool's own result).
pub fn held(call: &ToolCallView) -> Option<PrepareResult> {
    prepared(call).filter(|result| result.kind == hearth_protocol::approvals::ProposalKind::HeldCall)
}

/// `search_mail`: the matches.
pub fn mail_search(call: &ToolCallView) -> Option<MailSearchResult> {
    tool_result(call)
}

/// `read_mail_thread`: the conversation.
pub fn mail_thread(call: &ToolCallView) -> Option<MailThread> {
    tool_result(call)
}

/// `import_pdf` / `fill_pdf`: the file made.
pub fn file_made(call: &ToolCallView) -> Option<FileView> {
    tool_result(call)
}

/// `inspect_pdf`: the file inspected (its fields are in the file's count).
pub fn file_inspected(call: &ToolCallView) -> Option<FileView> {
    tool_result::<FileDetail>(call).map(|detail| detail.file)
}

/// `present_choices`: the question and its options.
pub fn choices_offered(call: &ToolCallView) -> Option<hearth_protocol::ipc::PresentChoicesResult> {
    tool_result(call)
}

/// `schedule_task`: the schedule made.
pub fn schedule_made(call: &ToolCallView) -> Option<hearth_protocol::schedules::ScheduleTaskResult> {
    tool_result(call)
}

/// `browse_web` / `read_web` / `look_page`: the page seen.
pub fn page_seen(call: &ToolCallView) -> Option<PageView> {
    tool_result(call)
}

/// `search_web`: the results.
pub fn search_results(call: &ToolCallView) -> Option<hearth_protocol::web_search::SearchResultsView> {
    tool_result(call)
}

/// The line under a search card's title: how many results, and what was left out and why.
pub fn search_meta(found: &hearth_protocol::web_search::SearchResultsView) -> String {
    let mut meta = match found.results.len() {
        0 => "No results".to_owned(),
        1 => "1 result".to_owned(),
        n => format!("{n} results"),
    };
    if found.left_out > 0 {
        meta.push_str(&format!(" · {} more not read", found.left_out));
    }
    if found.refused > 0 {
        meta.push_str(&format!(" · {} left out: on this machine or a private network", found.refused));
    }
    meta
}

/// `page_act`: what the action did.
pub fn page_acted(call: &ToolCallView) -> Option<ActReceipt> {
    tool_result(call)
}

/// What the card says when Hearth removed an unused browser profile so this page could open:
/// browsing never stops at the profile limit, and the owner learns which profile went.
pub fn made_room_line(profile: &str) -> String {
    format!(
        "Hearth keeps {MAX_SAVED_PROFILES} browser profiles at most, so it removed the unused one {profile} (with its cookies) to make room."
    )
}

/// The line a page card shows under the title: the address without its scheme, and whether the
/// text was cut or the browser had to be started again.
pub fn page_meta(page: &PageView) -> String {
    let address = page.final_url.split_once("://").map_or(page.final_url.as_str(), |(_, rest)| rest);
    let mut meta = address.to_owned();
    if page.truncated {
        meta.push_str(" · text cut at 30,000 characters");
    }
    if page.restarted {
        meta.push_str(" · the browser had stopped and was started again");
    }
    meta
}

/// What a page_act card says it did.
pub fn act_line(receipt: &ActReceipt) -> String {
    use hearth_protocol::browser::PageAction;
    let verb = match receipt.action {
        PageAction::Click => "Clicked",
        PageAction::Type => "Typed into",
        PageAction::Select => "Chose an option of",
        PageAction::Press => "Pressed a key on",
        PageAction::Scroll => "Scrolled to",
    };
    let moved = if !receipt.url_after.is_empty() && receipt.url_after != receipt.url_before {
        format!(" → {}", receipt.url_after)
    } else {
        String::new()
    };
    let what = if receipt.name.is_empty() { format!("a {}", receipt.role) } else { format!("{} \"{}\"", receipt.role, receipt.name) };
    format!("{verb} {what}{moved}")
}

/// What a card says of a download the browser started.
pub fn download_line(download: &hearth_protocol::browser::DownloadView) -> String {
    use hearth_protocol::browser::DownloadStatus;
    let size = if download.bytes >= 1024 * 1024 {
        format!("{:.1} MiB", download.bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KiB", download.bytes.div_ceil(1024))
    };
    let state = match download.status {
        DownloadStatus::Downloading => format!("downloading ({size} so far)"),
        DownloadStatus::Ready => format!("downloaded, {size}: ready to save into Files"),
        DownloadStatus::Saved => format!("saved into Files, {size}"),
        DownloadStatus::Refused(reason) => reason.explain().to_owned(),
        DownloadStatus::Cancelled => "cancelled before it finished".to_owned(),
    };
    format!("Download {}: {state}", download.name)
}

#[cfg(test)]
#[path = "cards_tests.rs"]
mod tests;
