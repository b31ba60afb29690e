"""A 50 MB tool result loads whole, is counted, is capped for the model and can be read back."""

from __future__ import annotations

import json
from pathlib import Path

from contextwarden import ContextManager, ContextPolicy, load, validate

SIZE = 50 * 1024 * 1024


def records(big: str) -> list[dict[str, object]]:
    base = {"sessionId": "s", "isSidechain": False, "timestamp": "2026-01-01T00:00:00.000Z"}

    def rec(
        uuid: str, parent: str | None, kind: str, message: dict[str, object]
    ) -> dict[str, object]:
        return {**base, "uuid": uuid, "parentUuid": parent, "type": kind, "message": message}

    call = {"type": "tool_use", "id": "toolu_big", "name": "Bash", "input": {"command": "cat log"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_big", "content": big}
    return [
        rec("u1", None, "user", {"role": "user", "content": "show me the build log"}),
        rec("a1", "u1", "assistant", {"id": "m1", "role": "assistant", "content": [call]}),
        rec("u2", "a1", "user", {"role": "user", "content": [result]}),
        rec("a2", "u2", "assistant", {"id": "m2", "role": "assistant", "content": "It is long."}),
        rec("u3", "a2", "user", {"role": "user", "content": "summarize the errors"}),
    ]


def test_fifty_megabyte_tool_result(tmp_path: Path) -> None:
    line = "2026-01-01 12:00:00 INFO compiling module 世界 ok\n"
    big = line * (SIZE // len(line.encode()) + 1) + "ERROR: the end\n"
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records(big)) + "\n")
    assert path.stat().st_size > SIZE

    history = load(path)
    assert history.source is not None and history.source.issues == []
    assert len(history.messages) == 5
    assert history.messages[2].tool_results[0].text == big  # nothing cut while loading
    assert validate(history.messages) == []
    assert history.estimate_tokens() > len(big) // 8

    manager = ContextManager(policy=ContextPolicy(context_window=30_000))
    report = manager.prepare(history)
    assert report.tokens_after <= ContextPolicy(context_window=30_000).effective_window
    assert validate(history.messages) == []
    kept = history.messages[2].tool_results[0].text
    assert len(kept) < 40_000 and "ERROR: the end" in kept  # head and tail survive the cap
    assert history.rehydrate("toolu_big").text == big  # and the whole output is still there
