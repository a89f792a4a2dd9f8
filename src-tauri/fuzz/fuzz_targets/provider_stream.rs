//! The model providers' stream decoding (SSE framing, then each wire format's decoder): the
//! first byte picks the format, the second where to cut the pushes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [kind, cut, rest @ ..] = data else { return };
    let cut = usize::from(*cut);
    hearth_core::providers::fuzz_stream(*kind % 3, &[cut, cut * 3], rest);
});
