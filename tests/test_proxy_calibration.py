"""The proxy counts a Claude model's requests calibrated (issues 22 and 27): the real ``anthropic``
SDK → a real proxy → a scripted upstream whose usage counts 30 % more than our heuristic (a
tokenizer like Claude's), so only the calibrated count keeps every request in the window."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy import ProxyConfig
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.sessions import Sessions
from contextwarden.stores import SqliteStore
from contextwarden.tokens.calibration import UNSEEN_CLAUDE, calibration_for_model
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.proxy_harness import (
    ADMIN_TOKEN,
    Scripted,
    ScriptedUpstream,
    last_results,
    opened,
    proxy_server,
    text,
    tool_call,
    upstream,
)

WINDOW = 16_000
LIMIT = ContextPolicy(context_window=WINDOW).effective_window
UPSTREAM_SCALE = 1.3
"""Real tokens per heuristic token the scripted model reports (Claude counts 1.05-1.7x)."""
CLAUDE = "claude-sonnet-4-5"
UNCALIBRATED = "scripted-1"
"""A model name the calibration does not know: the count stays the heuristic's."""
CALLS = 12
RESUMED = 4
"""Reads the conversation holds when it first reaches the proxy (an agent's resumed session)."""
BRIEF = " ".join(f"Rule {i}: keep the public names of module {i} stable." for i in range(90))
"""The task's pasted brief: with the resumed reads, a first request under the threshold by the
heuristic's count and over the window by the upstream's."""
KEY = "sk-ant-test-key-0123456789"
SYSTEM = "You read code."
TOOLS = [
    {
        "name": "Read",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
    }
]


@pytest.fixture(autouse=True)
def _key_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK would send a bearer token from the environment instead of our test key."""
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def reader(path: str, body: dict[str, Any]) -> Scripted:
    """Reads ``call_0`` … ``call_{CALLS-1}``, then answers (it looks at the last message only)."""
    done = last_results(path, body)
    step = int(done[-1].split("_")[1]) + 1 if done else 0
    if step >= CALLS:
        return text("done")
    return tool_call("Read", f"call_{step}", file_path=f"src/mod{step}.py")


def big_file(n: int) -> str:
    """A tool result of about 2,600 heuristic tokens: a sixth of the window each (the most a
    message's results may take before the proxy's tool-result budget cuts them)."""
    return "\n".join(
        f"def f{n}_{i}(value):  # line {i}\n    return value * {i}" for i in range(230)
    )


def agent(client: anthropic.Anthropic, model: str, task: str) -> Iterator[None]:
    """A plain SDK tool loop resending the whole conversation, resumed after ``RESUMED`` reads
    (its first request carries them all, with no usage seen yet); yields after each request."""
    messages: list[Any] = [{"role": "user", "content": task}]
    for n in range(RESUMED):
        call = {"type": "tool_use", "id": f"call_{n}", "name": "Read", "input": {}}
        messages.append({"role": "assistant", "content": [call]})
        result = {"type": "tool_result", "tool_use_id": f"call_{n}", "content": big_file(n)}
        messages.append({"role": "user", "content": [result]})
    while True:
        final = client.messages.create(
            model=model, max_tokens=200, system=SYSTEM, tools=TOOLS, messages=messages
        )
        yield
        messages.append({"role": "assistant", "content": [b.model_dump() for b in final.content]})
        uses = [b for b in final.content if b.type == "tool_use"]
        if not uses:
            return
        results = [
            {"type": "tool_result", "tool_use_id": u.id, "content": big_file(int(u.id[5:]))}
            for u in uses
        ]
        messages.append({"role": "user", "content": results})


def upstream_counts(tmp_path: Path, model: str, *, sessions: int = 1) -> list[int]:
    """Run ``sessions`` agents (taking turns, with one history in memory) through the proxy;
    what the upstream counted for each request it got."""
    with upstream(reader) as api, proxy_server(proxy_config(api, tmp_path, sessions)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        agents = [
            agent(client, model, f"Read every module, pass {n}. {BRIEF}") for n in range(sessions)
        ]
        while agents:
            agents = [a for a in agents if next(a, "done") is None]  # each takes a turn
        return [api.upstream_tokens(body) for body in api.messages_requests()]


def proxy_config(api: ScriptedUpstream, tmp_path: Path, sessions: int) -> ProxyConfig:
    api.usage_scale = UPSTREAM_SCALE
    store = str(tmp_path / "proxy.sqlite3")
    return ProxyConfig(
        upstream=api.url,
        window=WINDOW,
        store=store,
        admin_token=ADMIN_TOKEN,
        max_sessions=max(sessions - 1, 1),
    )


def test_claude_requests_fit_by_the_upstreams_count(tmp_path: Path) -> None:
    counts = upstream_counts(tmp_path, CLAUDE)
    assert len(counts) == CALLS - RESUMED + 1
    assert max(counts) > LIMIT * 0.6, "the run must fill the window for the test to mean much"
    assert [c for c in counts if c > LIMIT] == []


def test_uncalibrated_the_same_run_goes_over(tmp_path: Path) -> None:
    """The same conversation counted by the heuristic alone: the calibration is what fits it."""
    counts = upstream_counts(tmp_path, UNCALIBRATED)
    assert len(counts) == CALLS - RESUMED + 1
    assert [c for c in counts if c > LIMIT] != []


def test_an_evicted_session_reloads_calibrated(tmp_path: Path) -> None:
    """Two sessions taking turns with one history in memory: each request reloads its session
    from the store, with the request's model, so every one still fits."""
    counts = upstream_counts(tmp_path, CLAUDE, sessions=2)
    assert len(counts) == 2 * (CALLS - RESUMED + 1)
    assert [c for c in counts if c > LIMIT] == []


def test_the_latest_requests_model_calibrates_the_session(tmp_path: Path) -> None:
    """A session whose client switched models is counted for the model it now talks to."""
    manager = ContextManager(ContextPolicy(context_window=200_000))
    sessions = Sessions(SqliteStore(tmp_path / "s.sqlite3"), manager, HeuristicCounter())
    items: list[Any] = [{"role": "user", "content": BRIEF}]
    counts = []
    for model in ("gpt-4o", CLAUDE, "gpt-4o"):
        body = {"messages": items, "system": SYSTEM, "model": model}
        managed = sessions.manage(ANTHROPIC.conversation(body, "k"))
        assert managed.model == (model if model == CLAUDE else None)
        counted = sessions.history("k", SYSTEM, [], managed.model).counted_tokens()
        counts.append((managed.tokens, counted))
        items = [*items, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}]
    prior = calibration_for_model(CLAUDE)
    assert prior is not None
    (plain, plain_counted), (claude, claude_counted), (back, back_counted) = counts
    assert plain == plain_counted and back == back_counted
    assert claude >= claude_counted * prior.scale * (1 + prior.margin)


def test_an_unseen_claude_family_rests_on_the_anchors(tmp_path: Path) -> None:
    """A Claude family with no measured prior is not calibrated in the proxy: its ledger never
    learns a session's own ratio there, so ``UNSEEN_CLAUDE``'s deliberately high prior would
    count the whole session at about twice its size (an agent with a large fixed part could not
    fit its window at all); the anchors on each reply's usage carry the count instead."""
    manager = ContextManager(ContextPolicy(context_window=200_000))
    sessions = Sessions(SqliteStore(tmp_path / "s.sqlite3"), manager, HeuristicCounter())
    body = {"messages": [{"role": "user", "content": BRIEF}], "system": SYSTEM}
    unseen = sessions.manage(ANTHROPIC.conversation({**body, "model": "claude-opus-9-9"}, "a"))
    measured = sessions.manage(ANTHROPIC.conversation({**body, "model": CLAUDE}, "b"))
    assert calibration_for_model("claude-opus-9-9") is UNSEEN_CLAUDE
    assert unseen.model is None and measured.model == CLAUDE
    assert unseen.tokens < measured.tokens
