"""Every Gemini CLI, qwen-code, Cline and OpenCode fixture replays through the ladder in a small
window with no request invalid for the API and none over the window (issue 23's "done when")."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES_DIR

from contextwarden.eval.replay import replay
from contextwarden.formats import load

AGENTS = ("gemini-cli", "qwen-code", "cline", "opencode")
SESSIONS = sorted(p for agent in AGENTS for p in (FIXTURES_DIR / agent).iterdir() if p.is_file())
SMALL_WINDOW = 4_000
"""Below the context the longer fixtures reach (~10,000 tokens), above their largest message."""


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_replay_in_a_small_window_sends_only_valid_requests_inside_it(path: Path) -> None:
    history = load(path)
    result = replay(history, ("ladder", "ladder-cache"), window=SMALL_WINDOW)
    for name, run in result.runs.items():
        assert run.invalid_requests == 0, name
        assert run.over_window == 0, name


def test_the_small_window_forces_compaction_on_the_longer_sessions() -> None:
    """The window is small enough to matter: some sessions are compacted to fit."""
    compacted = [
        path.name
        for path in SESSIONS
        if replay(load(path), ("ladder",), window=SMALL_WINDOW).runs["ladder"].compactions
    ]
    assert len(compacted) >= 3
