//! Every tool's argument parsing, as dispatch does it: the first byte picks the tool, the rest
//! is the model's argument text.
#![no_main]

use hearth_protocol::ToolName;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let tool = ToolName::ALL[usize::from(pick) % ToolName::ALL.len()];
    hearth_core::tools::fuzz_parse_arguments(tool, text);
});
