"""Decisions and error messages: the offline summary keeps them, carries them through a second
compaction, spends its budget on them before on copies, and the probes that measure them are
drawn by their own rule."""

from __future__ import annotations

from conftest import summary_message
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.eval.probes import reasoning_probes
from contextwarden.model import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer, extract_facts
from contextwarden.summarizers.carry import (
    DECISION_PREFIX,
    DECISIONS_LABEL,
    carried_decisions,
    carried_errors,
    format_error,
    format_more,
)
from contextwarden.summarizers.failures import failure_lines
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()
DECISION = "I'll keep the SQLite store as the default because it needs no server to run."
CHATTER = "Now reading the next file of the package to see what it holds."
DIAGNOSIS = "Two tests fail; the tokens key is missing."
TEST_OUTPUT = (
    "collected 3 items\n"
    "tests/test_a.py::test_one PASSED\n"
    "tests/test_a.py::test_two FAILED\n"
    "E   KeyError: 'tokens'\n"
    "FAILED tests/test_a.py::test_two - KeyError: 'tokens'\n"
    "ERROR tests/test_b.py - ImportError: cannot import name 'load'\n"
    "Exit code 1"
)


def session(ask: str = "Make the store pluggable.") -> list[Message]:
    return [
        Message.user(ask),
        Message.assistant(
            [TextBlock(f"{CHATTER}\n{DECISION}"), ToolUseBlock("1", "Bash", {"command": "pytest"})]
        ),
        Message.user([ToolResultBlock("1", TEST_OUTPUT, is_error=True)]),
        Message.assistant(DIAGNOSIS),
    ]


def test_decisions_and_further_error_lines_are_facts() -> None:
    facts = extract_facts(session())
    assert [text for _, text in facts.decisions] == [DECISION, DIAGNOSIS]  # not the chatter
    (error,) = facts.errors
    assert error.excerpt == "FAILED tests/test_a.py::test_two - KeyError: 'tokens'"  # marked
    assert error.more[:2] == (
        "tests/test_a.py::test_two FAILED",
        "ERROR tests/test_b.py - ImportError: cannot import name 'load'",
    )
    assert all("PASSED" not in line for line in error.more)


def test_summary_lists_them_and_drops_them_only_at_its_policy() -> None:
    text = StructuredSummarizer().summarize(session()).text
    assert DECISION in text
    assert "  > tests/test_a.py::test_two FAILED" in text
    before = StructuredSummarizer(StructuredPolicy(decisions=False, error_lines=1))
    old = before.summarize(session()).text
    assert DECISION not in old and "test_two FAILED" not in old


def test_a_second_summary_carries_them() -> None:
    summarizer = StructuredSummarizer()
    first = summarizer.summarize(session()).text
    carried = [
        summary_message(first),
        Message.assistant("Continuing."),
        Message.user("Now add PostgreSQL."),
        Message.assistant("Adding it."),
    ]
    second = summarizer.summarize(carried).text
    assert second.count(DECISION) == 1
    assert "  > ERROR tests/test_b.py - ImportError: cannot import name 'load'" in second


def test_copies_of_requests_go_before_decisions_and_the_budget_holds() -> None:
    long_ask = "Make the store pluggable. " + "Details of the plan follow here. " * 150
    messages = session(long_ask)
    for i in range(2, 30):
        said = f"I chose option {i} instead of option {i + 1} because it is simpler to test."
        messages += [Message.user(f"Next step {i}, please."), Message.assistant(said)]
    budget = 1_700  # v9 counts the repeated plan higher: at 1,600 the copies that may not be
    # dropped (sections.fit keeps them over the budget) no longer fit with the rest
    summary = StructuredSummarizer(budget_tokens=budget).summarize(messages)
    assert COUNTER.count_text(summary.text) <= budget
    assert "request excerpts" in summary.sections[1]  # the copy of message #1 went first
    assert "I chose option 29 instead" in summary.text  # the newest decisions stay
    assert "decisions left out" in summary.sections[5]  # the oldest went when needed


def test_microcompact_keeps_the_same_further_lines() -> None:
    call = ToolUseBlock("1", "Bash", {"command": "pytest"})
    result = ToolResultBlock("1", TEST_OUTPUT, is_error=True)
    lines = failure_lines(call, result, 4)
    (error,) = extract_facts(session()).errors
    assert lines == (error.excerpt, *error.more[:3])


def test_reasoning_probes_need_a_choice_and_a_reason_and_a_failure() -> None:
    ok = ToolResultBlock("2", "error handling lives in store.py\nall fine")
    messages = [
        *session(),
        Message.user("Fine."),
        Message.assistant(
            [
                TextBlock("Because it is late, here is a summary. We should test it next week."),
                ToolUseBlock("2", "Bash", {"command": "cat notes"}),
            ]
        ),
        Message.user([ok]),
        Message.assistant("Done."),
    ]
    probes = reasoning_probes(messages)
    decisions = [p.text for p in probes if p.kind == "decision"]
    errors = [p.text for p in probes if p.kind == "error_message"]
    assert decisions == [DECISION]  # the others lack a choice, or a reason, in one sentence
    assert errors == [
        "tests/test_a.py::test_two FAILED",
        "FAILED tests/test_a.py::test_two - KeyError: 'tokens'",
        "ERROR tests/test_b.py - ImportError: cannot import name 'load'",
    ]  # the first three lines with an error word of the failed result; none of the other
    assert all(p.source is not None for p in probes)


_LINE = (
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=60)
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=40, deadline=None)
@given(decided=st.lists(_LINE, max_size=5), more=st.lists(_LINE, max_size=3))
def test_decisions_and_further_lines_read_back_as_written(
    decided: list[str], more: list[str]
) -> None:
    """Whatever the sentences and lines say, a later summary reads back exactly what an earlier
    one listed (the layouts cannot be confused with one another or with a heading)."""
    error = format_error("Bash", "make", "exit code 2", False)
    lines = [f"{DECISION_PREFIX}{d}" for d in decided]
    text = (
        f"4. Errors and Fixes:\n{error}\n{format_more(more)}\n\n"
        f"5. Problem Solving:\n{DECISIONS_LABEL}\n"
        + "\n".join(lines)
        + "\n\n6. All User Messages:\n"
    )
    (carried,) = carried_errors(text)
    assert carried.more == tuple(more) and carried.excerpt == "exit code 2"
    assert carried_decisions(text) == tuple(decided)


def test_a_further_line_a_later_error_shows_again_is_shown_once() -> None:
    build = "Execution failed for task ':app:compileDebugKotlin'."

    def failed(call: str, line: int) -> list[Message]:
        output = (
            f"e: file:///src/Main.kt:{line}:9 Unresolved reference: name{line}\n"
            "> Task :app:compileDebugKotlin FAILED\n"
            f"{build}\n"
            "BUILD FAILED in 2s"
        )
        return [
            Message.assistant([ToolUseBlock(call, "Bash", {"command": "./gradlew build"})]),
            Message.user([ToolResultBlock(call, output, is_error=True)]),
        ]

    messages = [Message.user("Make it build."), *failed("1", 10), *failed("2", 20)]
    facts = extract_facts(messages)
    assert all(build in error.more for error in facts.errors)  # each error has the line
    text = StructuredSummarizer().summarize(messages).text
    assert text.count(f"  > {build}") == 1  # shown once, under the later error
    assert text.index("name10") < text.index("name20") < text.index(f"  > {build}")
