"""Sessions without HTTP: prefix matching, replays, forks, and histories reloaded from the store
(after eviction from memory, or after another process wrote)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy import sessions as sessions_module
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.sessions import Sessions, session_key
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter


def make(path: Path) -> Sessions:
    manager = ContextManager(ContextPolicy(context_window=50_000))
    return Sessions(SqliteStore(path / "s.sqlite3"), manager, HeuristicCounter())


def turn(n: int) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"f{n}"}}
    result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"contents {n}"}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def request(key: str, items: list[dict[str, Any]]) -> Any:
    return ANTHROPIC.conversation({"messages": items, "system": "s"}, key)


def test_evicted_and_foreign_written_sessions_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions_module, "MAX_OPEN_SESSIONS", 2)
    sessions = make(tmp_path)
    chats = {k: [{"role": "user", "content": f"task {k}"}] for k in ("a", "b", "c")}
    for key, items in chats.items():
        assert sessions.manage(request(key, items)).new_items == 1
    chats["a"] += turn(1)  # "a" was evicted by "c": loaded from the store, then extended
    managed = sessions.manage(request("a", chats["a"]))
    assert (managed.session_id, managed.new_items, len(managed.messages)) == ("a", 2, 3)
    other = make(tmp_path)  # a second process on the same store extends "a" ...
    chats["a"] += turn(2)
    assert other.manage(request("a", chats["a"])).new_items == 2
    chats["a"] += turn(3)  # ... and the first notices and reloads instead of forking
    managed = sessions.manage(request("a", chats["a"]))
    assert (managed.session_id, managed.new_items, len(managed.messages)) == ("a", 2, 7)


def test_session_keys() -> None:
    assert session_key("my-agent.1", None, None) == "my-agent.1"
    assert session_key("../bad id", None, None).startswith("h-")
    first = {"role": "user", "content": "hi"}
    assert session_key(None, "sys", first) == session_key(None, "sys", dict(first))
    assert session_key(None, "sys", first) != session_key(None, "other", first)
