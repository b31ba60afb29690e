"""Sessions without HTTP: prefix matching, replays, forks, and histories reloaded from the store
(after eviction from memory, or after another process wrote)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contextwarden.compaction.cache import CachePolicy
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.matching import session_key
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.wording import dump_body
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter


def make(path: Path, max_open: int = 1_000) -> Sessions:
    manager = ContextManager(ContextPolicy(context_window=50_000))
    return Sessions(SqliteStore(path / "s.sqlite3"), manager, HeuristicCounter(), max_open)


def turn(n: int) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"f{n}"}}
    result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"contents {n}"}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def request(key: str, items: list[dict[str, Any]]) -> Any:
    return ANTHROPIC.conversation({"messages": items, "system": "s"}, key)


def test_evicted_and_foreign_written_sessions_reload(tmp_path: Path) -> None:
    sessions = make(tmp_path, max_open=2)
    chats = {k: [{"role": "user", "content": f"task {k}"}] for k in ("a", "b", "c")}
    for key, items in chats.items():
        assert sessions.manage(request(key, items)).new_items == 1
    assert "a" not in sessions._open  # new sessions count against the bound too
    chats["a"] += turn(1)  # "a" was evicted by "c": loaded from the store, then extended
    managed = sessions.manage(request("a", chats["a"]))
    assert (managed.session_id, managed.new_items, len(managed.messages)) == ("a", 2, 3)
    other = make(tmp_path)  # a second process on the same store extends "a" ...
    chats["a"] += turn(2)
    assert other.manage(request("a", chats["a"])).new_items == 2
    chats["a"] += turn(3)  # ... and the first notices and reloads instead of forking
    managed = sessions.manage(request("a", chats["a"]))
    assert (managed.session_id, managed.new_items, len(managed.messages)) == ("a", 2, 7)


def test_an_evicted_session_continues_byte_identically(tmp_path: Path) -> None:
    """A session dropped from memory before each of its turns (one open session at most, and
    another one's request in between) sends the upstream the very bytes a session kept in
    memory sends, through compactions: reloading keeps its prefix stable for the prompt cache."""
    manager = ContextManager(ContextPolicy(context_window=12_000), cache=CachePolicy())
    kept, evicted = (
        Sessions(SqliteStore(tmp_path / f"{name}.sqlite3"), manager, HeuristicCounter(), size)
        for name, size in (("kept", 10), ("evicted", 1))
    )
    items: list[dict[str, Any]] = [{"role": "user", "content": "task a"}]
    compacted = 0
    for n in range(40):
        items += turn(n)
        items[-1]["content"][0]["content"] = f"contents {n} " + "word " * 300
        body = {"messages": items, "system": "s"}
        sent = []
        for sessions in (kept, evicted):
            managed = sessions.manage(ANTHROPIC.conversation(body, "a"))
            sent.append(dump_body(ANTHROPIC.render(body, managed.messages, cache=True)))
        assert sent[0] == sent[1], f"turn {n}"
        compacted += bool(managed.report and managed.report.applied)
        evicted.manage(request("b", [{"role": "user", "content": "task b"}]))
        assert list(evicted._open) == ["b"] and "a" not in evicted.store._states  # type: ignore[attr-defined]
    assert compacted >= 2  # the reloaded view went through the ladder, not just appends


def test_a_retry_is_replayed_with_the_count_of_its_view(tmp_path: Path) -> None:
    sessions = make(tmp_path)
    items = [{"role": "user", "content": "task"}, *turn(1), *turn(2)]
    sent = sessions.manage(request("a", items))
    retried = sessions.manage(request("a", items))
    assert (retried.new_items, retried.messages) == (0, sent.messages)
    counter = HeuristicCounter()
    assert retried.tokens == sum(counter.count_message(m) for m in sent.messages) > 0


def test_session_keys() -> None:
    assert session_key("my-agent.1", None, None) == "my-agent.1"
    assert session_key("../bad id", None, None).startswith("h-")
    first = {"role": "user", "content": "hi"}
    assert session_key(None, "sys", first) == session_key(None, "sys", dict(first))
    assert session_key(None, "sys", first) != session_key(None, "other", first)
