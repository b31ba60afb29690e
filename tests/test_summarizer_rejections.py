"""A tool call the person refused is their decision: the summary keeps it, whatever the budget,
through later compactions, and a later call that succeeds does not turn it into a fixed error."""

from __future__ import annotations

from conftest import summary_message

from contextwarden.model import Message, ToolResultBlock
from contextwarden.model import ToolUseBlock as Use
from contextwarden.summarizers import StructuredSummarizer, extract_facts
from contextwarden.summarizers.carry import REJECTED, carried_errors, format_error
from contextwarden.summarizers.rejections import is_rejection
from contextwarden.summarizers.verify import verify
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()
REFUSED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)


def refused_then_run(fillers: int = 0) -> list[Message]:
    """``git push`` refused by the person, later run again with success; ``fillers`` failures
    fixed later (they compete with the refusal for the summary's budget)."""
    messages = [Message.user("Commit the change.")]
    for n in range(fillers):
        for i, out in enumerate((f"error: target{n} has no rule to build it", "built")):
            use = Use(f"f{n}-{i}", "Bash", {"command": f"make target{n}"})
            messages += [
                Message.assistant([use]),
                Message.user([ToolResultBlock(use.id, out, is_error=i == 0)]),
            ]
    push = Use("p1", "Bash", {"command": "git push origin main"})
    again = Use("p2", "Bash", {"command": "git push origin main"})
    return [
        *messages,
        Message.assistant([push]),
        Message.user([ToolResultBlock("p1", REFUSED, is_error=True)]),
        Message.user("ok, push it now"),
        Message.assistant([again]),
        Message.user([ToolResultBlock("p2", "To github.com:o/r.git\n   1..2  main -> main")]),
        Message.assistant("Pushed."),
    ]


def test_a_refusal_is_recognised_only_from_the_harness_notice_on_an_error_result() -> None:
    assert is_rejection(ToolResultBlock("a", REFUSED, is_error=True))
    assert is_rejection(ToolResultBlock("a", f"Error: {REFUSED}", is_error=True))
    assert is_rejection(ToolResultBlock("a", "Action rejected: not now", is_error=True))
    assert not is_rejection(ToolResultBlock("a", REFUSED, is_error=False))  # quoted in a file
    assert not is_rejection(ToolResultBlock("a", "error: permission denied", is_error=True))


def test_a_refused_call_is_not_fixed_by_a_later_success() -> None:
    (error,) = extract_facts(refused_then_run()).errors
    assert error.rejected and not error.fixed
    assert error.excerpt.startswith("The user doesn't want to proceed")


def test_the_summary_keeps_a_refusal_when_fixed_errors_must_go() -> None:
    messages = refused_then_run(fillers=40)
    summary = StructuredSummarizer(budget_tokens=1_200).summarize(messages)
    errors = summary.sections[4]
    assert "errors fixed later left out by contextwarden" in errors  # the budget was short
    target = "`git push origin main`"
    assert f"- Bash {target}: {REFUSED} — {REJECTED}" in errors


def test_a_second_summary_carries_the_refusal() -> None:
    summarizer = StructuredSummarizer(budget_tokens=1_200)
    first = summarizer.summarize(refused_then_run(fillers=40)).text
    later = [
        summary_message(first),
        Message.assistant("Continuing."),
        Message.user("Now tag the release."),
        Message.assistant("Tagged."),
    ]
    (carried,) = [e for e in extract_facts(later).errors if e.rejected]
    assert carried.excerpt == REFUSED and not carried.fixed
    assert f"{REFUSED} — {REJECTED}" in summarizer.summarize(later).sections[4]


def test_a_refusal_an_older_summary_listed_as_fixed_is_read_as_a_refusal() -> None:
    line = format_error("Bash", "git push origin main", REFUSED, fixed=True)
    (error,) = carried_errors(f"3. Files and Code Sections:\n\n4. Errors and Fixes:\n{line}\n")
    assert error.fixed and not error.rejected  # what the line says
    later = [summary_message(f"4. Errors and Fixes:\n{line}"), Message.assistant("Continuing.")]
    (fact,) = extract_facts(later).errors
    assert fact.rejected and not fact.fixed  # what it was


def test_verification_appends_a_refusal_an_llm_summary_left_out() -> None:
    facts = extract_facts(refused_then_run())
    full, added = verify("1. Primary Request and Intent:\nPush.\n", facts, COUNTER)
    assert f"error {REFUSED}" in added
    assert REFUSED in full


# VS Code's Copilot Chat answers a call the person skipped so, with no error flag; SpecStory
# shows the call's input above it (trimmed from nndeploy/nndeploy's history, Apache-2.0,
# commit 7188da6).
SKIPPED = "The user chose to skip the tool call, they want to proceed without running it"
SKIPPED_STEP = (
    "**Input:**\n- command: `cmake --build build --target nndeploy_plugin_depth`\n"
    f"- goal: `Verify build`\n**Result:**\n```\n{SKIPPED}\n```"
)


def test_a_skip_no_flag_marks_is_a_refusal_not_a_fixed_error() -> None:
    build = Use("b1", "run_in_terminal", {"command": "cmake --build build"})
    again = Use("b2", "run_in_terminal", {"command": "cmake --build build"})
    messages = [
        Message.user("Build the plugin."),
        Message.assistant([build]),
        Message.user([ToolResultBlock("b1", SKIPPED_STEP)]),
        Message.user("go on"),
        Message.assistant([again]),
        Message.user([ToolResultBlock("b2", "[100%] Built target nndeploy_plugin_depth")]),
    ]
    (error,) = extract_facts(messages).errors
    assert error.excerpt == SKIPPED
    assert error.rejected and not error.fixed


def test_a_file_opening_with_a_skip_notice_is_its_contents() -> None:
    read = Use("r1", "Read", {"file_path": "notes.md"})
    messages = [Message.assistant([read]), Message.user([ToolResultBlock("r1", SKIPPED)])]
    assert extract_facts(messages).errors == ()
