"""A scripted AG-UI 1.0 agent for Hearth's harness-mode tests.

Built on the official `ag-ui-protocol` Python package (its event classes, its
`EventEncoder`, its `RunAgentInput` model), so Hearth's client is tested against
code Hearth did not write. The run is chosen by the newest user message:

    hello     plain text
    think     a reasoning span, then text
    search    adds `searches` to the state and calls Hearth's search_mail; after the result
              comes back, says what it found
    email     calls Hearth's prepare_email; after the result comes back, says it awaits review
    frontend  calls a tool Hearth did not declare (show_map) and finishes
    loop      calls search_mail again after every result, forever
    invalid   TOOL_CALL_ARGS for a tool call it never started
    garbage   a frame that is not JSON
    deny      HTTP 401 (its body echoes the presented token, which Hearth must not show)
    crash     HTTP 500
    plain     HTTP 200 with a JSON body instead of an event stream
    early     closes the stream mid-message, without RUN_FINISHED
    slow      one text message that never ends (for Stop); notes when the client goes away

Usage: python server.py PORT   (PORT 0 picks a free port)
Prints "READY <port>" once it is listening. GET /requests returns every POSTed body with
whether it validated as a 1.0 RunAgentInput and the Authorization header; GET
/disconnects?wait=SECONDS returns the runs whose client went away mid-stream, waiting up to
SECONDS for the first one.
"""

import asyncio
import json
import socket
import sys
import uuid

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError

from ag_ui.core import (
    EventType,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

app = FastAPI()
encoder = EventEncoder()
requests_seen: list = []
disconnects: list = []
disconnected = asyncio.Event()


def last_user_text(messages) -> str:
    for message in reversed(messages):
        if message.role == "user":
            content = message.content
            return content if isinstance(content, str) else " ".join(getattr(p, "text", "") for p in content)
    return ""


def tool_results(messages) -> list:
    return [m for m in messages if m.role == "tool"]


def text(message_id: str, *parts: str) -> list:
    events = [TextMessageStartEvent(message_id=message_id, role="assistant")]
    events += [TextMessageContentEvent(message_id=message_id, delta=p) for p in parts]
    events.append(TextMessageEndEvent(message_id=message_id))
    return events


def tool_call(call_id: str, name: str, args: dict, parent: str) -> list:
    encoded = json.dumps(args)
    half = len(encoded) // 2
    return [
        ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name, parent_message_id=parent),
        ToolCallArgsEvent(tool_call_id=call_id, delta=encoded[:half]),
        ToolCallArgsEvent(tool_call_id=call_id, delta=encoded[half:]),
        ToolCallEndEvent(tool_call_id=call_id),
    ]


def script(run: RunAgentInput) -> list:
    """The events between RUN_STARTED and RUN_FINISHED (or raw frames, as str)."""
    said = last_user_text(run.messages).lower()
    results = tool_results(run.messages)
    if "think" in said:
        return [
            ReasoningStartEvent(message_id="r1"),
            ReasoningMessageStartEvent(message_id="r1", role="reasoning"),
            ReasoningMessageContentEvent(message_id="r1", delta="The owner wants "),
            ReasoningMessageContentEvent(message_id="r1", delta="a short answer."),
            ReasoningMessageEndEvent(message_id="r1"),
            ReasoningEndEvent(message_id="r1"),
        ] + text("m1", "Short ", "answer.")
    if "search" in said or "loop" in said:
        if results and "loop" not in said:
            return text("m2", "I found: ", str(results[-1].content)[:200])
        call = f"call-{len(results) + 1}"
        count = StateDeltaEvent(delta=[{"op": "add", "path": "/searches", "value": len(results) + 1}])
        return [count] + text("m1", "Let me look.") + tool_call(call, "search_mail", {"query": "permission form"}, "m1")
    if "email" in said:
        if results:
            return text("m2", "The draft is waiting for your review.")
        args = {
            "to": ["Ms. Alvarez <alvarez@riverside-school.example>"],
            "subject": "Re: Community visit",
            "body": "Hello,\n\nThe form is attached.",
        }
        return tool_call("call-1", "prepare_email", args, "m1")
    if "frontend" in said:
        return tool_call("call-1", "show_map", {"place": "Riverside School"}, "m1")
    if "invalid" in said:
        return [ToolCallArgsEvent(tool_call_id="never-started", delta="{}")]
    if "garbage" in said:
        return ["data: this is not json\n\n"]
    if "early" in said:
        return [TextMessageStartEvent(message_id="m1", role="assistant")]
    return text("m1", "Hello ", "from ", "the harness.")


@app.post("/agent")
async def agent(request: Request):
    body = await request.json()
    record = {"body": body, "authorization": request.headers.get("authorization"), "valid": True, "error": None}
    requests_seen.append(record)
    try:
        run = RunAgentInput.model_validate(body)
    except ValidationError as err:
        record["valid"] = False
        record["error"] = str(err)
        return JSONResponse({"error": str(err)}, status_code=422)
    said = last_user_text(run.messages).lower()
    if "deny" in said:
        presented = request.headers.get("authorization", "")
        return Response(f"bad credentials: {presented}", status_code=401)
    if "crash" in said:
        return Response("internal error", status_code=500)
    if "plain" in said:
        return JSONResponse({"messages": ["not a stream"]})

    async def stream():
        yield encoder.encode(RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id))
        if "slow" in said:
            yield encoder.encode(TextMessageStartEvent(message_id="m1", role="assistant"))
            try:
                n = 0
                while True:
                    n += 1
                    yield encoder.encode(TextMessageContentEvent(message_id="m1", delta=f"{n} "))
                    await asyncio.sleep(0.02)  # pacing a never-ending reply, not synchronisation
            finally:
                disconnects.append(run.run_id)
                disconnected.set()
        for event in script(run):
            yield event if isinstance(event, str) else encoder.encode(event)
        if "early" in said:
            return
        yield encoder.encode(RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id))

    return StreamingResponse(stream(), media_type=encoder.get_content_type())


@app.get("/requests")
async def list_requests():
    return requests_seen


@app.get("/disconnects")
async def list_disconnects(wait: float = 0):
    if wait > 0:
        try:
            await asyncio.wait_for(disconnected.wait(), timeout=wait)
        except asyncio.TimeoutError:
            pass
    return disconnects


async def main(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"READY {sock.getsockname()[1]}", flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: server.py PORT")
    asyncio.run(main(int(sys.argv[1])))
