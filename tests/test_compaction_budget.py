"""ToolResultBudget and Snip: over-limit results become previews, nothing is lost."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from contextwarden.compaction import CompactionContext, Snip, ToolResultBudget
from contextwarden.compaction.snip import has_long_line, snip_text
from contextwarden.manager import ContextManager
from contextwarden.model import (
    FrozenDict,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from tests.strategies import history_of


def one_call(tool: str, output: str | tuple[TextBlock | ImageBlock, ...]) -> list[Message]:
    return [
        Message.user("run it"),
        Message.assistant([ToolUseBlock("toolu_1", tool, {"command": "make"})]),
        Message("user", (ToolResultBlock("toolu_1", output),)),
    ]


def numbered(lines: int) -> str:
    return "\n".join(f"line {n:06d} of the build log" for n in range(lines))


def result_text(messages: tuple[Message, ...]) -> str:
    return messages[2].tool_results[0].text


def test_bash_result_over_30000_chars_becomes_head_tail_preview(tmp_path: Path) -> None:
    output = numbered(5_000)  # about 135,000 characters
    messages = one_call("Bash", output)
    result = ToolResultBudget()(messages, CompactionContext(spill_dir=tmp_path))
    text = result_text(result.messages)
    assert result.applied and validate(result.messages) == []
    assert len(text) <= 30_000
    assert text.startswith("line 000000") and text.rstrip().endswith("line 004999 of the build log")
    cut = result.report.details["cuts"][0]
    assert (
        f"cut {cut['original_chars'] - cut['kept_chars']:,} of {len(output):,} characters" in text
    )
    assert "history.rehydrate('toolu_1')" in text and cut["spill_id"] in text
    spilled = Path(cut["spill_path"])
    assert spilled.parent == tmp_path and spilled.read_text(encoding="utf-8") == output
    assert result.report.tokens_after < result.report.tokens_before


def test_cut_result_is_not_cut_again_and_input_is_untouched() -> None:
    messages = one_call("Bash", numbered(5_000))
    first = ToolResultBudget()(messages)
    again = ToolResultBudget()(first.messages)
    assert not again.applied and again.messages == first.messages
    assert messages[2].tool_results[0].text == numbered(5_000)


def test_limits_follow_tool_names_with_aliases() -> None:
    output = numbered(1_500)  # about 40,000 characters: over Bash's limit, under the default
    assert ToolResultBudget()(one_call("execute_bash", output)).applied
    assert ToolResultBudget()(one_call("shell", output)).applied
    assert not ToolResultBudget()(one_call("Read", output)).applied
    assert ToolResultBudget(default_limit=10_000)(one_call("Read", output)).applied


def test_parallel_results_share_the_message_budget() -> None:
    uses = [ToolUseBlock(f"t{n}", "Read", {"file_path": f"f{n}"}) for n in range(4)]
    results = tuple(ToolResultBlock(f"t{n}", numbered(700)) for n in range(4))
    messages = [Message.user("read all"), Message.assistant(uses), Message("user", results)]
    ctx = CompactionContext(policy=ContextPolicy(context_window=30_000))
    before = ctx.count(messages[2])
    assert before > ctx.policy.message_result_tokens  # each is under its own limit, not together
    result = ToolResultBudget()(messages, ctx)
    assert result.applied
    assert ctx.count(result.messages[2]) <= ctx.policy.message_result_tokens
    assert len(result.report.details["cuts"]) == 4


def test_non_text_parts_survive_a_cut() -> None:
    image = ImageBlock(FrozenDict({"type": "base64", "media_type": "image/png", "data": "AAAA"}))
    result = ToolResultBudget()(one_call("Bash", (TextBlock(numbered(5_000)), image)))
    content = result.messages[2].tool_results[0].content
    assert isinstance(content, tuple) and content[1] == image
    assert isinstance(content[0], TextBlock) and len(content[0].text) <= 30_000


def test_unwritable_spill_dir_still_cuts_and_does_not_name_a_missing_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING, logger="contextwarden"):
        result = ToolResultBudget(spill_dir=blocker)(one_call("Bash", numbered(5_000)))
    assert result.applied
    assert "could not write spill file" in caplog.text
    assert "file " + str(blocker) not in result_text(result.messages)
    assert result.report.details["cuts"][0]["spill_path"] is None


def test_manager_cut_is_recoverable_with_rehydrate(tmp_path: Path) -> None:
    output = numbered(5_000)
    history = history_of(one_call("Bash", output))
    manager = ContextManager(spill_dir=tmp_path)
    report = manager.prepare(history)
    assert report.applied == ("tool_result_budget",)
    assert len(history.messages[2].tool_results[0].text) <= 30_000
    assert history.rehydrate("toolu_1").text == output
    assert [p.read_text(encoding="utf-8") for p in tmp_path.glob("*.txt")] == [output]
    with pytest.raises(KeyError, match="toolu_nope"):
        history.rehydrate("toolu_nope")


# ---------------------------------------------------------------------- snip
def test_snip_cuts_long_lines_in_tool_results_only() -> None:
    wide = "a" * 10 + ",".join(str(n) for n in range(3_000))  # one line, about 14,000 chars
    messages = [
        Message.user("short question " + wide),  # user text is never snipped
        Message.assistant([ToolUseBlock("toolu_1", "Bash", {"command": "cat min.js"})]),
        Message("user", (ToolResultBlock("toolu_1", "head\n" + wide + "\ntail"),)),
    ]
    result = Snip(max_line_chars=500)(messages)
    assert result.applied and validate(result.messages) == []
    lines = result_text(result.messages).split("\n")
    assert lines[0] == "head" and lines[2] == "tail"
    assert lines[1].startswith(wide[:500]) and "line cut" in lines[1] and len(lines[1]) < 600
    assert result.messages[0] == messages[0]
    assert result.report.details["lines"] == 1


def test_snip_leaves_lines_just_over_the_limit_alone() -> None:
    text = "b" * 510  # cutting would save less than the marker costs
    assert snip_text(text, 500) == (text, 0)
    assert not Snip(max_line_chars=500)(one_call("Bash", "ok\n" + text)).applied


@pytest.mark.parametrize(
    ("text", "threshold", "expected"),
    [
        ("a" * 10 + "\n" + "b" * 11, 10, True),
        ("a" * 10 + "\n" + "b" * 10, 10, False),
        ("a" * 11, 10, True),
        ("", 10, False),
        (("x" * 1_999 + "\n") * 300, 2_000, False),
        (("x" * 1_999 + "\n") * 300 + "y" * 2_001, 2_000, True),
    ],
)
def test_has_long_line(text: str, threshold: int, expected: bool) -> None:
    assert has_long_line(text, threshold) is expected
