// Loads the wasm UI; everything else is Rust (ui/src).
import init from './ui.js';
await init();
