// Drives Hearth's AG-UI endpoint with the official @ag-ui/client HttpAgent, which verifies
// every event it receives. Prints one JSON line: what arrived and any verification error.
//
//   node run.mjs <url> <token> <message> [stop-after=<n> | client-tool=<name>]
//
// With client-tool=<name> the client declares that tool; when the agent leaves a call of it
// pending, the client answers it ("blue") and runs again, as an AG-UI 1.0 client does.
import { HttpAgent } from "@ag-ui/client";

const [url, token, text, option = ""] = process.argv.slice(2);
const stopAfter = option.startsWith("stop-after=") ? Number(option.slice("stop-after=".length)) : 0;
const clientTool = option.startsWith("client-tool=") ? option.slice("client-tool=".length) : "";
const tools = clientTool
  ? [{ name: clientTool, description: "Ask the person at the screen to pick a colour.", parameters: { type: "object", properties: {} } }]
  : [];

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
let continued = null;
try {
  await agent.runAgent(
    { runId: `run-${process.pid}-${Date.now()}`, tools, context: [] },
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
  const pending = clientTool
    ? agent.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls ?? [] : [])).filter((c) => c.function.name === clientTool)
    : [];
  if (pending.length > 0) {
    for (const call of pending) {
      agent.messages.push({ id: `tool-${call.id}`, role: "tool", toolCallId: call.id, content: "blue" });
    }
    const second = [];
    await agent.runAgent({ runId: `run2-${process.pid}-${Date.now()}`, tools, context: [] }, {
      onEvent({ event }) {
        second.push(event.type);
      },
    });
    continued = second;
  }
} catch (err) {
  failure = String(err && err.message ? err.message : err);
}
console.log(JSON.stringify({ types, toolCalls, errorEvent, failure, stopped, continued, messages: agent.messages.length }));
