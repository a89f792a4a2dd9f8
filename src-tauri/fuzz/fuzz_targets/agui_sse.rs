//! The AG-UI SSE decoder (framing, JSON, event schema and order checks), fed in two pushes cut
//! where the first byte says.
#![no_main]

use hearth_protocol::agui::sse::SseDecoder;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else { return };
    let cut = usize::from(cut).min(rest.len());
    let mut decoder = SseDecoder::with_max_frame_bytes(64 * 1024);
    let _ = decoder.feed(&rest[..cut]);
    let _ = decoder.feed(&rest[cut..]);
    let _ = decoder.finish();
});
