"""``--recall``: after hidden rounds the agent, through the real SDKs, sees the usage of its own
request (the question's prompt, not the hidden tail it never sent), while ``/sessions/{id}``
still counts the hidden tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextwarden.proxy.recall_reply import agent_usage, restated_event, restated_reply
from tests.proxy_harness import admin_get, prompt_tokens, proxy_server, upstream
from tests.test_proxy_recall import (
    CHAT,
    MESSAGES,
    NEEDLE,
    RESPONSES,
    Model,
    answer,
    config,
    prior,
)

OUTPUT_TOKENS = 20
"""What the scripted upstream reports as each reply's output."""


def ask_usage(url: str, path: str, stream: bool) -> tuple[str, dict[str, Any]]:
    """The question asked through the real SDK: the reply's text and the usage it reports."""
    got = answer(url, path, prior(path), stream)
    assert got.usage is not None
    return got.text, got.usage


def prompt_side(path: str, tokens: int) -> dict[str, int]:
    """The prompt fields of the scripted upstream's usage for a request of ``tokens``."""
    if path == MESSAGES:
        return {
            "input_tokens": tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
    if path == CHAT:
        return {"prompt_tokens": tokens, "total_tokens": tokens + OUTPUT_TOKENS}
    return {"input_tokens": tokens, "total_tokens": tokens + OUTPUT_TOKENS}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    "path", [MESSAGES, CHAT, RESPONSES], ids=["anthropic", "openai-chat", "responses"]
)
def test_the_agent_sees_its_own_requests_usage(tmp_path: Path, path: str, stream: bool) -> None:
    with upstream(Model()) as api, proxy_server(config(api.url, tmp_path)) as url:
        answer, usage = ask_usage(url, path, stream)
        [session] = admin_get(url, "/sessions").json()["sessions"]
        [noted] = admin_get(url, f"/sessions/{session}").json()["recall_rounds"]
    asked, *follow_ups = api.messages_requests(path)
    assert answer == f"It returned: {NEEDLE[-60:]}" and len(follow_ups) >= 2
    # the hidden tail made each follow-up's prompt larger than the question's
    question = prompt_tokens(asked, path)
    assert all(prompt_tokens(b, path) > question for b in follow_ups)
    # the agent is told exactly the question's prompt, and the final reply's output
    expected = prompt_side(path, question)
    assert {k: usage[k] for k in expected} == expected
    output = usage.get("output_tokens", usage.get("completion_tokens"))
    assert output == OUTPUT_TOKENS
    # the session's view still reports what the hidden rounds cost
    assert noted["hidden_prompt_tokens"] == sum(prompt_tokens(b, path) for b in follow_ups)


FIRST = {
    "input_tokens": 12,
    "cache_read_input_tokens": 9_000,
    "cache_creation_input_tokens": 300,
    "cache_creation": {"ephemeral_5m_input_tokens": 300},
    "output_tokens": 40,
}
FINAL = {
    "input_tokens": 2_500,
    "cache_read_input_tokens": 9_300,
    "cache_creation_input_tokens": 0,
    "cache_creation": {"ephemeral_5m_input_tokens": 0},
    "output_tokens": 85,
    "service_tier": "standard",
}


def test_the_cache_read_the_agent_sees_is_its_own_requests() -> None:
    """The first reply's cache read and write (what the agent's request did), the final
    reply's output and reply-side fields."""
    assert agent_usage("anthropic", FIRST, FINAL) == {
        **{k: FIRST[k] for k in FIRST if k != "output_tokens"},
        "output_tokens": 85,
        "service_tier": "standard",
    }
    first = {"prompt_tokens": 9_000, "prompt_tokens_details": {"cached_tokens": 8_000}}
    final = {
        "prompt_tokens": 12_000,
        "completion_tokens": 7,
        "total_tokens": 12_007,
        "prompt_tokens_details": {"cached_tokens": 9_000},
        "completion_tokens_details": {"reasoning_tokens": 3},
    }
    assert agent_usage("openai-chat", first, final) == {
        **first,
        "completion_tokens": 7,
        "total_tokens": 9_007,
        "completion_tokens_details": {"reasoning_tokens": 3},
    }
    first = {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 512}}
    final = {"input_tokens": 1_500, "input_tokens_details": {"cached_tokens": 900}}
    final |= {"output_tokens": 5, "total_tokens": 1_505}
    assert agent_usage("openai-responses", first, final) == {
        **first,
        "output_tokens": 5,
        "total_tokens": 905,
    }
    first = {"promptTokenCount": 900, "cachedContentTokenCount": 600, "toolUsePromptTokenCount": 4}
    final = {"promptTokenCount": 1_500, "cachedContentTokenCount": 900, "candidatesTokenCount": 5}
    final |= {"thoughtsTokenCount": 30, "totalTokenCount": 1_535}
    assert agent_usage("gemini", first, final) == {
        **first,
        "candidatesTokenCount": 5,
        "thoughtsTokenCount": 30,
        "totalTokenCount": 939,
    }


def test_what_carries_no_usage_is_left_as_it_is() -> None:
    assert agent_usage("anthropic", None, FINAL) == FINAL
    assert agent_usage("anthropic", FIRST, None) is None
    assert restated_event("anthropic", {"type": "message_stop"}, FIRST) is None
    assert restated_event("openai-chat", {"choices": [{"delta": {}}]}, FIRST) is None
    assert restated_event("anthropic", {"type": "message_delta", "usage": {}}, None) is None
    # a body that does not read goes to the agent as it came
    assert restated_reply("anthropic", b"not json", False, FIRST, ["lead"]) == b"not json"


def test_the_lead_goes_after_the_final_replys_thinking() -> None:
    """With extended thinking the message the agent sends back must start with thinking."""
    thinking = {"type": "thinking", "thinking": "Hmm.", "signature": "sig"}
    call = {"type": "tool_use", "id": "call_1", "name": "Read", "input": {}}
    reply = {"content": [thinking, call], "usage": FINAL}
    data = restated_reply("anthropic", json.dumps(reply).encode(), False, FIRST, ["Looking."])
    content = json.loads(data)["content"]
    assert content == [thinking, {"type": "text", "text": "Looking."}, call]


def test_a_whole_chat_reply_with_no_content_gets_the_lead_as_its_content() -> None:
    message = {"role": "assistant", "content": None, "tool_calls": []}
    reply = {"choices": [{"index": 0, "message": message}]}
    data = restated_reply("openai-chat", json.dumps(reply).encode(), False, None, ["A ", "B"])
    assert json.loads(data)["choices"][0]["message"]["content"] == "A B"


def test_an_incomplete_response_tells_the_agents_usage_too() -> None:
    first = {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 512}}
    final = {"input_tokens": 1_500, "output_tokens": 5, "total_tokens": 1_505}
    event = {"type": "response.incomplete", "response": {"status": "incomplete", "usage": final}}
    changed = restated_event("openai-responses", event, first)
    assert changed["response"]["usage"] == {**first, "output_tokens": 5, "total_tokens": 905}
