"""Entire's compact transcripts: inline tool results become the results the model saw."""

from __future__ import annotations

import json
from pathlib import Path

from contextwarden.formats import detect_format, load
from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate

SAMPLE = Path(__file__).parent / "data" / "entire" / "entireio__cli__copilot_expected.jsonl"


def test_inline_results_answer_their_calls_in_the_next_user_message() -> None:
    lines = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    assert detect_format(SAMPLE) == "entire"
    history = load(SAMPLE)
    calls = [p for line in lines for p in line["content"] if p.get("type") == "tool_use"]
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    results = [b for m in history.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert [u.id for u in uses] == [c["id"] for c in calls]
    assert [u.input for u in uses] == [c["input"] for c in calls]
    assert "result" not in uses[0].extra  # the result is not duplicated into the call
    assert [(r.tool_use_id, r.content) for r in results] == [
        (c["id"], c["result"]["output"]) for c in calls
    ]
    assert history.messages[0].text == lines[0]["content"][0]["text"]
    assert history.messages[1].meta.extra["usage"] == {"output_tokens": 166}
    assert history.source is not None and history.source.metadata["agents"] == ["copilot-cli"]
    assert validate(history.messages) == []


def test_a_failed_inline_result_is_an_error_and_a_missing_one_is_repaired(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    lines[1]["content"][2]["result"]["status"] = "failure"
    del lines[2]["content"][0]["result"]
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    history = load(path)
    results = {
        b.tool_use_id: b
        for m in history.messages
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    assert results["tooluse_H6BBOpIoDWuLGaDN3jBYj7"].is_error is True
    assert results["tooluse_ljzmnXGRtfOI4O4nTCDHwT"].content != ""  # merge mode's placeholder
    assert history.repairs and validate(history.messages) == []
