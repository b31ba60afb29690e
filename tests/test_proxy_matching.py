"""One session per conversation and caller, and client mistakes that change nothing: the
proxy's errors in the API's own words, sessions scoped by credential, markers and reminders
agents move between requests, tail edits, side requests, and turns retried after a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from contextwarden.compaction.cache import CachePolicy
from contextwarden.log import CompactionBoundary, MessageAdded
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.matching import credential_scope, scoped
from contextwarden.proxy.sessions import Sessions
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.proxy_harness import admin_get, proxy_server, text, upstream
from tests.test_proxy import KEY, SYSTEM, TOOLS, config, file_text, reader_script
from tests.test_proxy_sessions import make, request, turn

HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
USE = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.py"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1"}
USE2 = {**USE, "id": "toolu_2"}
RESULT2 = {"role": "user", "content": [{**RESULT, "tool_use_id": "toolu_2"}]}
OPENING = [{"role": "user", "content": "read a.py"}, {"role": "assistant", "content": [USE]}]


def body(messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 10, "system": SYSTEM, "messages": messages, **extra}


def summaries(tmp_path: Path) -> int:
    """Summaries written in every stored session."""
    with SqliteStore(tmp_path / "proxy.sqlite3") as store:
        return sum(
            isinstance(e, CompactionBoundary) and e.summary is not None
            for s in store.list_sessions()
            for e in store.log(s)
        )


def stored(tmp_path: Path) -> dict[str, int]:
    """Each stored session and the messages ever added to it."""
    with SqliteStore(tmp_path / "proxy.sqlite3") as store:
        return {
            s: sum(isinstance(e, MessageAdded) for e in store.log(s)) for s in store.list_sessions()
        }


@pytest.mark.parametrize(
    ("bad", "wording"),
    [
        (
            [*OPENING, {"role": "user", "content": "no result"}],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after:"
            " toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the"
            " next message.",
        ),
        (
            [
                {"role": "user", "content": "read a.py"},
                {"role": "assistant", "content": [USE, USE]},
                {"role": "user", "content": [RESULT]},
            ],
            None,
        ),
        (
            [*OPENING[:1], {"role": "assistant", "content": [{**USE, "input": {"n": 1e999}}]}],
            None,
        ),
    ],
    ids=["unanswered", "duplicate-ids", "infinite-number"],
)
def test_a_rejected_request_changes_nothing_and_the_conversation_goes_on(
    tmp_path: Path, bad: list[Any], wording: str | None
) -> None:
    good = [*OPENING, {"role": "user", "content": [RESULT]}]
    raw = json.dumps(body(bad)).replace("Infinity", "1e999")
    with upstream(lambda p, b: text("ok")) as api, proxy_server(config(api.url, tmp_path)) as url:
        first = httpx.post(f"{url}/v1/messages", json=body(good[:1]), headers=HEADERS)
        rejected = httpx.post(f"{url}/v1/messages", content=raw, headers=HEADERS)
        after = httpx.post(f"{url}/v1/messages", json=body(good), headers=HEADERS)
    with upstream(lambda p, b: text("ok")) as api, proxy_server(config(api.url, tmp_path)) as url:
        more = [*good, {"role": "assistant", "content": [USE2]}, RESULT2]
        restarted = httpx.post(f"{url}/v1/messages", json=body(more), headers=HEADERS)
    assert first.status_code == after.status_code == restarted.status_code == 200
    assert rejected.status_code == 400
    error = rejected.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    if wording is not None:
        assert error["error"]["message"] == wording
    assert list(stored(tmp_path).values()) == [5]  # 1 + 2 + 2: nothing of the rejected one


def test_chat_completions_rejection_in_openai_words(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}
    messages: list[Any] = [
        {"role": "user", "content": "read"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "user", "content": "never mind"},
    ]
    with upstream(lambda p, b: text("ok")) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="m", messages=messages)
        client.close()
    error = json.loads(caught.value.response.text)["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"].endswith("did not have response messages: call_1")
    assert stored(tmp_path) == {}


def test_two_keys_never_share_a_session(tmp_path: Path) -> None:
    same = body([{"role": "user", "content": "hello"}])
    with upstream(lambda p, b: text("ok")) as api, proxy_server(config(api.url, tmp_path)) as url:
        for key in ("key-a", "key-b", "key-a"):
            headers = {**HEADERS, "x-api-key": key}
            assert httpx.post(f"{url}/v1/messages", json=same, headers=headers).status_code == 200
        named = {"x-contextwarden-session": "shared", "x-api-key": "key-c"}
        httpx.post(f"{url}/v1/messages", json=same, headers={**HEADERS, **named})
    ids = sorted(stored(tmp_path))
    assert len(ids) == 3
    # one key, whichever header carries it
    assert scoped("shared", credential_scope({"authorization": "Bearer key-c"})) in ids
    assert not any("key-" in i for i in ids)  # the credential is never in an id


def run_moving_agent(
    url: str, turns: int, reminder: bool, messages: list[Any] | None = None
) -> list[dict[str, Any]]:
    """An agent that moves its one cache_control marker to the newest message each turn
    (Claude Code) and, with ``reminder``, appends a reminder to its newest user message and
    takes it away again after the turn (aider); it goes on from ``messages`` when given."""
    if messages is None:
        messages = [{"role": "user", "content": [{"type": "text", "text": "Read all."}]}]
    for _ in range(turns):
        sent = json.loads(json.dumps(messages))
        last = sent[-1]["content"]
        if reminder:
            last.append({"type": "text", "text": "Reminder: reply with tool calls."})
        last[-1]["cache_control"] = {"type": "ephemeral"}
        tools = {"tools": TOOLS}
        reply = httpx.post(f"{url}/v1/messages", json=body(sent, **tools), headers=HEADERS)
        assert reply.status_code == 200, reply.text
        content = reply.json()["content"]
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            break
        results = [
            {"type": "tool_result", "tool_use_id": u["id"], "content": file_text(int(u["id"][5:]))}
            for u in uses
        ]
        messages.append({"role": "user", "content": results})
    return messages


@pytest.mark.parametrize("reminder", [False, True], ids=["moved-marker", "rewritten-tail"])
def test_one_session_for_an_agent_that_moves_markers_and_rewrites_its_tail(
    tmp_path: Path, reminder: bool
) -> None:
    with upstream(reader_script(12)) as api, proxy_server(config(api.url, tmp_path)) as url:
        sent = run_moving_agent(url, 13, reminder)
    assert sent[-1]["content"][0]["text"] == "Read 12 files."
    sessions = stored(tmp_path)
    # the first request's only user message carried the reminder, so it named another session
    assert len([s for s, added in sessions.items() if added > 1]) == 1, sessions
    assert not any(s.startswith("f-") for s in sessions)
    assert summaries(tmp_path) <= 13 // 5


def test_a_summarization_request_without_tools_is_its_own_session(tmp_path: Path) -> None:
    with upstream(reader_script(6)) as api, proxy_server(config(api.url, tmp_path)) as url:
        messages = run_moving_agent(url, 3, False)
        ask = [*messages, {"role": "user", "content": "Summarize the conversation so far."}]
        side = httpx.post(f"{url}/v1/messages", json=body(ask), headers=HEADERS)
        rest = run_moving_agent(url, 7, False, messages)
    assert side.status_code == 200
    sessions = stored(tmp_path)
    assert len(sessions) == 2 and not any(s.startswith("f-") for s in sessions)
    assert rest[-1]["content"][0]["text"] == "Read 6 files."


def test_a_turn_retried_after_a_crash_is_stored_once(tmp_path: Path) -> None:
    sessions = make(tmp_path)
    items = [{"role": "user", "content": "task"}, *turn(1)]
    sessions.manage(request("a", items[:1]))
    crashed = sessions.history("a", "s")
    for message in request("a", items).convert(items[1:], 1):
        crashed.add(message)  # the crash: messages written, the turn never recorded
    managed = sessions.manage(request("a", items))
    assert len(managed.messages) == 3
    log = sessions.store.log("a")
    assert sum(isinstance(e, MessageAdded) for e in log) == 3


def test_a_large_fixed_part_is_reported_once_and_the_agent_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tools = [{**TOOLS[0], "name": f"Tool{i}", "description": "word " * 800} for i in range(5)]
    with upstream(reader_script(3)) as api, proxy_server(config(api.url, tmp_path)) as url:
        replies = [
            httpx.post(f"{url}/v1/messages", json=body(messages, tools=tools), headers=HEADERS)
            for messages in ([OPENING[0]], [*OPENING, {"role": "user", "content": [RESULT]}])
        ]
        metrics = admin_get(url, "/metrics").text
    assert [r.status_code for r in replies] == [200, 200]
    assert "contextwarden_proxy_fixed_share_warnings_total 1\n" in metrics
    shares = [float(r.headers["x-contextwarden-fixed-share"]) for r in replies]
    assert all(0.5 < share < 1 for share in shares)
    warnings = [
        r for r in caplog.records if "take" in r.getMessage() and "window" in r.getMessage()
    ]
    assert len(warnings) == 1


def test_a_summary_leaves_room_to_grow_even_when_tools_take_half_the_window(
    tmp_path: Path,
) -> None:
    window = 30_000
    manager = ContextManager(ContextPolicy(context_window=window), cache=CachePolicy())
    sessions = Sessions(SqliteStore(tmp_path / "s.sqlite3"), manager, HeuristicCounter())
    tools = [{**TOOLS[0], "name": f"Tool{i}", "description": "word " * 1_400} for i in range(9)]
    items: list[Any] = [{"role": "user", "content": "Read every module."}]
    requests = 40
    for n in range(requests):
        wire = {"messages": items, "system": SYSTEM, "tools": tools}
        managed = sessions.manage(ANTHROPIC.conversation(wire, "agent"))
        assert managed.tokens <= manager.policy.effective_window
        use = {"type": "tool_use", "id": f"call_{n}", "name": "Tool0", "input": {"n": n}}
        result = {"type": "tool_result", "tool_use_id": f"call_{n}", "content": file_text(n)}
        items += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    history = sessions.history("agent", SYSTEM, tools)
    assert history.preamble_tokens > window * 0.4
    made = [e for e in history.log if isinstance(e, CompactionBoundary) and e.summary is not None]
    assert 0 < len(made) <= requests // 5
