"""Detection and refusal across every loader: real sessions load by auto-detection with no rule
broken; anything else is a FormatError that says what was expected and what was found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES_DIR, fixture_path, session_params

from contextwarden.cli import main
from contextwarden.errors import FormatError
from contextwarden.eval.replay import replay
from contextwarden.formats import detect_format, load
from contextwarden.rules import validate

SHARED_FIXTURES = ("transcripts", "text")
"""tests/data/ folders holding the trimmed corpus copies and text samples, not format samples."""
SAMPLES = sorted(
    p
    for p in FIXTURES_DIR.rglob("*")
    if p.is_file()
    and p.parent != FIXTURES_DIR
    and p.relative_to(FIXTURES_DIR).parts[0] not in SHARED_FIXTURES
)
REPLAY_WINDOW = 30_000
CLAUDE = fixture_path("claude-code/d-kimuson__claude-code-viewer__5c0375b4.jsonl")
CODEX = fixture_path("codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl")


def _pending_last(messages: list) -> int:  # type: ignore[type-arg]
    """Violations a session may have: only its last reply's unanswered tool calls."""
    return len([v for v in validate(messages) if v.index != len(messages) - 1])


@pytest.mark.parametrize(
    "path", [*session_params(), *(pytest.param(p, id=p.name) for p in SAMPLES)]
)
def test_every_real_session_loads_by_detection_with_no_rule_broken(path: Path) -> None:
    history = load(path)
    assert history.source is not None and history.source.unreadable == 0
    assert history.messages and _pending_last(list(history.messages)) == 0


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_new_samples_replay_in_a_small_window_with_no_invalid_request(path: Path) -> None:
    result = replay(load(path), ("ladder",), window=REPLAY_WINDOW)
    assert result.runs["ladder"].invalid_requests == 0


def test_files_of_another_kind_are_refused_by_detection(tmp_path: Path) -> None:
    cases = {
        "empty.jsonl": b"",
        "binary.dat": bytes(range(256)) * 8,
        "package.json": json.dumps({"name": "x", "dependencies": {"a": "1"}}).encode(),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(FormatError, match="--format") as info:
            load(path)
        assert info.value.path == str(path)


@pytest.mark.parametrize("name", ["events.jsonl", "events.json", "events.log"])
def test_json_lines_no_loader_knows_cannot_be_told_whatever_their_roles_and_blocks(
    tmp_path: Path, name: str
) -> None:
    """Records of a made-up log that quote roles and content blocks: no request body (one JSON
    document) is JSON Lines, so detection says it cannot tell instead of a loader claiming the
    file and failing on its second line ("malformed JSON: Extra data")."""
    records = [
        {"event": "say", "who": {"role": "user"}, "parts": [{"type": "text", "text": "hi"}]},
        {"event": "say", "who": {"role": "model"}, "parts": [{"type": "tool_use", "id": "t"}]},
    ]
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(FormatError, match="could not tell the format") as info:
        load(path)
    assert info.value.path == str(path) and "Extra data" not in str(info.value)


def test_the_wrong_format_names_what_it_expected_and_the_first_record_it_found() -> None:
    with pytest.raises(FormatError) as info:
        load(CLAUDE, "codex")
    text = str(info.value)
    assert "no message could be read" in text and "Codex rollout" in text
    assert "line 1" in text and "parentUuid" in text  # the first record's keys
    with pytest.raises(FormatError, match="no message could be read"):
        load(CODEX, "claude-code")


def test_an_empty_file_forced_to_a_format_is_refused_even_when_lenient(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("")
    for name in ("claude-code", "codex", "copilot", "entire", "gemini-cli", "qwen-code"):
        for lenient in (False, True):
            with pytest.raises(FormatError, match="holds no records") as info:
                load(path, name, lenient=lenient)
            assert "--lenient" not in str(info.value)  # nothing to salvage: not offered


def test_a_file_nothing_could_be_read_from_is_an_error_whatever_the_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(FormatError, match="no message could be read"):
        load(CLAUDE, "codex", lenient=True)
    for command in ("inspect", "replay"):
        with pytest.raises(SystemExit) as exit_info:
            main([command, "--format", "codex", "--lenient", "--json", str(CLAUDE)])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        # The CLI says which format the file is in, when another loader recognises it.
        assert "not in the codex format: it looks like claude-code" in err
        assert len(err.strip().splitlines()) == 1


def test_a_file_mostly_of_other_records_is_refused_but_salvaged_when_lenient(
    tmp_path: Path,
) -> None:
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    noise = [json.dumps({"event": i}) for i in range(3 * len(lines))]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([*lines, *noise]) + "\n")
    with pytest.raises(FormatError, match=f"{len(noise)} of its"):
        load(path, "claude-code")
    salvaged = load(path, "claude-code", lenient=True)
    assert salvaged.messages == load(CLAUDE).messages


def test_cli_refuses_with_exit_2_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"title": "groceries", "items": ["milk"]}))
    for command in (["inspect"], ["compact", "-o", str(tmp_path / "out.json")], ["replay"]):
        with pytest.raises(SystemExit) as exit_info:
            main([*command, str(path)])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert "--format" in err and "format=" not in err.replace("(format=", "")
    with pytest.raises(SystemExit) as exit_info:
        main(["inspect", "--format", "codex", str(CLAUDE)])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["inspect", "--format", "codex", "--lenient", "--json", str(CLAUDE)])
    assert exit_info.value.code == 2  # nothing read: no flag turns that into a success


def test_detection_is_by_shape_not_by_the_first_lines(tmp_path: Path) -> None:
    """Newer Claude Code files open with records of types this loader never heard of."""
    records = [json.loads(line) for line in CLAUDE.read_text(encoding="utf-8").splitlines()]
    session = records[1]["sessionId"]
    new = [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": session},
        {"type": "mode", "mode": "normal", "sessionId": session},
        {"type": "ai-title", "aiTitle": "package.json analysis", "sessionId": session},
        {"type": "custom-title", "customTitle": "pkg", "sessionId": session},
        {"type": "agent-name", "agentName": "main", "sessionId": session},
        {"type": "last-prompt", "lastPrompt": "analyse", "sessionId": session},
        {"type": "hologram", "sessionId": session, "beam": 3},
    ]
    path = tmp_path / "newer.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [*new, *records]) + "\n")
    assert detect_format(path) == "claude-code"
    history = load(path)
    assert history.messages == load(CLAUDE).messages
    report = history.source
    assert report is not None
    assert report.metadata["session_facts"]["ai-title"] == {"aiTitle": "package.json analysis"}
    notes = [i for i in report.issues if "'hologram' is new" in i.message]
    assert [i.line for i in notes] == [7]


def test_newer_claude_code_side_records_are_kept_not_reported(tmp_path: Path) -> None:
    """Record types Claude Code added in 2026, seen on real checkpoint branches: the pull request
    a session is linked to, a file's backup between snapshots, the remote bridge's session id.
    None is conversation; none is a problem; what they say is kept. A type still unknown is
    kept whole with its line, not dropped."""
    records = [json.loads(line) for line in CLAUDE.read_text(encoding="utf-8").splitlines()]
    session = records[1]["sessionId"]
    new = [
        {"type": "pr-link", "sessionId": session, "prNumber": 171, "prRepository": "o/r",
         "prUrl": "https://github.com/o/r/pull/171", "timestamp": "2026-02-21T00:25:38.567Z"},
        {"type": "file-history-delta", "messageId": "m1", "snapshotMessageId": "m0",
         "trackingPath": "CLAUDE.md", "backup": {"backupFileName": "ae8d@v1", "version": 1}},
        {"type": "bridge-session", "sessionId": session, "bridgeSessionId": "cse_01",
         "lastSequenceNum": 0},
        {"type": "hologram", "sessionId": session, "beam": 3},
    ]  # fmt: skip
    path = tmp_path / "newer.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [*records, *new]) + "\n")
    history = load(path)
    assert history.messages == load(CLAUDE).messages
    report = history.source
    assert report is not None
    assert report.metadata["pull_requests"] == [
        {"line": len(records) + 1, "timestamp": "2026-02-21T00:25:38.567Z", "number": 171,
         "url": "https://github.com/o/r/pull/171", "repository": "o/r"}
    ]  # fmt: skip
    facts = report.metadata["session_facts"]["bridge-session"]
    assert facts == {"bridgeSessionId": "cse_01", "lastSequenceNum": 0}
    assert report.metadata["unknown_records"] == [{"line": len(records) + 4, "record": new[3]}]
    assert [(i.line, i.message) for i in report.issues] == [
        (len(records) + 4, "record type 'hologram' is new to this loader; it is not conversation; "
         "kept in metadata['unknown_records']")
    ]  # fmt: skip
