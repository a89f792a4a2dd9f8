//! What the owner feels, measured inside the webview of the built app (release, under Xvfb,
//! through tauri-driver), with the scripted model server on loopback (real OpenAI Chat
//! streaming) as the model:
//!
//! - Send → the first assistant token in the DOM, and in a drawn frame;
//! - delivery at 1,000 events/s: each token's time from the model server handing it to the
//!   connection to the DOM showing it (so: loopback, the core's agent loop, Tauri IPC, the UI's
//!   decode and render), p50/p95 over 2,000 tokens;
//! - Stop → the "Stopped" notice in the DOM, and in a drawn frame;
//! - a 100,000-event thread opened in the chat (the window's start: thread list, history call,
//!   replay, render): from the chat's request to the drawn frame showing its rows (User Timing
//!   marks `hearth:history-requested` / `hearth:history-shown`), 5 page loads.
//!
//! Times on both sides are read from the wall clock (the page: `performance.timeOrigin +
//! performance.now()`); the page's timer resolution is printed beside the figures. Prints
//! figures; asserts nothing about time. `scripts/footprint.sh` runs it:
//!
//! `HEARTH_BENCH_APP=<hearth> xvfb-run -a cargo bench -p hearth-testkit --features webdriver,model-server --bench webview`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant, UNIX_EPOCH};

use hearth_core::store::Store;
use hearth_protocol::agui::Event;
use hearth_testkit::TestHome;
use hearth_testkit::model_server::{ModelServer, Reply, Script};
use hearth_testkit::webdriver::Session;
use serde_json::{Value, json};

const SENDS: usize = 10;
const STOPS: usize = 5;
/// Tokens of the paced reply: 2 s at 1,000 events/s.
const TOKENS: usize = 2_000;
/// Each token is its number and a space: the DOM's text length tells how many arrived.
const TOKEN_WIDTH: usize = 6;
const HISTORY_EVENTS: usize = 100_000;
const HISTORY_LOADS: usize = 5;

/// Helpers every page script below starts with.
const PAGE: &str = r#"
    const transcript = () => document.getElementById('transcript');
    const assistants = () => document.querySelectorAll('.msg-assistant');
    const lastAssistantText = () => { const all = assistants(); return all.length ? all[all.length - 1].textContent : ''; };
    const send = (text) => {
        const composer = document.getElementById('composer');
        composer.value = text;
        composer.dispatchEvent(new Event('input', { bubbles: true }));
        document.getElementById('send').click();
    };
    const afterFrame = (then) => requestAnimationFrame(() => requestAnimationFrame(then));
    const watch = (check) => {
        const observer = new MutationObserver(() => { if (check()) observer.disconnect(); });
        observer.observe(transcript(), { subtree: true, childList: true, characterData: true });
    };
"#;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let app = std::env::var("HEARTH_BENCH_APP").expect("set HEARTH_BENCH_APP to the built hearth binary");
    let app = std::fs::canonicalize(&app).unwrap().to_string_lossy().into_owned();
    println!("app: {app}");
    println!("load average before: {}", load_average());
    live_chat(&app).await;
    long_history(&app).await;
    println!("load average after: {}", load_average());
}

async fn live_chat(app: &str) {
    let mut script = Script::new();
    for _ in 0..=SENDS {
        script = script.turn(Reply::new().text(&["Sure", ", noted."]));
    }
    let tokens: Vec<String> = (0..TOKENS).map(|n| format!("{n:05} ")).collect();
    let token_refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    script = script.turn(Reply::new().text(&token_refs).paced(Duration::from_millis(1)));
    for _ in 0..STOPS {
        // Long enough never to finish before its Stop.
        let slow: Vec<&str> = vec!["word "; 3_000];
        script = script.turn(Reply::new().text(&slow).chunk_delay(Duration::from_millis(10)));
    }
    let server = ModelServer::start(script).await.unwrap();
    let home = TestHome::new().unwrap();
    let session = Session::start_app(app, &home).await;
    session.find("#composer").await;
    let model = json!({ "params": { "kind": "openai_chat", "baseUrl": server.base_url(), "model": "scripted-model" } });
    assert!(session.invoke("settings_model_set", &model.to_string()).await.starts_with("resolved:"));
    assert!(session.invoke("settings_mode_set", r#"{"params":{"mode":"model"}}"#).await.starts_with("resolved:"));
    let resolution = session
        .run_async(
            "const done = arguments[0]; const a = performance.now(); let b = a; while (b === a) b = performance.now(); done(b - a);",
            vec![],
        )
        .await
        .as_f64()
        .unwrap_or(f64::NAN);
    println!("the page's timer resolution: {resolution:.3} ms");

    // Send → first token. The first Send is untimed (it opens the thread).
    let first_token = format!(
        "{PAGE}
        const [text, done] = arguments;
        const before = assistants().length;
        const t0 = performance.now();
        let dom = null;
        watch(() => {{
            if (dom !== null || assistants().length <= before || lastAssistantText().length === 0) return false;
            dom = performance.now() - t0;
            afterFrame(() => done([dom, performance.now() - t0]));
            return true;
        }});
        send(text);"
    );
    let mut dom = Vec::new();
    let mut painted = Vec::new();
    for n in 0..=SENDS {
        let timed = session.run_async(&first_token, vec![json!(format!("Question {n}?"))]).await;
        wait_until_idle(&session).await;
        if n > 0 {
            dom.push(timed[0].as_f64().unwrap());
            painted.push(timed[1].as_f64().unwrap());
        }
    }
    shown_figure(
        ("Send → first token", &format!("{SENDS} sends")),
        "Send → first assistant token shown in the webview (scripted model on loopback), median",
        "none (Hearth's own overhead)",
        dom,
        painted,
    );

    // Delivery at 1,000 events/s.
    let delivery = format!(
        "{PAGE}
        const [text, expected, width, done] = arguments;
        const before = assistants().length;
        const seen = [];
        watch(() => {{
            if (assistants().length <= before) return false;
            const now = performance.timeOrigin + performance.now();
            const count = Math.floor(lastAssistantText().length / width);
            while (seen.length < count) seen.push(now);
            if (seen.length < expected) return false;
            done(seen);
            return true;
        }});
        send(text);"
    );
    let seen = session.run_async(&delivery, vec![json!("Count for me."), json!(TOKENS), json!(TOKEN_WIDTH)]).await;
    wait_until_idle(&session).await;
    let seen: Vec<f64> = seen.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let sent = server.sent();
    let mut latency = Vec::with_capacity(TOKENS);
    for (n, token) in tokens.iter().enumerate() {
        let quoted = format!("\"{token}\"");
        let (at, _) = sent.iter().find(|(_, event)| event.contains(&quoted)).unwrap_or_else(|| panic!("token {n} was never sent"));
        let sent_ms = at.duration_since(UNIX_EPOCH).unwrap().as_secs_f64() * 1e3;
        latency.push(seen[n] - sent_ms);
    }
    let span = (sent.last().unwrap().0.duration_since(sent[0].0).unwrap().as_secs_f64()).max(1e-9);
    println!("the model server sent {} events in {:.2} s ({:.0} events/s)", sent.len(), span, sent.len() as f64 / span);
    latency.sort_by(f64::total_cmp);
    let at = |q: f64| latency[((latency.len() - 1) as f64 * q) as usize];
    println!(
        "token sent → in the DOM over {TOKENS} tokens: min {:.2}, p50 {:.2}, p95 {:.2}, p99 {:.2}, max {:.2} ms",
        latency[0],
        at(0.5),
        at(0.95),
        at(0.99),
        latency[latency.len() - 1]
    );
    figure(
        "delivery at 1,000 events/s: model server → core → IPC → in the webview's DOM, p50 / p95",
        &format!("{:.2} / {:.2} ms", at(0.5), at(0.95)),
        "none",
        "no target (reported)",
    );

    // Stop → "Stopped".
    let stop = format!(
        "{PAGE}
        const [text, done] = arguments;
        const before = assistants().length;
        const cancelled = () => document.querySelectorAll('.run-cancelled').length;
        const notices = cancelled();
        let t0 = null, dom = null;
        watch(() => {{
            if (t0 === null) {{
                const stop = document.getElementById('stop');
                if (assistants().length <= before || lastAssistantText().length === 0 || !stop) return false;
                t0 = performance.now();
                stop.click();
                return false;
            }}
            if (dom !== null || cancelled() <= notices) return false;
            dom = performance.now() - t0;
            afterFrame(() => done([dom, performance.now() - t0]));
            return true;
        }});
        send(text);"
    );
    let (mut dom, mut painted) = (Vec::new(), Vec::new());
    for n in 0..STOPS {
        let timed = session.run_async(&stop, vec![json!(format!("Talk for a while ({n})."))]).await;
        wait_until_idle(&session).await;
        dom.push(timed[0].as_f64().unwrap());
        painted.push(timed[1].as_f64().unwrap());
    }
    shown_figure(
        ("Stop → \"Stopped\"", &format!("{STOPS} stops")),
        "Stop → \"Stopped\" shown in the webview, median",
        "none",
        dom,
        painted,
    );
    assert_eq!(server.turns_left(), 0, "every scripted turn was played");
    session.close().await;
}

/// The composer offers Send again: the run ended.
async fn wait_until_idle(session: &Session) {
    session.until_script("return !!document.getElementById('send')", "the run ends").await;
}

async fn long_history(app: &str) {
    // A real thread and run from the sample agent, then 100,000 events of earlier conversation
    // written into its log while the app is closed.
    let home = TestHome::new().unwrap();
    let session = Session::start_app(app, &home).await;
    session.send("hello").await;
    session.until_texts(".msg-assistant:not(.streaming)", "the sample agent answers", |t| t.len() == 1).await;
    session.close().await;
    let store = Store::open(&home.data_dir().join("hearth.db"), Duration::from_secs(5)).await.unwrap();
    let thread = store.list_threads().await.unwrap().remove(0);
    let events = store.thread_events(&thread.id).await.unwrap();
    let Some(Event::RunStarted(started)) = events.first() else { panic!("the thread starts with {:?}", events.first()) };
    let written = Instant::now();
    let mut count = events.len();
    let mut turn = 0;
    while count < HISTORY_EVENTS {
        for event in synthetic_turn(&thread.id, turn) {
            store.append_event(&thread.id, &started.run_id, &event).await.unwrap();
            count += 1;
        }
        turn += 1;
    }
    store.close().await;
    println!("wrote {count} events ({turn} turns) in {:.1} s", written.elapsed().as_secs_f64());
    let last_words = format!("Earlier question number {}", turn - 1);

    let session = Session::start_app(app, &home).await;
    let opened = "const [words] = arguments;
        const shown = performance.getEntriesByName('hearth:history-shown');
        const requested = performance.getEntriesByName('hearth:history-requested');
        const users = document.querySelectorAll('.msg-user');
        if (!shown.length || !requested.length || !users.length) return null;
        if (!users[users.length - 1].textContent.startsWith(words)) return 'the newest turn is not the one shown last';
        return [shown[0].startTime - requested[0].startTime, shown[0].startTime,
                document.querySelectorAll('.transcript > *').length, performance.timeOrigin];";
    let mut open = Vec::new();
    let mut previous_page = None;
    for load in 0..HISTORY_LOADS {
        if load > 0 {
            session.client.execute("location.reload(); return true;", vec![]).await.unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        let timed = loop {
            // A poll that meets the reload fails; the next one reads the new page.
            let value = session.client.execute(opened, vec![json!(last_words)]).await.unwrap_or(Value::Null);
            if let Some(problem) = value.as_str() {
                panic!("{problem}");
            }
            // The marks of the page before the reload do not count.
            if value.is_array() && value[3].as_f64() != previous_page {
                break value;
            }
            assert!(Instant::now() < deadline, "the {HISTORY_EVENTS}-event thread did not show within 120 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        previous_page = timed[3].as_f64();
        let entry = (timed[0].as_f64().unwrap(), timed[1].as_f64().unwrap());
        println!(
            "load {load}: history requested → rows drawn {:.0} ms; page load → rows drawn {:.0} ms; {} rows in the transcript",
            entry.0, entry.1, timed[2]
        );
        open.push(entry);
    }
    let mut requested_to_shown: Vec<f64> = open.iter().map(|o| o.0).collect();
    let mut load_to_shown: Vec<f64> = open.iter().map(|o| o.1).collect();
    figure(
        "open a 100,000-event thread in the chat: history requested → rows drawn (page load → rows drawn), median of 5",
        &format!("{:.0} ms ({:.0} ms)", median(&mut requested_to_shown), median(&mut load_to_shown)),
        "none",
        "≤ 1 s",
    );
    session.close().await;
}

/// One earlier turn as the agent loop logs it: RUN_STARTED with the owner's message, a reply
/// of 8 deltas, RUN_FINISHED (12 events, as in the core's send_latency bench).
fn synthetic_turn(thread_id: &str, turn: usize) -> Vec<Event> {
    hearth_testkit::history::turn(thread_id, turn).into_iter().map(|e| serde_json::from_value(e).unwrap()).collect()
}

/// Prints the timings of something shown — in the DOM, and in a drawn frame — and their
/// medians as one figure. `subject` is (what was timed, how many times).
fn shown_figure(subject: (&str, &str), what: &str, reference: &str, mut dom: Vec<f64>, mut painted: Vec<f64>) {
    let (timed, runs) = subject;
    println!("{timed} in the DOM, {runs}: {}", list(&dom));
    println!("{timed} in a drawn frame, {runs}: {}", list(&painted));
    let hearth = format!("{:.1} ms in the DOM, {:.1} ms drawn", median(&mut dom), median(&mut painted));
    figure(what, &hearth, reference, "no target (reported)");
}

fn figure(what: &str, hearth: &str, reference: &str, target: &str) {
    println!("FIGURE | {what} | {hearth} | {reference} | {target}");
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn list(values: &[f64]) -> String {
    values.iter().map(|v| format!("{v:.1}")).collect::<Vec<_>>().join(", ") + " ms"
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
