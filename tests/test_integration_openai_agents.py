"""The OpenAI Agents SDK session: the real SDK's ``Runner`` with a real ``AsyncOpenAI`` client
against a scripted Responses server on 127.0.0.1, over a window the task overflows; the session
protocol itself; state across a restart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from contextwarden import ContextPolicy
from contextwarden.integrations.openai_agents import ContextWardenSession
from contextwarden.log import CompactionBoundary
from contextwarden.rules import validate
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.responses import messages_from_responses
from tests.servers import Captured, Reply, serving

pytestmark = pytest.mark.usefixtures("close_event_loop")
WINDOW = 8_000
set_tracing_disabled(True)  # the SDK would otherwise export traces to the network


def response_body(output: list[dict[str, Any]], step: int) -> dict[str, Any]:
    """A Responses API ``response`` object as the API returns it."""
    return {
        "id": f"resp_{step:04d}",
        "object": "response",
        "created_at": 1741476542 + step,
        "status": "completed",
        "model": "gpt-4.1-2025-04-14",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "usage": {
            "input_tokens": 300 + 900 * step,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 320 + 900 * step,
        },
    }


class ScriptedResponses:
    """A scripted model behind the Responses endpoint: each run reads ``reads`` files, one call
    per request (with a reasoning item, as reasoning models send), then answers."""

    def __init__(self, reads: int) -> None:
        self.reads, self.step, self.run_step = reads, 0, 0

    def __call__(self, request: Captured) -> Reply:
        self.step += 1
        n = self.run_step
        self.run_step += 1
        if n < self.reads:
            output = [
                {
                    "type": "reasoning",
                    "id": f"rs_{self.step}",
                    "summary": [],
                    "encrypted_content": f"gAAAA{self.step}",
                },
                {
                    "type": "function_call",
                    "id": f"fc_{self.step}",
                    "call_id": f"call_{self.step}",
                    "name": "read_file",
                    "arguments": json.dumps({"path": f"f{self.step}.txt"}),
                    "status": "completed",
                },
            ]
        else:
            self.run_step = 0
            output = [
                {
                    "type": "message",
                    "id": f"msg_{self.step}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "all read", "annotations": []}],
                },
            ]
        return Reply(response_body(output, self.step))


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}: " + " ".join(f"line {i} of {path}" for i in range(500))


def run(url: str, prompt: str, session: ContextWardenSession) -> Any:
    """One ``Runner.run`` of a real Agent whose model is a real AsyncOpenAI client at ``url``,
    with the session and its per-call filter."""

    async def go() -> Any:
        async with AsyncOpenAI(base_url=f"{url}/v1", api_key="sk-test", max_retries=0) as client:
            model = OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
            agent = Agent(name="reader", instructions="Read files.", tools=[read_file], model=model)
            config = RunConfig(call_model_input_filter=session.input_filter)
            return await Runner.run(agent, prompt, session=session, run_config=config, max_turns=30)

    return asyncio.run(go())


def check_requests(requests: list[Captured]) -> None:
    counter = HeuristicCounter()
    limit = ContextPolicy(context_window=WINDOW).effective_window
    for request in requests:
        _, messages = messages_from_responses(request.body["input"])
        assert validate(messages) == []
        total = sum(map(counter.count_message, messages))
        total += counter.count_text(request.body.get("instructions") or "")
        assert total <= limit


def session_for(db: Path) -> ContextWardenSession:
    return ContextWardenSession(
        "user-42", store=str(db), policy=ContextPolicy(context_window=WINDOW)
    )


def test_agent_run_is_managed_within_and_across_runs_and_restarts(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    script = ScriptedResponses(reads=12)
    with serving("/v1/responses", script) as api:
        session = session_for(db)
        result = run(api.url, "read twelve files", session)
        assert result.final_output == "all read"
        assert len(api.requests) == 13
        check_requests(api.requests)
        stored = session.history
        assert len([m for m in stored.messages if m.tool_uses]) == 12, "every call was recorded"

        # A new process: the same session from the store; the next run starts managed.
        again = session_for(db)
        items = asyncio.run(again.get_items())
        assert any(isinstance(e, CompactionBoundary) for e in again.history.log)
        assert any(i.get("encrypted_content") for i in items if i.get("type") == "reasoning")
        script.reads = 2
        before = len(api.requests)
        run(api.url, "two more", again)
        check_requests(api.requests[before:])
        first = api.requests[before].body["input"]
        assert any("read twelve files" in json.dumps(item) for item in first)
    store = SqliteStore(db)
    assert store.list_sessions() == ["user-42"]
    store.close()


def test_session_protocol_round_trips_items_and_never_deletes(tmp_path: Path) -> None:
    session = session_for(tmp_path / "s.db")
    items: list[Any] = [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAx"},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": "{}",
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}],
        },
    ]
    asyncio.run(session.add_items(items[:1]))
    asyncio.run(session.add_items(items[1:]))
    assert asyncio.run(session.get_items()) == items
    assert asyncio.run(session.get_items(limit=2)) == items[-2:]
    assert asyncio.run(session.pop_item()) == items[-1]
    assert asyncio.run(session.get_items()) == items[:-1]
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == []
    assert asyncio.run(session.pop_item()) is None
    # Nothing was deleted: the store can bring the cleared context back.
    session.store.undo_compaction("user-42")
    assert asyncio.run(session_for(tmp_path / "s.db").get_items()) == items[:-1]
