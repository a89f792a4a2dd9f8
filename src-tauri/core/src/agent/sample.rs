//! The sample agent: no model, no network, deterministic routing.
//!
//! It lets the offline app (and every test) exercise real streams, tool cards, the store
//! and Stop: greetings explain Hearth; calendar questions read the seeded calendar; a
//! deliberately slow route counts for Stop tests; anything else becomes a durable task.

use std::time::Duration;

use chrono::{Datelike, Local, NaiveTime, TimeZone};
use futures::stream::BoxStream;
use hearth_protocol::ToolName;
use hearth_protocol::agui::{Event, RunAgentInput, RunErrorEvent, RunFinishedEvent};
use hearth_protocol::ids::TaskId;
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::tasks::TaskKind;
use tokio_util::sync::CancellationToken;

use super::emit::{Emitter, Stopped, event_stream};
use super::{Agent, ToolContextFactory};
use crate::store::Store;
use crate::store::workspace::CalendarEvent;
use crate::tools::{StepId, ToolContext, dispatch};

/// The answer to "hello": what this build can really do, and nothing it cannot. Each
/// clause is backed by a tool handler in `core::tools` or a screen; capabilities that are
/// only names in `ToolName` (the computer, Google, goals, memory) stay out until
/// they exist, so the owner is never told of something that then does nothing.
pub const GREETING: &str = "Hello! I'm Hearth, your personal agent. I run on this machine and keep your data here. \
     I can search and read your mail, read your calendar, and prepare an email or a calendar event for you to \
     review. I can open a web page you give me the address of and read it. I can complete a permission slip or another PDF form that came by mail, and keep your PDFs in Files. \
     Longer jobs become tasks in Activity that you can pause, resume, cancel or retry, and Stop ends a reply at \
     once. Anything that sends or changes something waits for your approval. Try \"plan my day\" or \
     \"complete the permission slip\", or ask me to do a job.";

/// What the sample agent does with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Explain what Hearth can do.
    Greeting,
    /// Read the calendar and summarise it.
    Calendar,
    /// Count to 50, slowly, so Stop can be pressed.
    SlowCount,
    /// Complete a form that arrived by mail (the document workflow).
    Document,
    /// Open the web page the message names and say what it is.
    Browse,
    /// Make a reminder repeat ("remind me every morning to …").
    Remind,
    /// Keep a fact ("remember that I'm vegetarian").
    Remember,
    /// Watch a page ("watch the sample page", "watch https://… below $25").
    Watch,
    /// Add up a bank statement ("summarize this CSV"): the one pasted, or the sample one.
    Finance,
    /// Put options in front of the owner ("help me choose: the train or the bus").
    Choose,
    /// The owner picked an option ("I pick: the train").
    Picked,
    /// Store a durable task.
    Delegate,
}

/// The first http(s) address in `text`, as written (up to the next space).
fn first_url(text: &str) -> Option<&str> {
    let start = text.find("https://").or_else(|| text.find("http://"))?;
    let rest = &text[start..];
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    Some(rest[..end].trim_end_matches(['.', ',', ')', '!', '?']))
}

/// Picks the route for the owner's message.
pub fn route(text: &str) -> Route {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let has = |w: &str| words.contains(&w);
    if lower.starts_with("watch ") {
        Route::Watch
    } else if first_url(text).is_some() {
        Route::Browse
    } else if lower.contains("slowly") || lower.contains("count to 50") {
        Route::SlowCount
    } else if (lower.contains("permission") && (lower.contains("slip") || lower.contains("form")))
        || ((lower.contains("fill") || lower.contains("complete")) && lower.contains("form"))
    {
        Route::Document
    } else if lower.contains("remind me") {
        Route::Remind
    } else if lower.starts_with("remember that") || lower.starts_with("remember:") {
        Route::Remember
    } else if (lower.contains("summarize") || lower.contains("summarise"))
        && (has("csv") || lower.contains("statement") || lower.contains("spending"))
    {
        Route::Finance
    } else if lower.starts_with("help me choose") || lower.starts_with("help me decide") {
        Route::Choose
    } else if lower.starts_with("i pick:") {
        Route::Picked
    } else if lower.contains("calendar") || lower.contains("plan my day") || has("schedule") || has("agenda") {
        Route::Calendar
    } else if words.len() <= 6 && (has("hello") || has("hi") || has("hey") || has("help") || lower.contains("what can you do")) {
        Route::Greeting
    } else {
        Route::Delegate
    }
}

/// The offline sample agent. Its tool calls go through the same registry, dispatch and
/// operation keys as a model's; it only decides *which* calls to make, deterministically.
#[derive(Clone)]
pub struct SampleAgent {
    store: Store,
    tools: ToolContextFactory,
    chunk_delay: Duration,
    slow_step: Duration,
}

impl std::fmt::Debug for SampleAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleAgent").field("chunk_delay", &self.chunk_delay).finish_non_exhaustive()
    }
}

impl SampleAgent {
    /// An agent searching `store`, calling tools in contexts from `tools`, pacing text by
    /// `chunk_delay` and the slow route by `slow_step`.
    pub fn new(store: Store, tools: ToolContextFactory, chunk_delay: Duration, slow_step: Duration) -> Self {
        Self { store, tools, chunk_delay, slow_step }
    }
}

impl Agent for SampleAgent {
    fn run(&self, input: RunAgentInput, cancel: CancellationToken) -> BoxStream<'static, Event> {
        let agent = self.clone();
        let token = cancel.clone();
        event_stream(cancel, move |out| async move { agent.respond(&out, input, token).await })
    }
}

impl SampleAgent {
    async fn respond(&self, out: &Emitter, input: RunAgentInput, cancel: CancellationToken) -> Result<(), Stopped> {
        let thread_id = input.thread_id.clone();
        let run_id = input.run_id.clone();
        out.run_started(&input).await?;
        let text = super::last_user_text(&input).unwrap_or_default();
        let tools = (self.tools)(&thread_id, &run_id, cancel);
        let outcome = match route(&text) {
            Route::Greeting => self.greeting(out).await,
            Route::Calendar => self.calendar(out, &tools).await,
            Route::SlowCount => self.slow_count(out).await,
            Route::Document => self.document(out, &tools).await,
            Route::Browse => self.browse(out, &tools, first_url(&text).unwrap_or_default()).await,
            Route::Remind => self.remind(out, &tools, &text).await,
            Route::Remember => self.remember(out, &tools, &text).await,
            Route::Choose => self.choose(out, &tools, &text).await,
            Route::Finance => self.finance(out, &tools, &text).await,
            Route::Watch => self.watch(out, &tools, &text).await,
            Route::Picked => {
                let pick = text.trim().get("i pick:".len()..).unwrap_or_default().trim();
                out.text(&format!("You picked {pick}. I'll go with that."), self.chunk_delay).await.map(|_| ()).map_err(SampleError::from)
            }
            Route::Delegate => self.delegate(out, &tools, &text).await,
        };
        match outcome {
            Ok(()) => out.send(Event::RunFinished(RunFinishedEvent::success(thread_id, run_id, None))).await,
            Err(SampleError::Stopped) => Err(Stopped),
            Err(SampleError::Store(message)) => out.send(Event::RunError(RunErrorEvent { message, ..Default::default() })).await,
        }
    }

    async fn greeting(&self, out: &Emitter) -> Result<(), SampleError> {
        out.text(GREETING, self.chunk_delay).await?;
        Ok(())
    }

    /// Shows a tool call, runs it through dispatch, and shows its result.
    async fn call(
        &self,
        out: &Emitter,
        tools: &ToolContext,
        tool: ToolName,
        args: &serde_json::Value,
    ) -> Result<crate::tools::ToolOutput, SampleError> {
        let call = out.tool_call(tool.as_str(), args).await?;
        let output = dispatch(tools, tool.as_str(), &args.to_string(), StepId::Call(call.clone())).await;
        out.tool_result(&call, output.content.clone()).await?;
        Ok(output)
    }

    async fn calendar(&self, out: &Emitter, tools: &ToolContext) -> Result<(), SampleError> {
        let now = Local::now();
        let today = now.date_naive();
        let monday = today - chrono::Duration::days(i64::from(today.weekday().num_days_from_monday()));
        let start_of = |d: chrono::NaiveDate| Local.from_local_datetime(&d.and_time(NaiveTime::MIN)).earliest().unwrap_or(now);
        let (from, to) = (start_of(monday), start_of(monday + chrono::Duration::days(7)));
        let args = serde_json::json!({ "timeMin": from.to_rfc3339(), "timeMax": to.to_rfc3339() });
        let output = self.call(out, tools, ToolName::ReadCalendar, &args).await?;
        if output.is_error {
            return Err(SampleError::Store(format!("Reading the calendar failed: {}", output.content)));
        }
        let events: Vec<CalendarEvent> = serde_json::from_str::<serde_json::Value>(&output.content)
            .ok()
            .and_then(|v| v.get("events").cloned())
            .and_then(|events| serde_json::from_value(events).ok())
            .unwrap_or_default();
        out.text(&summarise_week(&events, today), self.chunk_delay).await?;
        Ok(())
    }

    async fn slow_count(&self, out: &Emitter) -> Result<(), SampleError> {
        let message_id = super::emit::new_id();
        out.send(Event::TextMessageStart(hearth_protocol::agui::TextMessageStartEvent {
            message_id: message_id.clone(),
            ..Default::default()
        }))
        .await?;
        for n in 1..=50 {
            out.pause(self.slow_step).await?;
            let delta = if n == 50 { "50.".to_owned() } else { format!("{n}, ") };
            out.send(Event::TextMessageContent(hearth_protocol::agui::TextMessageContentEvent {
                message_id: message_id.clone(),
                delta,
                ..Default::default()
            }))
            .await?;
        }
        out.send(Event::TextMessageEnd(hearth_protocol::agui::TextMessageEndEvent { message_id, ..Default::default() })).await?;
        Ok(())
    }

    /// Finds the newest mail carrying a PDF form and hands it to a document task.
    async fn document(&self, out: &Emitter, tools: &ToolContext) -> Result<(), SampleError> {
        let failed = |e: crate::store::StoreError| SampleError::Store(format!("Reading the mailbox failed: {e}"));
        let mut form = None;
        for query in [["permission".to_owned()].as_slice(), ["form".to_owned()].as_slice(), &[]] {
            for (message, attachments) in self.store.search_messages(query, 50).await.map_err(failed)? {
                if attachments > 0 && message.folder == "inbox" {
                    form = Some(message);
                    break;
                }
            }
            if form.is_some() {
                break;
            }
        }
        let Some(message) = form else {
            out.text("I looked through your mail but found no form attached to any message.", self.chunk_delay).await?;
            return Ok(());
        };
        let title: String = format!("Complete the form from “{}”", message.subject).chars().take(120).collect();
        let task_input = serde_json::to_value(crate::documents::DocumentInput { message_id: message.id.clone(), values: None })
            .map_err(|e| SampleError::Store(e.to_string()))?;
        self.delegate_as(out, tools, TaskKind::Document, &title, "Fill the attached PDF form and reply with it.", &task_input).await?;
        out.text(
            "I found the form and started a task for it. It will ask you for the values, fill a copy, and prepare \
             the reply — nothing is sent until you approve it.",
            self.chunk_delay,
        )
        .await?;
        Ok(())
    }

    /// Opens the page through browse_web (its card shows the picture) and names what it found.
    async fn browse(&self, out: &Emitter, tools: &ToolContext, url: &str) -> Result<(), SampleError> {
        let output = self.call(out, tools, ToolName::BrowseWeb, &serde_json::json!({ "url": url })).await?;
        let seen: serde_json::Value = serde_json::from_str(&output.content).unwrap_or_default();
        let reply = if output.is_error {
            let why = seen.get("error").and_then(serde_json::Value::as_str).unwrap_or("it could not be read");
            format!("I could not open that page: {why}.")
        } else {
            let title = seen.get("title").and_then(serde_json::Value::as_str).unwrap_or_default();
            let words = seen.get("text").and_then(serde_json::Value::as_str).map_or(0, |t| t.split_whitespace().count());
            format!("I opened \"{title}\" ({words} words). Its picture is in the card above; ask me what you want to know from it.")
        };
        out.text(&reply, self.chunk_delay).await?;
        Ok(())
    }

    /// Makes the reminder a schedule through schedule_task (its card shows the next run).
    async fn remind(&self, out: &Emitter, tools: &ToolContext, text: &str) -> Result<(), SampleError> {
        let (title, repeat) = reminder_of(text);
        let args = serde_json::json!({ "title": title, "job": "reminder", "repeat": repeat });
        let output = self.call(out, tools, ToolName::ScheduleTask, &args).await?;
        let made: Option<hearth_protocol::schedules::ScheduleTaskResult> = serde_json::from_str(&output.content).ok();
        let reply = match made {
            Some(made) if !output.is_error => format!(
                "Done: I'll remind you to {} {} ({}). Each reminder arrives in your Inbox; pause, run or delete it in \
                 Activity → Schedules.",
                made.title.to_lowercase(),
                made.when,
                made.time_zone
            ),
            _ => format!("I could not make that reminder: {}", output.content),
        };
        out.text(&reply, self.chunk_delay).await?;
        Ok(())
    }

    /// Shows a delegate_task card for a task of a kind no model tool creates (a document or a
    /// finance task), created through the same task desk and keyed by the same operation-key
    /// function as delegate_task.
    async fn delegate_as(
        &self,
        out: &Emitter,
        tools: &ToolContext,
        kind: TaskKind,
        title: &str,
        instructions: &str,
        input: &serde_json::Value,
    ) -> Result<(), SampleError> {
        let args = serde_json::json!({ "title": title, "instructions": instructions });
        let call = out.tool_call(ToolName::DelegateTask.as_str(), &args).await?;
        // This task is made beside dispatch, so the trust policy is not asked: only the owner's
        // own words in the window may make one. An app using the endpoint (whose messages are
        // not the owner's) is told so, and nothing is made.
        if tools.scope().origin() != hearth_protocol::approvals::ProposalOrigin::OwnerChat {
            let refused = serde_json::json!({
                "error": "Only the owner, in Hearth's window, can start this kind of task; nothing was started."
            });
            out.tool_result(&call, refused.to_string()).await?;
            return Ok(());
        }
        let key = tools.scope().key(&StepId::Call(call.clone())).joined();
        let task = tools
            .desk
            .create(&key, kind, title, input, tools.scope().thread_id(), None, tools.scope().chat_run())
            .await
            .map_err(|e| SampleError::Store(format!("Saving the task failed: {e}")))?;
        let result = DelegateTaskResult { task_id: TaskId::trusted(task.id), title: task.title, status: task.status };
        let content = serde_json::to_string(&result).map_err(|e| SampleError::Store(e.to_string()))?;
        out.tool_result(&call, content).await?;
        Ok(())
    }

    /// Makes a monitor through watch_page: the page the message names (or the built-in sample
    /// page), on any change, or on a price "below" a value.
    async fn watch(&self, out: &Emitter, tools: &ToolContext, text: &str) -> Result<(), SampleError> {
        let url = first_url(text).unwrap_or(crate::browser::sample_page::SAMPLE_URL);
        let lower = text.to_lowercase();
        let below = lower.split_once(" below ").map(|(_, rest)| rest.split_whitespace().next().unwrap_or_default().to_owned());
        let title = if url == crate::browser::sample_page::SAMPLE_URL { "Sample shop".to_owned() } else { url.chars().take(80).collect() };
        let args = match &below {
            Some(price) => {
                serde_json::json!({ "title": title, "url": url, "condition": "price_below", "value": price, "intervalMinutes": 10 })
            }
            None => serde_json::json!({ "title": title, "url": url, "condition": "change", "intervalMinutes": 10 }),
        };
        let output = self.call(out, tools, ToolName::WatchPage, &args).await?;
        let reply = if output.is_error {
            format!("I could not watch that page: {}", output.content)
        } else {
            "I'm watching it every 10 minutes. When it changes, the Inbox tells you what changed; pause, stop or check it \
             now from its task in Activity."
                .to_owned()
        };
        out.text(&reply, self.chunk_delay).await?;
        Ok(())
    }

    /// Hands the statement (pasted after the first line, or the sample one) to a finance task,
    /// through the task desk and the operation-key function, as the document route does.
    async fn finance(&self, out: &Emitter, tools: &ToolContext, text: &str) -> Result<(), SampleError> {
        let pasted = text.split_once('\n').map(|(_, rest)| rest.trim()).filter(|rest| rest.lines().count() > 1);
        let (csv, which) = match pasted {
            Some(csv) => (csv.to_owned(), "the statement you pasted"),
            None => (crate::finance::SAMPLE_STATEMENT.to_owned(), "the sample statement (paste your own CSV after the first line)"),
        };
        let instructions = "Add up the statement: income, spending by category and by month.";
        let input = crate::finance::task_input(&csv);
        self.delegate_as(out, tools, TaskKind::Finance, crate::finance::TASK_TITLE, instructions, &input).await?;
        out.text(&format!("I started a finance task on {which}. Open it for the totals and the chart."), self.chunk_delay).await?;
        Ok(())
    }

    /// Offers the options the message lists through present_choices.
    async fn choose(&self, out: &Emitter, tools: &ToolContext, text: &str) -> Result<(), SampleError> {
        let options = options_in(text);
        if options.len() < 2 {
            out.text("Tell me the options, like \"help me choose: the train or the bus\".", self.chunk_delay).await?;
            return Ok(());
        }
        let args = serde_json::json!({ "question": "Which one?", "options": options });
        let output = self.call(out, tools, ToolName::PresentChoices, &args).await?;
        if output.is_error {
            out.text(&format!("I could not offer those: {}", output.content), self.chunk_delay).await?;
        }
        Ok(())
    }

    /// Keeps what follows "remember that" through remember_fact.
    async fn remember(&self, out: &Emitter, tools: &ToolContext, text: &str) -> Result<(), SampleError> {
        let trimmed = text.trim();
        let fact = ["remember that", "remember:"]
            .iter()
            .find_map(|p| trimmed.get(..p.len()).filter(|head| head.eq_ignore_ascii_case(p)).map(|_| &trimmed[p.len()..]))
            .unwrap_or(trimmed)
            .trim()
            .trim_end_matches('.');
        let output = self.call(out, tools, ToolName::RememberFact, &serde_json::json!({ "text": fact })).await?;
        let reply = if output.is_error {
            format!("I could not keep that: {}", output.content)
        } else {
            format!("I'll remember: {fact}. You can read, correct or forget it in Memory.")
        };
        out.text(&reply, self.chunk_delay).await?;
        Ok(())
    }

    async fn delegate(&self, out: &Emitter, tools: &ToolContext, text: &str) -> Result<(), SampleError> {
        let title: String = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(80).collect();
        let args = serde_json::json!({ "title": title, "instructions": text });
        let output = self.call(out, tools, ToolName::DelegateTask, &args).await?;
        if output.is_error {
            return Err(SampleError::Store(format!("Saving the task failed: {}", output.content)));
        }
        out.text(
            "I've saved this as a task. You can follow it in Activity; it will wait there until a model is configured.",
            self.chunk_delay,
        )
        .await?;
        Ok(())
    }
}

enum SampleError {
    Stopped,
    Store(String),
}

impl From<Stopped> for SampleError {
    fn from(_: Stopped) -> Self {
        SampleError::Stopped
    }
}

/// What a "remind me …" message asks for: the reminder's title and its rule (schedule_task's
/// `repeat`). A few plain phrasings — every morning/evening/day/weekday, a named day, every N
/// hours, each month — with "at 7", "at 7:30" or "at 7pm"; anything else is every day at 08:00.
pub fn reminder_of(text: &str) -> (String, serde_json::Value) {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric() && c != ':').filter(|w| !w.is_empty()).collect();
    let has = |w: &str| words.contains(&w);
    let what = lower.split_once("remind me").map_or(lower.as_str(), |(_, rest)| rest);
    let what = what.split_once(" to ").map_or(what, |(_, rest)| rest);
    let what = what.trim().trim_end_matches(['.', '!', '?']).trim();
    let mut title: String = what.chars().take(120).collect();
    if let Some(first) = title.get(..1) {
        title = first.to_uppercase() + &title[1..];
    }
    if title.is_empty() {
        title = "Reminder".into();
    }
    let default_hour = if has("evening") || has("night") { 18 } else { 8 };
    let at = words
        .iter()
        .position(|w| *w == "at")
        .and_then(|i| words.get(i + 1).map(|t| (t, words.get(i + 2))))
        .and_then(|(t, next)| {
            let pm = t.ends_with("pm") || next.is_some_and(|n| *n == "pm");
            let t = t.trim_end_matches("am").trim_end_matches("pm");
            let (h, m) = t.split_once(':').unwrap_or((t, "0"));
            let (mut h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
            if pm && h < 12 {
                h += 12;
            }
            (h < 24 && m < 60).then(|| format!("{h:02}:{m:02}"))
        })
        .unwrap_or_else(|| format!("{default_hour:02}:00"));
    const DAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
    let named: Vec<&str> = DAYS.into_iter().filter(|d| has(d) || has(&format!("{d}s"))).collect();
    let hours = words.iter().position(|w| *w == "every").and_then(|i| {
        let n: Option<u32> = words.get(i + 1).and_then(|n| n.parse().ok());
        match (n, words.get(i + 1).copied(), words.get(i + 2).copied()) {
            (Some(n), _, Some("hours" | "hour")) => Some(n.saturating_mul(60)),
            (_, Some("hour"), _) => Some(60),
            _ => None,
        }
    });
    let repeat = if let Some(minutes) = hours {
        serde_json::json!({ "every": "interval", "minutes": minutes.clamp(5, 525_600) })
    } else if has("month") || has("monthly") {
        serde_json::json!({ "every": "month", "day": 1, "at": at })
    } else if has("weekday") || has("weekdays") {
        serde_json::json!({ "every": "week", "days": &DAYS[..5], "at": at })
    } else if !named.is_empty() {
        serde_json::json!({ "every": "week", "days": named, "at": at })
    } else {
        serde_json::json!({ "every": "week", "days": DAYS, "at": at })
    };
    (title, repeat)
}

/// The options a "help me choose" message lists: after a colon or "between", split at commas,
/// "or" and "and" (at most 12).
pub fn options_in(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let start = lower.find(':').map(|i| i + 1).or_else(|| lower.find(" between ").map(|i| i + " between ".len())).unwrap_or(lower.len());
    let list = text.get(start..).unwrap_or_default().trim().trim_end_matches(['?', '.', '!']);
    let mut options: Vec<String> = Vec::new();
    for part in list.split(',').flat_map(|p| p.split(" or ")).flat_map(|p| p.split(" and ")) {
        let part = part.trim();
        if !part.is_empty() && !options.iter().any(|o| o.eq_ignore_ascii_case(part)) && options.len() < 12 {
            options.push(part.to_owned());
        }
    }
    options
}

fn summarise_week(events: &[CalendarEvent], today: chrono::NaiveDate) -> String {
    if events.is_empty() {
        return "Your calendar is clear this week.".into();
    }
    let mut lines = vec![format!("You have {} events this week:", events.len())];
    let mut today_items = Vec::new();
    for event in events {
        let Some(start) = Local.timestamp_millis_opt(event.starts_at).earliest() else { continue };
        let line = format!("• {} {} — {}", start.format("%a %H:%M"), event.title, event.location);
        if start.date_naive() == today {
            today_items.push(event.title.as_str());
        }
        lines.push(line);
    }
    if today_items.is_empty() {
        lines.push("Nothing is scheduled for today.".into());
    } else {
        lines.push(format!("Today: {}.", today_items.join(", ")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_are_read_from_the_message() {
        assert_eq!(options_in("Help me choose: the train or the bus?"), ["the train", "the bus"]);
        assert_eq!(options_in("help me decide between pasta, risotto and soup"), ["pasta", "risotto", "soup"]);
        assert!(options_in("help me choose").is_empty());
        assert_eq!(route("I pick: the train"), Route::Picked);
        assert_eq!(route("Help me choose: tea or coffee"), Route::Choose);
        assert_eq!(route("Summarize this CSV"), Route::Finance);
        assert_eq!(route("Watch the sample page"), Route::Watch);
        assert_eq!(route("watch https://shop.example/kettle below $25"), Route::Watch);
    }

    #[test]
    fn reminders_read_the_plain_phrasings() {
        let (title, repeat) = reminder_of("Remind me every morning to check the garden.");
        assert_eq!(title, "Check the garden");
        assert_eq!(repeat["every"], "week");
        assert_eq!(repeat["days"].as_array().map(Vec::len), Some(7));
        assert_eq!(repeat["at"], "08:00");
        let (_, repeat) = reminder_of("remind me every weekday at 7:30pm to call mum");
        assert_eq!(repeat["days"].as_array().map(Vec::len), Some(5));
        assert_eq!(repeat["at"], "19:30");
        let (_, repeat) = reminder_of("remind me every 2 hours to stretch");
        assert_eq!(repeat, serde_json::json!({ "every": "interval", "minutes": 120 }));
        let (_, repeat) = reminder_of("remind me on fridays at 17 to file the week");
        assert_eq!(repeat, serde_json::json!({ "every": "week", "days": ["friday"], "at": "17:00" }));
        let (_, repeat) = reminder_of("remind me each month to pay the rent");
        assert_eq!(repeat["every"], "month");
        assert_eq!(route("Remind me every morning to check the garden"), Route::Remind);
    }

    #[test]
    fn routes_are_deterministic() {
        assert_eq!(route("hello"), Route::Greeting);
        assert_eq!(route("Hi there!"), Route::Greeting);
        assert_eq!(route("help"), Route::Greeting);
        assert_eq!(route("What's on my calendar?"), Route::Calendar);
        assert_eq!(route("plan my day"), Route::Calendar);
        assert_eq!(route("count to 50 slowly"), Route::SlowCount);
        assert_eq!(route("Book a table for two on Friday"), Route::Delegate);
        assert_eq!(route("this is a long message saying hello to everyone in the family group"), Route::Delegate);
        assert_eq!(route("whichever"), Route::Delegate);
        assert_eq!(route("Please complete the permission slip"), Route::Document);
        assert_eq!(route("fill in the school form"), Route::Document);
        assert_eq!(route("open https://example.org/prices please"), Route::Browse);
        assert_eq!(first_url("look at http://a.example/x?y=1."), Some("http://a.example/x?y=1"));
        assert_eq!(first_url("no address here"), None);
    }

    #[test]
    fn the_greeting_offers_only_what_this_build_does() {
        let lower = GREETING.to_lowercase();
        for built in [
            "mail",
            "calendar",
            "prepare an email",
            "calendar event",
            "permission slip",
            "pdf",
            "files",
            "tasks",
            "stop",
            "approval",
            "web page",
        ] {
            assert!(lower.contains(built), "the greeting should mention {built:?}: {GREETING}");
        }
        for missing in ["take control", "terminal", "computer", "command", "google", "schedule", "remember", "memory", "goal", "watch"] {
            assert!(!lower.contains(missing), "the greeting offers {missing:?}, which this build does not have: {GREETING}");
        }
        // Its own suggestions take the routes that do them.
        assert_eq!(route("plan my day"), Route::Calendar);
        assert_eq!(route("complete the permission slip"), Route::Document);
    }
}
