"""``compact X -o OUT`` then loading OUT gives the context ``compact`` reported, per writable
format: the summary, then the tail kept verbatim (Claude Code's file keeps the whole session, and
its last boundary says where the context as sent starts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import fixture_path, session_params

from contextwarden.cli.inspect_cmd import sent_context
from contextwarden.formats import load
from contextwarden.manager import ContextManager
from contextwarden.model import Message, ThinkingBlock
from contextwarden.policy import ContextPolicy
from contextwarden.wire.anthropic import messages_to_wire
from tests.cliruns import run_cli, run_json

CLAUDE = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")
CODEX = fixture_path("codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl")
WINDOW = 20_000


def compacted_view() -> tuple[Message, ...]:
    """What ``compact CLAUDE --window WINDOW`` sends next, computed here in-process."""
    history = load(CLAUDE)
    ContextManager(ContextPolicy(context_window=WINDOW)).compact(history)
    return history.messages


def without_thinking(messages: tuple[Message, ...]) -> list[Message]:
    kept = [
        Message(m.role, tuple(b for b in m.content if not isinstance(b, ThinkingBlock)), m.meta)
        for m in messages
    ]
    return [m for m in kept if m.content]


@pytest.mark.parametrize(("to", "name"), [("anthropic", "o.json"), ("openai", "o.json"),
                                          ("claude-code", "o.jsonl")])  # fmt: skip
def test_what_is_written_loads_back_as_the_context_compact_reported(
    to: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / name
    args = ("compact", str(CLAUDE), "-o", str(out), "--to", to, "--window", str(WINDOW))
    data = run_json(capsys, *args)
    assert data["compacted"] is True
    view = compacted_view()
    back = load(out)
    if to == "claude-code":
        _, sent = sent_context(back)
        assert len(back.messages) == data["messages_before"]  # the whole session is kept
        compactions = back.source.metadata["compactions"]  # type: ignore[union-attr]
        assert len(compactions) == len(load(CLAUDE).source.metadata["compactions"]) + 1  # type: ignore[union-attr]
    else:
        sent = back.messages
    assert len(sent) == data["messages_after"] == len(view)
    expected = without_thinking(view) if to == "openai" else list(view)
    assert messages_to_wire(sent[1:]) == messages_to_wire(expected[1:])  # the tail, verbatim
    assert sent[0].text == view[0].text  # the summary message
    if to == "openai":
        assert data["not_written"]["thinking_tokens"] > 0  # said, not silently dropped
    inspected = run_json(capsys, "inspect", str(out))
    shown = inspected["sent_context"] if to == "claude-code" else inspected
    assert shown["messages"] == data["messages_after"]
    tokens = shown["tokens"]["total"]
    if to == "anthropic":
        assert tokens == data["tokens_after"]
    else:  # one text block for the summary message (claude-code), no thinking (openai)
        assert 0.8 * data["tokens_after"] <= tokens <= data["tokens_after"]


def test_a_codex_session_is_written_in_the_format_its_name_asks_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "codex-compacted.jsonl"
    data = run_json(capsys, "compact", str(CODEX), "-o", str(out), "--window", "8000")
    assert data["output_format"] == "claude-code"
    assert (
        data["note"] == "codex files cannot be written back; wrote claude-code instead (see --to)"
    )
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["type"] == "user" and "sessionId" in first  # JSONL records, not one JSON body
    _, sent = sent_context(load(out))
    assert len(sent) == data["messages_after"]


@pytest.mark.parametrize(("to", "name", "says"), [
    ("anthropic", "o.jsonl", "o.jsonl: anthropic output is one JSON object, not what a .jsonl "
     "name promises; name the output *.json, or choose --to claude-code"),
    ("claude-code", "o.json", "o.json: claude-code output is JSON Lines, not what a .json name "
     "promises; name the output *.jsonl, or choose --to anthropic or --to openai"),
])  # fmt: skip
def test_a_name_that_promises_another_format_is_refused(
    to: str, name: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / name
    code, _, err = run_cli(capsys, "compact", str(CODEX), "-o", str(out), "--to", to)
    assert code == 2 and says in err
    assert not out.exists()


def test_a_markdown_name_for_a_session_not_written_back_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Markdown export compacted to ``out.md`` would have been Anthropic JSON under a Markdown
    name: refused, saying what ``compact`` writes; ``--to`` writes it under that name anyway."""
    share = Path(__file__).parent / "data" / "gemini-cli-share" / "jaymcortest__unidoku__rut.md"
    out = tmp_path / "out.md"
    code, _, err = run_cli(capsys, "compact", str(share), "-o", str(out))
    assert code == 2 and not out.exists()
    assert (
        f"{out}: gemini-cli-share files cannot be written back, and compact writes JSON "
        "(anthropic, openai) or JSON Lines (claude-code), not what a .md name promises"
    ) in " ".join(err.split())
    code, _, err = run_cli(capsys, "compact", str(share), "-o", str(out), "--to", "openai")
    assert code == 0, err
    assert json.loads(out.read_text(encoding="utf-8"))["messages"]


@pytest.mark.parametrize("path", session_params())
def test_every_session_compacted_to_claude_code_reads_back_as_reported(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever the input format, the Claude Code file ``compact`` writes gives back, as the
    context as sent, exactly the messages it reported keeping."""
    out = tmp_path / "out.jsonl"
    args = ("compact", str(path), "-o", str(out), "--to", "claude-code", "--window", "30000")
    code, text, err = run_cli(capsys, *args, "--json")
    assert code in (0, 1), err  # 1: still over the window, written anyway
    data = json.loads(text)
    back = load(out)
    _, sent = sent_context(back)
    assert len(sent or back.messages) == data["messages_after"]
    assert back.source is not None and back.source.issues == []
