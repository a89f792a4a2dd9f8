// Drives Hearth's AG-UI endpoint with the official @ag-ui/client HttpAgent, which verifies
// every event it receives. Prints one JSON line: what arrived and any verification error.
//
//   node run.mjs <url> <token> <message> [stop-after=<n> | client-tool=<name> | await-stop]
//
// With stop-after=<n> the client aborts its request after the n-th event (it goes away).
// With await-stop the client prints {"awaitingStop": <runId>, "threadId": ...} as a line of
// its own when the first TEXT_MESSAGE_CONTENT arrives, so the caller can stop that run in
// Hearth, and then keeps consuming — every event through the client's verifier — until the
// stream ends; the report says how the client saw the run end (`runOutcome`, `terminal`).
// With client-tool=<name> the client declares that tool; when the agent leaves a call of it
// pending, the client answers it ("blue") and runs again, as an AG-UI 1.0 client does.
import { HttpAgent } from "@ag-ui/client";

const [url, token, text, option = ""] = process.argv.slice(2);
const stopAfter = option.startsWith("stop-after=") ? Number(option.slice("stop-after=".length)) : 0;
const clientTool = option.startsWith("client-tool=") ? option.slice("client-tool=".length) : "";
const awaitStop = option === "await-stop";
const tools = clientTool
  ? [{ name: clientTool, description: "Ask the person at the screen to pick a colour.", parameters: { type: "object", properties: {} } }]
  : [];

const threadId = `conformance-${process.pid}-${Date.now()}`;
const runId = `run-${process.pid}-${Date.now()}`;
const agent = new HttpAgent({
  url,
  headers: { Authorization: `Bearer ${token}` },
  threadId,
  initialMessages: [{ id: "user-1", role: "user", content: text }],
});

const types = [];
const toolCalls = [];
let errorEvent = null;
let failure = null;
let stopped = false;
let continued = null;
let askedToStop = false;
let terminal = null;
let runOutcome = null;
try {
  await agent.runAgent(
    { runId, tools, context: [] },
    {
      onEvent({ event }) {
        types.push(event.type);
        if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") {
          terminal = event;
        }
        if (stopAfter && types.length === stopAfter && !stopped) {
          stopped = true;
          agent.abortRun();
        }
        if (awaitStop && event.type === "TEXT_MESSAGE_CONTENT" && !askedToStop) {
          askedToStop = true;
          console.log(JSON.stringify({ awaitingStop: runId, threadId }));
        }
      },
      onRunFinishedEvent({ outcome }) {
        runOutcome = outcome;
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
console.log(
  JSON.stringify({ types, toolCalls, errorEvent, failure, stopped, continued, askedToStop, terminal, runOutcome, messages: agent.messages.length }),
);
