"""Real sessions replayed through the proxy as their agents sent them (whole history each turn)
with a 30,000-token window: no invalid and no over-window upstream request, and a managed prefix
stable enough for a prompt cache. The whole corpus: benchmarks/bench_proxy_replay.py."""

from __future__ import annotations

import pytest

from contextwarden.eval.proxy_replay import replay
from contextwarden.formats import load
from tests.conftest import TRANSCRIPTS_DIR

WINDOW = 30_000
SESSIONS = {
    "openhands-gui": "openhands/All-Hands-AI__OpenHands__runtime-traj-basic_gui_mode.json",
    "claude-code-short": "claude-code/d-kimuson__claude-code-viewer__5c0375b4.jsonl",
    "claude-code-v2": "claude-code/entireio__cli__9fd2fc39aa5f-s0-v2.0.64.jsonl",
}


def test_real_sessions_through_the_proxy() -> None:
    paths = {name: TRANSCRIPTS_DIR / rel for name, rel in SESSIONS.items()}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        pytest.skip(f"shared transcripts not present: {missing}")
    histories = {name: load(path) for name, path in paths.items()}
    seen = replay(histories, WINDOW)
    assert set(seen) == set(SESSIONS)
    for name, measured in seen.items():
        turns = sum(m.role == "assistant" for m in histories[name].messages[1:])
        assert measured.requests == turns, name
        assert measured.invalid == 0 and measured.over == 0, (name, measured)
    cached = sum(s.cached_tokens for s in seen.values())
    total = sum(s.input_tokens for s in seen.values())
    assert cached / total > 0.8, f"only {cached / total:.1%} of input tokens in an unchanged prefix"
    # the longest one really was managed: it is over the window as sent
    longest = histories["claude-code-v2"]
    assert longest.estimate_tokens() > WINDOW
