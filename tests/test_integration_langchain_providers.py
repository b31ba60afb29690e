"""The LangChain middleware with the provider packages the ``langchain`` extra installs:
``create_agent`` over ``ChatOpenAI`` and ``ChatAnthropic`` (the real SDK clients), against
scripted models on 127.0.0.1 that speak each API, in a window the run overflows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_openai")
pytest.importorskip("langchain_anthropic")

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from contextwarden import ContextPolicy
from contextwarden.integrations.langchain import ContextWardenMiddleware
from contextwarden.log import CompactionBoundary
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.anthropic import message_from_wire
from contextwarden.wire.openai_in import messages_from_openai
from tests.servers import Captured, Reply, anthropic_message, openai_completion, serving

pytestmark = pytest.mark.usefixtures("close_event_loop")
WINDOW = 8_000
READS = 10


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}: " + " ".join(f"line {i} of {path}" for i in range(400))


class Scripted:
    """Reads ``READS`` files one call at a time, then answers; checks every request is valid
    and inside the window."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.sizes: list[int] = []
        self.problems: list[str] = []

    def __call__(self, request: Captured) -> Reply:
        body = request.body
        if self.api == "openai":
            system, messages = messages_from_openai(body["messages"])
        else:
            system = body.get("system")
            messages = [message_from_wire(m) for m in body["messages"]]
        self.problems += [str(v) for v in validate(messages)]
        counter = HeuristicCounter()
        size = sum(map(counter.count_message, messages)) + counter.count_text(str(system or ""))
        self.sizes.append(size)
        n = len(self.sizes) - 1
        if self.api == "openai":
            reply = openai_completion("done") if n >= READS else self._openai_call(n)
            reply["usage"].update(prompt_tokens=size, total_tokens=size + 20)
        else:
            reply = anthropic_message("done") if n >= READS else self._anthropic_call(n)
            reply["usage"].update(input_tokens=size)
        return Reply(reply)

    @staticmethod
    def _openai_call(n: int) -> dict[str, Any]:
        reply = openai_completion(tool_call={"name": "read_file", "arguments": {"path": f"f{n}"}})
        reply["choices"][0]["message"]["tool_calls"][0]["id"] = f"call_{n}"
        return reply

    @staticmethod
    def _anthropic_call(n: int) -> dict[str, Any]:
        use = {"name": "read_file", "input": {"path": f"f{n}"}}
        reply = anthropic_message(stop_reason="tool_use", tool_use=use)
        reply["content"][0]["id"] = f"toolu_{n}"
        return reply


def chat_model(api: str, url: str) -> Any:
    if api == "openai":
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model="gpt-4.1", base_url=f"{url}/v1", api_key="scripted")  # type: ignore[arg-type]
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(model="claude-sonnet-4-5", base_url=url, api_key="scripted")  # type: ignore[arg-type, call-arg]


@pytest.mark.parametrize(("api", "path"), [("openai", "/v1/chat/completions"),
                                           ("anthropic", "/v1/messages")])  # fmt: skip
def test_create_agent_over_the_provider_package_stays_in_the_window(
    api: str, path: str, tmp_path: Path
) -> None:
    scripted = Scripted(api)
    middleware = ContextWardenMiddleware(
        store=str(tmp_path / "sessions.db"), policy=ContextPolicy(context_window=WINDOW)
    )
    with serving(path, scripted) as server:
        agent = create_agent(
            chat_model(api, server.url), tools=[read_file], middleware=[middleware]
        )
        result = agent.invoke(
            {"messages": [HumanMessage("read the ten files")]}, {"recursion_limit": 100}
        )
    assert result["messages"][-1].content == "done"
    assert len(scripted.sizes) == READS + 1 and scripted.problems == []
    limit = ContextPolicy(context_window=WINDOW).effective_window
    assert max(scripted.sizes) <= limit
    state = json.dumps([str(m.content) for m in result["messages"]])
    assert HeuristicCounter().count_text(state) > WINDOW, "unmanaged, the run would not fit"
    sessions = middleware.mirror.store.list_sessions()
    history = middleware.mirror.history(sessions[0])
    assert any(isinstance(e, CompactionBoundary) for e in history.log)
