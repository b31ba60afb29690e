"""``to_anthropic(cache=True)``: breakpoints where they pay, never more than 4, through the SDK."""

from __future__ import annotations

from typing import Any

import anthropic
from servers import ANTHROPIC_PATH, Reply, anthropic_message, serving

from contextwarden.history import ConversationHistory
from contextwarden.model import Message, ThinkingBlock

TOOLS = [
    {"name": "Read", "description": "read a file", "input_schema": {"type": "object"}},
    {"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}},
]


def _history(turns: int = 3) -> ConversationHistory:
    history = ConversationHistory("You are a careful agent.", TOOLS)
    history.add_user_message("look at the repo")
    for i in range(turns):
        history.add_assistant_message(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"path": "a"}}
                ],
            }
        )
        history.add_tool_results(
            [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"file {i}"}]
        )
    return history


def _marked(kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
    """Where the request carries cache_control: ("tools", i), ("system", i), (message, block)."""
    found: list[tuple[str, Any]] = []
    found += [("tools", i) for i, t in enumerate(kwargs.get("tools", [])) if "cache_control" in t]
    system = kwargs.get("system")
    if isinstance(system, list):
        found += [("system", i) for i, b in enumerate(system) if "cache_control" in b]
    for m, message in enumerate(kwargs["messages"]):
        found += [(m, b) for b, blk in enumerate(message["content"]) if "cache_control" in blk]
    return found


def test_breakpoints_on_tools_system_previous_request_and_last_message() -> None:
    history = _history()
    kwargs = history.to_anthropic(cache=True)
    last = len(history) - 1
    assert _marked(kwargs) == [("tools", 1), ("system", 0), (last - 2, 0), (last, 0)]
    assert kwargs["system"][0] == {
        "type": "text",
        "text": "You are a careful agent.",
        "cache_control": {"type": "ephemeral"},
    }
    assert "cache_control" not in str(history.to_anthropic())  # off by default
    assert history.to_anthropic(cache=True) == kwargs  # byte-stable for the same view
    hour = history.to_anthropic(cache=True, cache_ttl="1h")
    assert hour["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


def test_markers_already_present_count_toward_the_limit_of_four() -> None:
    history = ConversationHistory(
        [
            {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "c", "cache_control": {"type": "ephemeral"}},
        ],
        TOOLS,
    )
    history.add_user_message("hi")
    kwargs = history.to_anthropic(cache=True)
    assert len(_marked(kwargs)) == 4
    assert _marked(kwargs)[-1] == (0, 0)  # the one left goes to the last message


def test_thinking_blocks_are_never_marked() -> None:
    history = ConversationHistory()
    history.add_user_message("think")
    history.add(Message("assistant", (ThinkingBlock("hmm", "sig"),)))
    # the last message holds only thinking: the breakpoint it cannot take is not placed
    assert _marked(history.to_anthropic(cache=True)) == [(0, 0)]


def test_the_sdk_sends_the_breakpoints_as_placed() -> None:
    history = _history(turns=30)  # long enough that only 4 of many blocks may be marked
    kwargs = history.to_anthropic(cache=True)
    with serving(ANTHROPIC_PATH, [Reply(anthropic_message("ok"))]) as api:
        client = anthropic.Anthropic(api_key="test", base_url=api.url, max_retries=0)
        client.messages.create(model="claude-sonnet-4-6", max_tokens=10, **kwargs)
    sent = api.requests[0].body
    assert _marked(sent) == _marked(kwargs) and len(_marked(sent)) == 4
