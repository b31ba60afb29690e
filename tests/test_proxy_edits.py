"""Anthropic's ``context_management`` field applied by the proxy for any upstream: the results of
old tool uses are cleared on the client's terms, the field never reaches the upstream, and the
reply reports ``context_management.applied_edits`` as the API does (JSON and SSE)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from contextwarden.errors import FormatError
from contextwarden.policy import CLEARED_MARKER
from contextwarden.proxy import edits
from tests.proxy_harness import check_request, opened, proxy_server, upstream
from tests.test_proxy import KEY, SYSTEM, TOOLS, _long_history, config, reader_script

WINDOW = 200_000
EDIT = {
    "type": "clear_tool_uses_20250919",
    "trigger": {"type": "input_tokens", "value": 3_000},
    "keep": {"type": "tool_uses", "value": 2},
    "clear_at_least": {"type": "input_tokens", "value": 500},
}


@pytest.fixture(autouse=True)
def _key_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def cleared(body: dict[str, Any]) -> int:
    return sum(
        1
        for m in body["messages"]
        for b in m["content"]
        if b.get("type") == "tool_result" and str(b.get("content", "")).startswith(CLEARED_MARKER)
    )


def edited(tmp_path: Path, edit: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The reply to a long conversation sent through the proxy with ``edit``, and what the
    upstream received."""
    with upstream(reader_script(20)) as api, proxy_server(config(api.url, tmp_path, WINDOW)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        reply = client.beta.messages.create(
            model="m",
            max_tokens=10,
            system=SYSTEM,
            tools=TOOLS,
            messages=_long_history(8),
            betas=["context-management-2025-06-27"],
            context_management={"edits": [edit]},
        )
    return reply, api.messages_requests()[-1]


def test_clear_tool_uses_is_applied_and_reported(tmp_path: Path) -> None:
    reply, body = edited(tmp_path, EDIT)
    assert "context_management" not in body
    assert cleared(body) == 6  # 8 results, the latest 2 kept
    check_request(body, WINDOW)
    assert reply.context_management is not None
    (applied,) = reply.context_management.applied_edits
    assert applied.type == "clear_tool_uses_20250919"
    assert applied.cleared_tool_uses == 6 and applied.cleared_input_tokens > 500


def test_clear_tool_inputs_empties_the_old_calls_inputs_too(tmp_path: Path) -> None:
    reply, body = edited(tmp_path, {**EDIT, "clear_tool_inputs": True})
    calls = [b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_use"]
    assert [bool(c["input"]) for c in calls] == [False] * 6 + [True] * 2  # the latest 2 kept
    assert cleared(body) == 6
    check_request(body, WINDOW)
    assert reply.context_management is not None
    (applied,) = reply.context_management.applied_edits
    assert applied.cleared_tool_uses == 6 and applied.cleared_input_tokens > 500


def test_streamed_reply_reports_the_edits_in_message_delta(tmp_path: Path) -> None:
    history = _long_history(8)
    request = {
        "model": "m",
        "max_tokens": 10,
        "stream": True,
        "tools": TOOLS,
        "messages": history,
        "context_management": {"edits": [EDIT]},
    }
    with upstream(reader_script(20)) as api, proxy_server(config(api.url, tmp_path, WINDOW)) as url:
        with httpx.stream(
            "POST", f"{url}/v1/messages?beta=true", json=request, headers={"x-api-key": KEY}
        ) as r:
            events = [json.loads(line[5:]) for line in r.iter_lines() if line.startswith("data:")]
        retried = httpx.post(f"{url}/v1/messages", json={**request, "stream": False})
    assert api.queries[0] == "beta=true"  # as Claude Code sends it, to the upstream
    delta = next(e for e in events if e["type"] == "message_delta")
    assert delta["context_management"]["applied_edits"][0]["cleared_tool_uses"] == 6
    assert events[0]["type"] == "message_start"
    # the same conversation again: the same managed view, and the same report
    assert retried.json()["context_management"] == delta["context_management"]
    first, second = api.messages_requests()
    assert second["messages"] == first["messages"]


def test_excluded_tools_and_a_high_trigger_clear_nothing(tmp_path: Path) -> None:
    history = _long_history(8)
    excluded = {**EDIT, "exclude_tools": ["Read"]}
    high = {**EDIT, "trigger": {"type": "input_tokens", "value": 150_000}}
    with upstream(reader_script(20)) as api, proxy_server(config(api.url, tmp_path, WINDOW)) as url:
        for edit in (excluded, high):
            reply = httpx.post(
                f"{url}/v1/messages",
                json={
                    "model": "m",
                    "max_tokens": 10,
                    "messages": history,
                    "context_management": {"edits": [edit]},
                },
            )
            assert reply.json()["context_management"] == {"applied_edits": []}
    assert all(cleared(b) == 0 for b in api.messages_requests())


def test_unknown_edits_are_left_for_the_upstream_and_bad_ones_refused() -> None:
    thinking = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}
    ours, rest = edits.parse({"context_management": {"edits": [EDIT, thinking]}})
    assert ours[0].keep == 2 and ours[0].trigger == 3_000 and ours[0].clear_at_least == 500
    assert rest == {"edits": [thinking]}
    with pytest.raises(FormatError, match=r"edits\[0\]\.keep"):
        edits.parse({"context_management": {"edits": [{**EDIT, "keep": 3}]}})
