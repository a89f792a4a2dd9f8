// Loads the wasm page, as Hearth's ui/main.js does.
import init from './ui.js';
await init();
