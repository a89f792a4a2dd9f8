//! The PDF reader and writer (lopdf object layer, budget, page and field trees, form writer,
//! active-content removal) on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    hearth_core::pdf::fuzz_read_and_write(data);
});
