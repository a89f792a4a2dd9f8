//! Replays the fuzz corpora and every crash reproducer (src-tauri/fuzz/{corpus,reproducers}/
//! <target>/) through the same entry points the fuzz targets call, so what fuzzing found stays
//! fixed in the normal test suite. The oracle is the targets' own: no panic, no hang (each
//! call is bounded by its budget), for inputs that once broke something or reach deep paths.

use std::path::{Path, PathBuf};

use hearth_protocol::ToolName;
use hearth_protocol::agui::sse::SseDecoder;

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut out = Vec::new();
    for kind in ["corpus", "reproducers"] {
        let Ok(entries) = std::fs::read_dir(root.join(kind).join(target)) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn pdf_reader_inputs_replay() {
    let inputs = inputs("pdf_reader");
    assert!(inputs.len() >= 8, "the seed corpus is there: {}", inputs.len());
    for (path, bytes) in &inputs {
        let replayed = std::panic::catch_unwind(|| hearth_core::pdf::fuzz_read_and_write(bytes));
        assert!(replayed.is_ok(), "{} panicked", path.display());
    }
}

#[test]
fn agui_sse_inputs_replay() {
    let inputs = inputs("agui_sse");
    assert!(!inputs.is_empty());
    for (path, data) in &inputs {
        let Some((&cut, rest)) = data.split_first() else { continue };
        let cut = usize::from(cut).min(rest.len());
        let replayed = std::panic::catch_unwind(|| {
            let mut decoder = SseDecoder::with_max_frame_bytes(64 * 1024);
            let mut events = decoder.feed(&rest[..cut]);
            events.extend(decoder.feed(&rest[cut..]));
            let _ = decoder.finish();
            events.len()
        });
        assert!(replayed.is_ok(), "{} panicked", path.display());
    }
}

#[test]
fn provider_stream_inputs_replay() {
    let inputs = inputs("provider_stream");
    assert!(inputs.len() >= 3);
    for (path, data) in &inputs {
        let [kind, cut, rest @ ..] = data.as_slice() else { continue };
        let cut = usize::from(*cut);
        let replayed = std::panic::catch_unwind(|| hearth_core::providers::fuzz_stream(*kind % 3, &[cut, cut * 3], rest));
        assert!(replayed.is_ok(), "{} panicked", path.display());
    }
}

#[test]
fn tool_argument_inputs_replay() {
    let inputs = inputs("tool_arguments");
    assert!(!inputs.is_empty());
    let mut accepted = 0;
    for (path, data) in &inputs {
        let Some((&pick, rest)) = data.split_first() else { continue };
        let Ok(text) = std::str::from_utf8(rest) else { continue };
        let tool = ToolName::ALL[usize::from(pick) % ToolName::ALL.len()];
        let replayed = std::panic::catch_unwind(|| hearth_core::tools::fuzz_parse_arguments(tool, text));
        assert!(replayed.is_ok(), "{} panicked", path.display());
        accepted += usize::from(replayed.unwrap_or(false));
    }
    // The seeds include arguments that fit (the parser is really reached, not refused at the door).
    assert!(accepted > 0);
}
