// The reference for the agui_decode bench: @ag-ui/client 1.0.0's own pipeline on the same
// bytes (src-tauri/protocol/benches/data/agui-100k.sse) — transformHttpEventStream (SSE
// framing and JSON), enforceEvents (every event checked against its schema) and
// verifyEvents (the order rules), as HttpAgent.runAgent chains them, fed in the same 64 KiB
// chunks. 1 warm-up pass, then ROUNDS timed ones; prints the median in the
// words the Rust bench uses. Run by scripts/bench.sh.
import { readFileSync } from "node:fs";
import { Observable } from "rxjs";
import { enforceEvents, transformHttpEventStream, verifyEvents } from "@ag-ui/client";

// @ag-ui/client declares HttpEventType in its types but does not export the enum at run time.
const HttpEventType = { HEADERS: "headers", DATA: "data" };

const ROUNDS = Number(process.env.HEARTH_AGUI_ROUNDS ?? 5);
const CHUNK = 64 * 1024;
const data = readFileSync(new URL("../../src-tauri/protocol/benches/data/agui-100k.sse", import.meta.url));

function pass() {
  return new Promise((resolve, reject) => {
    // Chunks arrive one per macrotask, as from a socket: the client's SSE stage delivers
    // events asynchronously, and a source that completes synchronously loses them.
    const source = new Observable((sub) => {
      sub.next({ type: HttpEventType.HEADERS, status: 200, headers: new Headers({ "content-type": "text/event-stream" }) });
      let at = 0;
      const next = () => {
        if (at >= data.length) return sub.complete();
        sub.next({ type: HttpEventType.DATA, data: data.subarray(at, Math.min(at + CHUNK, data.length)) });
        at += CHUNK;
        setImmediate(next);
      };
      setImmediate(next);
    });
    let events = 0;
    const started = process.hrtime.bigint();
    transformHttpEventStream(source).pipe(enforceEvents(), verifyEvents()).subscribe({
      next: () => { events += 1; },
      error: reject,
      complete: () => resolve({ events, seconds: Number(process.hrtime.bigint() - started) / 1e9 }),
    });
  });
}

const warm = await pass();
if (warm.events !== 100000) throw new Error(`expected 100000 events, decoded ${warm.events}`);
const rates = [];
for (let i = 0; i < ROUNDS; i++) {
  const { events, seconds } = await pass();
  rates.push(events / seconds);
}
rates.sort((a, b) => a - b);
const median = rates[Math.floor(ROUNDS / 2)];
console.log(
  `@ag-ui/client 1.0.0 transformHttpEventStream + enforceEvents + verifyEvents, ${ROUNDS} passes: median ${(median / 1e6).toFixed(3)} M events/s, ` +
    `min ${(rates[0] / 1e6).toFixed(3)}, max ${(rates[ROUNDS - 1] / 1e6).toFixed(3)}`,
);
