// Drives Hearth's AG-UI endpoint with the official @ag-ui/client HttpAgent, which verifies
// every event it receives. Prints one JSON line: what arrived and any verification error.
//
//   node run.mjs <url> <token> <message> [stop-after=<n>]
import { HttpAgent } from "@ag-ui/client";

const [url, token, text, option = ""] = process.argv.slice(2);
const stopAfter = option.startsWith("stop-after=") ? Number(option.slice("stop-after=".length)) : 0;

const agent = new HttpAgent({
  url,
  headers: { Authorization: `Bearer ${token}` },
  threadId: `conformance-${process.pid}-${Date.now()}`,
  initialMessages: [{ id: "user-1", role: "user", content: text }],
});

const types = [];
const toolCalls = [];
let errorEvent = null;
let failure = null;
let stopped = false;
try {
  await agent.runAgent(
    { runId: `run-${process.pid}-${Date.now()}`, tools: [], context: [] },
    {
      onEvent({ event }) {
        types.push(event.type);
        if (stopAfter && types.length === stopAfter && !stopped) {
          stopped = true;
          agent.abortRun();
        }
      },
      onToolCallEndEvent({ toolCallName }) {
        toolCalls.push(toolCallName);
      },
      onRunErrorEvent({ event }) {
        errorEvent = event.message;
      },
    },
  );
} catch (err) {
  failure = String(err && err.message ? err.message : err);
}
console.log(JSON.stringify({ types, toolCalls, errorEvent, failure, stopped, messages: agent.messages.length }));
