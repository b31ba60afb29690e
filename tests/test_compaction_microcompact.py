"""MicroCompact and ObservationMask: old tool results cleared, the latest kept, pairs intact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from contextwarden.compaction import CompactionContext, MicroCompact, ObservationMask, ToolMatcher
from contextwarden.compaction.mask import MASK_PLACEHOLDER
from contextwarden.compaction.microcompact import FAILED_LINES_NOTE
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.policy import CLEARED_MARKER, ContextPolicy
from contextwarden.rules import validate
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.typed import user_messages
from tests.strategies import tool_turns


def results(messages: tuple[Message, ...] | list[Message]) -> list[ToolResultBlock]:
    return [r for m in messages for r in m.tool_results]


def test_keeps_the_3_most_recent_compactable_results_and_leaves_other_tools_alone() -> None:
    # Read, Bash, TodoWrite, Read, Bash, TodoWrite, Read, Bash: six compactable, two not.
    messages = tool_turns(8, tools=("Read", "Bash", "TodoWrite"), size=2_000)
    result = MicroCompact(min_saving=0)(messages)
    assert result.applied and validate(result.messages) == []
    after, before = results(result.messages), results(messages)
    assert [r.tool_use_id for r in after] == [r.tool_use_id for r in before]  # blocks and ids stay
    cleared = [r.tool_use_id for r in after if r.content == CLEARED_MARKER]
    assert cleared == ["toolu_0", "toolu_1", "toolu_3"]
    for n in (2, 5):  # TodoWrite
        assert after[n] == before[n]
    for n in (4, 6, 7):  # the latest three compactable
        assert after[n] == before[n]
    assert result.report.details["cleared"] == 3 and result.report.details["kept"] == 3
    assert result.report.tokens_after < result.report.tokens_before


@pytest.mark.parametrize(
    "name", ["read_file", "READ", "str_replace_editor", "shell", "exec_command"]
)
def test_tool_aliases_are_compactable(name: str) -> None:
    messages = tool_turns(5, tools=(name,), size=2_000)
    result = MicroCompact(min_saving=0)(messages)
    cleared = [r for r in results(result.messages) if r.content == CLEARED_MARKER]
    assert len(cleared) == 2


def test_configured_tools_replace_the_default_list() -> None:
    messages = tool_turns(5, tools=("Read", "Custom"), size=2_000)
    result = MicroCompact(keep_recent=0, tools=["custom"], min_saving=0)(messages)
    cleared = [r.tool_use_id for r in results(result.messages) if r.content == CLEARED_MARKER]
    assert cleared == ["toolu_1", "toolu_3"]


def test_minimum_saving_is_its_own_guard() -> None:
    messages = tool_turns(6, size=500)
    result = MicroCompact()(messages)  # policy minimum: 20,000 tokens
    assert not result.applied and "below the minimum 20,000" in result.report.description
    assert result.messages == tuple(messages)
    assert result.report.details["saving"] > 0


def test_already_cleared_results_are_not_cleared_twice() -> None:
    first = MicroCompact(min_saving=0)(tool_turns(6, size=2_000))
    again = MicroCompact(min_saving=0)(first.messages)
    assert not again.applied and "no compactable tool result" in again.report.description


def test_context_policy_sets_the_defaults() -> None:
    from contextwarden.policy import ContextPolicy

    policy = ContextPolicy(
        keep_recent_tool_results=1, cleared_marker="[gone]", compactable_tools=("Read",)
    )
    result = MicroCompact(min_saving=0)(tool_turns(4, size=2_000), CompactionContext(policy=policy))
    assert [r.content for r in results(result.messages)].count("[gone]") == 3


def test_observation_mask_keeps_the_last_m_results_of_every_tool() -> None:
    messages = tool_turns(6, tools=("TodoWrite", "Read"), size=2_000)
    result = ObservationMask(keep_recent=2)(messages)
    contents = [r.content for r in results(result.messages)]
    assert contents[:4] == [MASK_PLACEHOLDER] * 4
    assert contents[4:] == [r.content for r in results(messages)][4:]
    assert validate(result.messages) == []


def test_tool_matcher() -> None:
    matcher = ToolMatcher(["Read", "Bash"])
    assert matcher.canonical("read_file") == "Read"
    assert matcher.canonical("Read-File") == "Read"
    assert matcher.canonical("execute_bash") == "Bash"
    assert matcher.canonical("TodoWrite") is None
    assert not matcher.matches(None)


# ------------------------------------------------------------------ what a cleared result keeps
REJECTION = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). To tell you how to proceed, "
    "the user said:\nuse the staging database, never prod"
)


def failing_session(extra: int = 4) -> list[Message]:
    """A failed build, a rejected edit, then ``extra`` successful reads that push them out."""
    build = ToolUseBlock("toolu_build", "Bash", {"command": "make build"})
    log = "".join(f"compiling unit {n}\n" for n in range(200))
    failed = log + "error: undefined reference to `parse_config'\nerror: ld returned 1\nExit code 2"
    edit = ToolUseBlock("toolu_edit", "Edit", {"file_path": "db.py", "old_string": "a"})
    messages = [
        Message.user("Fix the build"),
        Message("assistant", (build,)),
        Message("user", (ToolResultBlock(build.id, failed, is_error=True),)),
        Message("assistant", (edit,)),
        Message("user", (ToolResultBlock(edit.id, REJECTION, is_error=True),)),
    ]
    return messages + tool_turns(extra, size=2_000)[1:]


def cleared_texts(messages: Sequence[Message]) -> dict[str, str]:
    return {
        r.tool_use_id: r.text
        for m in messages
        for r in m.tool_results
        if r.text.startswith(CLEARED_MARKER)
    }


def test_a_cleared_failure_keeps_the_error_lines_the_summary_would_quote() -> None:
    messages = failing_session()
    result = MicroCompact(min_saving=0)(messages)
    assert result.applied and validate(result.messages) == []
    cleared = cleared_texts(result.messages)
    build = cleared["toolu_build"]
    assert build.startswith(CLEARED_MARKER + "\n" + FAILED_LINES_NOTE + "\n")
    # The very line the facts (and so the summary and the replay's probes) call the failure.
    errors = {e.target: e.excerpt for e in extract_facts(messages).errors}
    assert errors["make build"] == "error: undefined reference to `parse_config'"
    assert build.split("\n")[2:] == [
        "error: undefined reference to `parse_config'",
        "error: ld returned 1",
    ]
    assert "compiling unit" not in build  # the rest is cleared
    assert cleared["toolu_0"] == CLEARED_MARKER  # a successful result keeps nothing


def test_a_rejected_call_keeps_the_reason_the_person_typed() -> None:
    messages = failing_session()
    result = MicroCompact(min_saving=0)(messages)
    assert "toolu_edit" not in cleared_texts(result.messages)  # older than the latest 3, kept
    assert result.messages[4] is messages[4]
    assert [m.text for m in user_messages(result.messages)] == [
        "Fix the build",
        "use the staging database, never prod",
    ]


def test_the_number_of_kept_error_lines_is_a_policy_field() -> None:
    one = CompactionContext(policy=ContextPolicy(cleared_error_lines=1))
    build = cleared_texts(MicroCompact(min_saving=0)(failing_session(), one).messages)
    assert build["toolu_build"].split("\n")[2:] == ["error: undefined reference to `parse_config'"]
    none = CompactionContext(policy=ContextPolicy(cleared_error_lines=0))
    build = cleared_texts(MicroCompact(min_saving=0)(failing_session(), none).messages)
    assert build["toolu_build"] == CLEARED_MARKER
    with pytest.raises(ValueError, match="cleared_error_lines"):
        ContextPolicy(cleared_error_lines=-1)


def test_kept_lines_come_from_the_result_as_first_added() -> None:
    # An earlier rung cut the result to a preview without its error line; the log has it whole.
    messages = failing_session()
    original = messages[2].tool_results[0]
    preview = replace(original, content="compiling unit 0\n" * 100 + "[cut]\nExit code 2")
    cut = [*messages[:2], Message("user", (preview,)), *messages[3:]]
    ctx = CompactionContext(originals={original.tool_use_id: original}.get)
    build = cleared_texts(MicroCompact(min_saving=0)(cut, ctx).messages)["toolu_build"]
    assert "error: undefined reference to `parse_config'" in build
    without = cleared_texts(MicroCompact(min_saving=0)(cut).messages)["toolu_build"]
    assert "parse_config" not in without and without.endswith("compiling unit 0")  # first line


def test_a_cleared_result_with_kept_lines_is_not_cleared_again() -> None:
    first = MicroCompact(min_saving=0)(failing_session())
    again = MicroCompact(min_saving=0)(first.messages)
    assert not again.applied and "no compactable tool result" in again.report.description


def test_a_short_failure_that_clearing_would_not_shorten_stays() -> None:
    use = ToolUseBlock("toolu_x", "Bash", {"command": "false"})
    messages = [
        Message.user("go"),
        Message("assistant", (use,)),
        Message("user", (ToolResultBlock(use.id, "error: no", is_error=True),)),
        *tool_turns(4, size=2_000)[1:],
    ]
    result = MicroCompact(min_saving=0)(messages)
    assert result.applied
    assert result.messages[2] is messages[2]
    assert result.report.details["cleared"] == 1  # only the oldest read


def test_clear_tool_inputs_keeps_the_latest_calls_and_their_pairing() -> None:
    from contextwarden.compaction.inputs import ClearToolInputs

    messages = [Message.user("go")]
    for n in range(4):
        messages.append(Message.assistant([ToolUseBlock(f"t{n}", "Read", {"file_path": f"f{n}"})]))
        messages.append(Message("user", (ToolResultBlock(f"t{n}", f"body {n}"),)))
    result = ClearToolInputs(1)(messages)
    inputs = [u.input for m in result.messages for u in m.tool_uses]
    assert inputs == [{}, {}, {}, {"file_path": "f3"}]
    assert validate(result.messages) == [] and result.report.applied
    assert result.report.tokens_after < result.report.tokens_before
    only_bash = ClearToolInputs(0, tools=["Bash"])(messages)
    assert not only_bash.report.applied  # no Bash call to clear


def test_results_the_model_has_not_read_yet_are_never_cleared() -> None:
    # Two reads answered, then one turn of five parallel commands whose results are the last
    # message: the model has not seen them, so keeping the latest three must not clear the
    # other two of that batch, only the results of the earlier turn.
    body = "output line\n" * 400
    batch = [ToolUseBlock(f"toolu_b{n}", "Bash", {"command": f"make t{n}"}) for n in range(5)]
    messages = [
        Message.user("Please build every target"),
        Message("assistant", (ToolUseBlock("toolu_a0", "Read", {"file_path": "a.py"}),)),
        Message("user", (ToolResultBlock("toolu_a0", body),)),
        Message("assistant", (ToolUseBlock("toolu_a1", "Read", {"file_path": "b.py"}),)),
        Message("user", (ToolResultBlock("toolu_a1", body),)),
        Message("assistant", tuple(batch)),
        Message("user", tuple(ToolResultBlock(use.id, body) for use in batch)),
    ]
    result = MicroCompact(min_saving=0)(messages)
    assert result.applied and validate(result.messages) == []
    cleared = [r.tool_use_id for r in results(result.messages) if r.content == CLEARED_MARKER]
    assert cleared == ["toolu_a0", "toolu_a1"]
    assert result.messages[-1] == messages[-1]
