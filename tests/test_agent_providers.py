"""The chat agent's Anthropic provider through the real ``anthropic`` SDK, streaming from a
scripted Messages server on 127.0.0.1: its requests carry prompt-cache breakpoints where they pay
(tools, system, the previous request's end, the last message), never more than four."""

from __future__ import annotations

from typing import Any

from contextwarden.agent.providers import AnthropicProvider
from contextwarden.history import ConversationHistory
from contextwarden.wire.anthropic_cache import count_markers
from tests.proxy_harness import text, upstream

TOOL = {"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}}
EPHEMERAL = {"type": "ephemeral"}


def marked(message: dict[str, Any]) -> bool:
    return any("cache_control" in block for block in message["content"])


def test_anthropic_requests_carry_cache_breakpoints_where_they_pay() -> None:
    history = ConversationHistory(system="You are a coding agent.", tools=[TOOL])
    streamed: list[str] = []
    with upstream(lambda path, body: text(f"answer {len(body['messages'])}")) as api:
        provider = AnthropicProvider("scripted-1", base_url=api.url)
        try:
            for prompt in ("Read the README.", "Now the tests.", "And the docs."):
                history.add_user_message(prompt)
                history.add_assistant_message(provider.complete(history, streamed.append))
        finally:
            provider.client.close()
    assert streamed == ["answer 1", "answer 3", "answer 5"]
    bodies = api.messages_requests()
    for body in bodies:
        assert body["system"][-1]["cache_control"] == EPHEMERAL
        assert body["tools"][-1]["cache_control"] == EPHEMERAL
        assert marked(body["messages"][-1])
        assert count_markers(body) <= 4
    # the previous request's last message stays marked, so its cached prefix is read
    last = bodies[-1]["messages"]
    assert [i for i, m in enumerate(last) if marked(m)] == [2, 4]
