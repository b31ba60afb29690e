"""``contextwarden compact``: one manual compaction, written in the same format or another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import fixture_path
from servers import OPENAI_PATH, Reply, openai_completion, serving

from contextwarden.formats import load
from contextwarden.rules import validate
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.typed import SUMMARY_PREFIX
from tests.cliruns import run_cli, run_json

CLAUDE = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")
CODEX = fixture_path("codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl")
SWE = fixture_path("swe-agent/SWE-agent__SWE-agent__gpt4-pydicom-1458.traj")
WINDOW = "20000"  # small enough that the trimmed fixtures have something to summarize


def test_to_anthropic_keeps_every_user_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "compact.json"
    data = run_json(
        capsys, "compact", str(CLAUDE), "-o", str(out), "--to", "anthropic", "--window", WINDOW
    )
    assert data["compacted"] is True and data["output_format"] == "anthropic"
    assert data["tokens_after"] < data["tokens_before"]
    assert data["messages_after"] < data["messages_before"]
    assert [a["name"] for a in data["actions"] if a["applied"]] == ["summarize"]
    body = json.loads(out.read_text(encoding="utf-8"))
    assert set(body) >= {"messages"}
    written = load(out)
    assert written.source is not None and written.source.format == "anthropic"
    assert validate(written.messages) == []
    assert len(written.messages) == data["messages_after"]
    assert SUMMARY_PREFIX in written.messages[0].text
    text = json.dumps(body, ensure_ascii=False)
    for typed in extract_facts(load(CLAUDE).messages).user_messages:  # said verbatim somewhere
        assert json.dumps(typed.text, ensure_ascii=False)[1:-1] in text


def test_claude_code_is_written_back_as_claude_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "session.jsonl"
    data = run_json(
        capsys, "compact", str(CLAUDE), "-o", str(out), "--instructions", "keep the API",
        "--window", WINDOW,
    )  # fmt: skip
    assert data["output_format"] == "claude-code" and data["note"] is None
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    boundaries = [i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
    summaries = [i for i, r in enumerate(records) if r.get("isCompactSummary")]
    # The session's own compaction first, where it was; ours after every original message.
    original = load(CLAUDE).source.metadata["compactions"]  # type: ignore[union-attr]
    assert len(original) == 1 and len(boundaries) == len(summaries) == 2
    assert all(records[i]["parentUuid"] is None for i in boundaries)
    assert [s - b for b, s in zip(boundaries, summaries, strict=True)] == [1, 1]
    first, ours = records[summaries[0]], records[summaries[1]]
    assert first["message"]["content"] == original[0]["summary"]["text"]
    assert records[boundaries[0]]["compactMetadata"]["trigger"] == original[0]["trigger"]
    conversation = [i for i, r in enumerate(records) if r["type"] in ("user", "assistant")]
    before = [i for i in conversation if i < boundaries[0]]
    assert len(before) == original[0]["messages_before"]  # one record per message written
    assert boundaries[1] > max(i for i in conversation if i not in summaries)
    assert SUMMARY_PREFIX in json.dumps(ours) and "keep the API" in json.dumps(ours)
    reloaded = load(out)
    assert reloaded.source is not None and reloaded.source.format == "claude-code"
    assert validate(reloaded.messages) == []
    again = reloaded.source.metadata["compactions"]
    assert len(again) == 2 and again[0]["messages_before"] == original[0]["messages_before"]
    assert again[0]["summary"]["text"] == original[0]["summary"]["text"]


def test_compact_says_what_left_the_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "session.json"
    args = ("compact", str(CLAUDE), "-o", str(out), "--to", "anthropic", "--window", WINDOW)
    data = run_json(capsys, *args)
    lost = data["lost"]
    removed = [i for i in lost["items"] if i["kind"] == "message"]
    assert removed and lost["tokens"] >= sum(i["tokens"] for i in removed) > 0
    assert all(i["index"] < data["messages_before"] for i in removed)
    code, text, _ = run_cli(capsys, *args)
    flat = " ".join(text.split())
    assert code == 0 and "What left the context (the input file still holds all of it):" in flat
    assert f"1. summarize (manual): {lost['tokens']:,} tokens; " in flat


def test_a_format_we_cannot_write_becomes_anthropic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "codex.json"
    data = run_json(capsys, "compact", str(CODEX), "-o", str(out), "--window", "8000")
    assert data["format"] == "codex" and data["output_format"] == "anthropic"
    assert data["note"] == "codex files cannot be written back; wrote anthropic instead (see --to)"
    assert data["compacted"] is True
    assert load(out).source.format == "anthropic"  # type: ignore[union-attr]


def test_to_openai_round_trips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "openai.json"
    code, text, _ = run_cli(
        capsys, "compact", str(SWE), "-o", str(out), "--to", "openai", "--window", "8000"
    )
    assert code == 0
    flat = " ".join(text.split())
    assert "(swe-agent)" in flat and "✓ summarize" in flat and f"Wrote {out} (openai)" in flat
    body = json.loads(out.read_text(encoding="utf-8"))
    assert body["messages"][0]["role"] == "system"
    reloaded = load(out, "openai")
    assert validate(reloaded.messages) == []
    assert SUMMARY_PREFIX in reloaded.messages[0].text


def test_openai_summarizer_over_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = "1. Primary Request and Intent:\n   Fix the pydicom overlay bug.\n"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    out = tmp_path / "llm.json"
    with serving(OPENAI_PATH, [Reply(openai_completion(summary))]) as api:
        data = run_json(
            capsys, "compact", str(SWE), "-o", str(out), "--window", "8000",
            "--summarizer", "openai", "--model", "gpt-test", "--base-url", f"{api.url}/v1",
        )  # fmt: skip
    assert data["compacted"] is True and data["summarizer"] == "openai"
    assert len(api.requests) == 1
    request = api.requests[0]
    assert request.body["model"] == "gpt-test" and "tools" not in request.body
    assert request.headers["authorization"] == "Bearer sk-test-key"
    first = load(out).messages[0].text
    assert "Fix the pydicom overlay bug." in first


def test_refusals_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "s.traj"
    copy.write_bytes(SWE.read_bytes())
    code, _, err = run_cli(capsys, "compact", str(copy), "-o", str(copy))
    assert code == 2 and "refusing to write over the input" in err
    assert copy.read_bytes() == SWE.read_bytes()
    code, _, err = run_cli(
        capsys, "compact", str(SWE), "-o", str(tmp_path / "o"), "--summarizer", "openai"
    )
    assert code == 2 and "--summarizer openai needs --model" in err
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, _, err = run_cli(
        capsys,
        "compact",
        str(SWE),
        "-o",
        str(tmp_path / "o"),
        "--summarizer",
        "anthropic",
        "--model",
        "m",
    )
    assert code == 2 and "ANTHROPIC_API_KEY" in err
    assert not (tmp_path / "o").exists()


def test_still_over_the_window_says_so_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tiny.json"
    argv = ("compact", str(CLAUDE), "-o", str(out), "--to", "anthropic", "--window", "1000")
    code, text, _ = run_cli(capsys, *argv)
    assert code == 1
    flat = " ".join(text.split())
    assert "Still over the window" in flat and "> 900 (window 1,000" in flat
    assert out.exists()  # written anyway, and said so
    code, text, _ = run_cli(capsys, *argv, "--json")
    data = json.loads(text)
    assert code == 1 and data["over_window"] is True
    assert data["tokens_after"] > data["effective_window"] == 900
    code, text, _ = run_cli(capsys, *argv[:-1], "20000", "--json")
    assert code == 0 and json.loads(text)["over_window"] is False
