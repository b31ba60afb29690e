"""What an earlier summary quotes of the assistant only in excerpts (an answer's, the last
message's) is read again by the next summary as the prose it was: its decisions and findings are
listed once, never twice, and summary after summary of the same messages does not grow."""

from __future__ import annotations

from conftest import summary_message

from contextwarden.model import Message
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer, extract_facts
from contextwarden.summarizers.carry import (
    DECISION_PREFIX,
    carried_decisions,
    carried_excerpts,
)
from contextwarden.summarizers.sections import OMISSION_NOTE
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()
CAUSE = "The real problem was the stale lock file left behind by the crashed run."
LIMIT = "`escape` only neutralizes angle brackets; it never touches template braces."
PADDING = " ".join(f"Checked module {i} of the renderer and its tests." for i in range(60))


def conversation() -> list[Message]:
    return [
        Message.user("Find out why the second deploy hangs."),
        Message.assistant(f"{LIMIT} {PADDING} Rebuilt the lock handling."),  # an answer
        Message.user("And the hang?"),
        Message.assistant(f"Found it.\n\n{CAUSE}\n\n{PADDING}"),  # the last message
    ]


def later(summary: str) -> list[Message]:
    return [
        summary_message(summary),
        Message.user("Now write the release note."),
        Message.assistant("Wrote the release note."),
    ]


def test_the_excerpts_are_read_back_without_indent_gap_or_omission_note() -> None:
    short = StructuredPolicy(current_work_tokens=200)
    first = StructuredSummarizer(short).summarize(conversation()).text
    pieces = carried_excerpts(first)
    answer_head = next(p for p in pieces if p.startswith(LIMIT))
    assert "\u2026" not in answer_head  # head and tail of an answer apart
    last = pieces[-1]
    assert last.startswith("Found it.\n\n" + CAUSE)  # lines as they were, not indented
    assert "characters omitted" in first  # section 8 left some out, and said so
    note = OMISSION_NOTE.split("}", 1)[1].rstrip("]")
    assert note not in last  # the note is not the assistant's prose
    assert carried_excerpts("1. Primary Request and Intent:\n(none)") == ()


def test_a_decision_held_only_in_an_excerpt_is_listed_by_the_next_summary() -> None:
    first = StructuredSummarizer().summarize(conversation()).text
    assert CAUSE in first and CAUSE not in carried_decisions(first)  # only section 8 quotes it
    second = StructuredSummarizer().summarize(later(first)).text
    assert f"{DECISION_PREFIX}{CAUSE}" in second
    assert second.count(CAUSE) == 1
    assert second.count(LIMIT) == 1


def test_a_line_already_carried_is_not_read_again_from_an_excerpt() -> None:
    first = StructuredSummarizer().summarize(conversation()).text
    second = StructuredSummarizer().summarize(later(first)).text
    decisions = [text for _, text in extract_facts(later(second)).decisions]
    assert decisions.count(CAUSE) == 1


def test_summary_after_summary_of_the_same_messages_does_not_grow() -> None:
    summarizer = StructuredSummarizer(StructuredPolicy(context_window=40_000))
    summary = summarizer.summarize(conversation())
    sizes = []
    for _ in range(5):
        summary = summarizer.summarize(later(summary.text))
        sizes.append(COUNTER.count_text(summary.sections[5]))  # each round adds a user message
        assert summary.text.count(CAUSE) == 1
    assert sizes[-1] == sizes[-2] == sizes[-3]
