"""Hostile input never crashes a loader or the stores' codec: every failure is a
ContextWardenError that says where (file, line, message index). The larger run is
``benchmarks/bench_fuzz.py``; these cases take seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextwarden.errors import FormatError, StoreError
from contextwarden.formats import FORMATS, load
from contextwarden.history import ConversationHistory
from contextwarden.model import (
    MAX_NESTING,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    freeze,
)
from contextwarden.stores.codec import decode, encode
from tests.conftest import TRANSCRIPTS
from tests.fuzzing import DEEP, TOOL_DEEP, fuzz_codec, fuzz_loaders, nested_results, trimmed

LOADER_CASES = 420
CODEC_CASES = 400
FIXTURES = Path(__file__).parent / "data"


def nest(levels: int) -> object:
    value: object = 0
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Small copies of every real transcript (the shared corpus when present, else the fixtures
    under tests/data); the fuzzers also generate documents of their own."""
    out = tmp_path_factory.mktemp("sources")
    real = TRANSCRIPTS or sorted(
        p for p in FIXTURES.rglob("*") if p.suffix in {".json", ".jsonl", ".traj"}
    )
    return [trimmed(p, out) for p in real]


def test_mutated_files_through_every_loader_raise_only_contextwarden_errors(
    sources: list[Path], tmp_path: Path
) -> None:
    result = fuzz_loaders(sources, LOADER_CASES, tmp_path, seed=9)
    assert result.cases == LOADER_CASES
    assert result.escaped == []
    assert result.loaded > 0 and result.errors  # both outcomes were exercised


def test_corrupted_store_events_raise_only_store_errors(sources: list[Path]) -> None:
    lines = [encode(e) for p in sources[:6] for e in _log(p)]
    lines += [encode(e) for e in _built().log]  # every event kind, with or without the corpus
    assert {json.loads(line)["type"] for line in lines} >= {"preamble", "message", "usage"}
    result = fuzz_codec(lines, CODEC_CASES, seed=9)
    assert result.escaped == []
    assert set(result.errors) <= {"StoreError"}
    assert result.loaded > 0 and result.errors


def _built() -> ConversationHistory:
    history = ConversationHistory("be brief", [{"name": "Read", "input_schema": {}}])
    history.add(Message.user("read a.py"))
    thinking = ThinkingBlock("let me look", "sig")
    use = ToolUseBlock("t1", "Read", {"file_path": "a.py", "nested": {"list": [1, {"x": None}]}})
    history.add(Message.assistant([thinking, TextBlock("reading"), use]))
    history.add(Message("user", (ToolResultBlock("t1", "print('a')", is_error=True),)))
    history.record_usage({"input_tokens": 120, "output_tokens": 8})
    history.set_metadata("k", {"v": [1, 2]})
    return history


def _log(path: Path) -> list[object]:
    try:
        return list(load(path).log)
    except FormatError:
        return []


@pytest.mark.parametrize("fmt", ["auto", *FORMATS])
def test_json_nested_beyond_the_parser_is_a_clear_error_naming_the_place(
    fmt: str, tmp_path: Path
) -> None:
    """Whole-document formats refuse the file; line formats report and skip the line."""
    path = tmp_path / "deep.json"
    path.write_text('{"messages": ' + "[" * DEEP + "]" * DEEP + "}")
    try:
        history = load(path, fmt)
    except FormatError as exc:
        assert exc.path == str(path)
    else:
        assert history.source is not None and history.messages == ()
        issue = history.source.issues[0]
        assert issue.line == 1 and "nested too deeply" in issue.message


def test_a_jsonl_line_nested_beyond_the_parser_is_reported_by_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [
        json.dumps({"role": "user", "content": "hi"}),
        '{"role": "assistant", "content": ' + "[" * DEEP + "]" * DEEP + "}",
        json.dumps({"role": "assistant", "content": "hello"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    history = load(path, "openai")
    assert [m.text for m in history.messages] == ["hi", "hello"]
    issue = history.source.issues[0] if history.source else None
    assert issue is not None and issue.line == 2 and "nested too deeply" in issue.message


def test_a_tool_input_nested_500_deep_is_skipped_with_its_record(tmp_path: Path) -> None:
    """``json`` parses 500 levels, but every walk of the value would recurse past the limit."""
    use = {"type": "tool_use", "id": "t1", "name": "f", "input": nest(TOOL_DEEP)}
    turns = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [use]}]
    body = {"messages": turns}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    history = load(path, "anthropic")
    assert [m.role for m in history.messages] == ["user"]
    assert history.source is not None
    (issue,) = history.source.issues
    assert issue.index == 1 and f"more than {MAX_NESTING} levels" in issue.message


def test_openai_tool_arguments_nested_500_deep_are_skipped_by_message_index(
    tmp_path: Path,
) -> None:
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": "f", "arguments": json.dumps(nest(TOOL_DEEP))}  # type: ignore[assignment]
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    history = load(path, "openai")
    assert history.source is not None and history.source.issues[0].index == 1
    assert "done" in history.messages[-1].text  # the orphaned result is kept as text


def test_tool_results_nested_in_tool_results_are_refused_not_followed(tmp_path: Path) -> None:
    """Each level adds two to the JSON depth, so 250 levels parse; reading them block by block
    used to recurse past Python's limit."""
    turns = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "ok"},
        {
            "role": "user",
            "content": [nested_results(TOOL_DEEP // 2), {"type": "text", "text": "hi"}],
        },
    ]
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"messages": turns}))
    history = load(path, "anthropic")
    assert history.source is not None
    (issue,) = history.source.issues
    assert issue.index == 2 and "MAX_NESTING" in issue.message


def test_nesting_up_to_the_limit_is_kept_and_beyond_it_refused() -> None:
    assert freeze(nest(MAX_NESTING))  # MAX_NESTING objects, the outer one included
    with pytest.raises(FormatError, match="MAX_NESTING"):
        freeze(nest(MAX_NESTING + 1))
    with pytest.raises(FormatError, match="MAX_NESTING"):
        freeze([nest(MAX_NESTING)])


@pytest.mark.parametrize("levels", [TOOL_DEEP, DEEP * 5])
def test_a_corrupted_row_nested_deeply_is_a_store_error_naming_it(levels: int) -> None:
    text = '{"a":' * levels + "0" + "}" * levels
    row = (
        '{"v":1,"type":"message","message":{"role":"user","content":'
        f'[{{"type":"text","text":"x","cache":{text}}}]}}}}'
    )
    with pytest.raises(StoreError, match=r"sessions\.db#s1 event 4"):
        decode(row, where="sessions.db#s1 event 4")
