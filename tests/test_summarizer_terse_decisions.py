"""Terse analysis states its findings without a signal word: a negation set against a clause, a
verdict on an option, a quantity measured before and after, a line labelled as the fix or the
cause, the lines under a heading naming one; a subject-less sentence and a verbless conclusion
stay with the sentence before them. Chatter, feature lists and ranges are none of these."""

from __future__ import annotations

import pytest

from contextwarden.summarizers.decisions import PLAN_LINES, decisions, standing

FILLER = "The module sits next to the renderer and was last touched two releases ago."
"""A long line is read by its sentences; this one says nothing a decision would."""


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        # a negation or a limit set against another clause
        ("`retry` only wraps the request; it never retries the stream.", 1),
        ("Setting `lazy: true` doesn't make the import faster — it only defers it.", 1),
        ("A gradient is N escape codes — cannot pass through `toAnsi` as one.", 1),
        # a verdict on an option or a result
        ("Thought through option B (detect and chain) — it's not fixable that way.", 1),
        ("A second global hook binding can't work with one prompt function.", 1),
        ("The Windows spike works end-to-end (detect, type, assert, clean exit).", 1),
        # a quantity measured before and after
        ("The socket fix took the Linux suite from a 47s hang to a 2s pass.", 1),
        ("Peak memory of the indexer 1.2GB → 300MB once the cache is shared.", 1),
        # labelled by its author
        ("**Fix:** a new `order` option that reorders the list; unknown entries stay last.", 2),
        ("Root cause: the pool is closed before the last write is flushed.", 2),
        # … its label qualified by a word, as yutakobayashidev/repiq's Claude Code session
        # states its plan's choice (MIT)
        (
            "**Execution Strategy:** Sequential single agent (tasks are mainly sequential, "
            "#3/#4 parallelism is minimal benefit).",
            2,
        ),
    ],
)
def test_a_terse_finding_is_a_decision(line: str, rank: int) -> None:
    assert decisions(f"Reading the file now.\n{line}") == [line]
    assert standing(line) == rank


@pytest.mark.parametrize(
    "text",
    [
        "Certainly! I'll add the export button and the settings page for you.",
        "## Features\n\n- Export to CSV and JSON\n- Dark mode support everywhere\n"
        "- Keyboard shortcuts for every single action",
        "I'm going to validate it as an integer from 1 to 50 in the loader.",
        "I haven't run the whole suite yet — let me do that before the commit.",
        "The tests have not finished; I'll check the report when they are done.",
        "Everything works now and the build is green on all three platforms.",
        "## Summary of the changes\n\nAdded the button to the toolbar and its tooltip text.",
    ],
)
def test_chatter_a_feature_list_and_a_range_are_no_decision(text: str) -> None:
    assert decisions(text) == []


def test_the_lines_under_a_heading_naming_a_cause_or_a_choice_are_decisions() -> None:
    under = [
        f"`writer.Colors{i}` is a package-level slice that each render appends to."
        for i in range(6)
    ]
    for heading in ("## Root cause", "**Root cause**", "### Decided approach", "## Why it hangs"):
        assert decisions(f"{heading}\n\n" + "\n\n".join(under)) == under[:PLAN_LINES]
    assert decisions("## Notes on the docs\n\n" + "\n\n".join(under)) == []
    assert standing(under[0]) == 0  # no signal of its own: the first a short budget drops


def test_a_sentence_without_a_subject_stays_with_the_one_that_names_it() -> None:
    said = "Gradient = N codes — cannot flow through `ToAnsi`."
    must = "Must be handled in the writer, not the color resolver."
    assert decisions(f"{FILLER} {said} {must}") == [f"{said} {must}"]


def test_a_verbless_conclusion_stays_with_the_sentence_before_it() -> None:
    grows = "Each render grows `ParentColors`; it is never cleared between renders."
    assert decisions(f"{FILLER} {grows} Quadratic over session length.") == [
        f"{grows} Quadratic over session length."
    ]
    assert decisions(f"{FILLER} Quadratic over session length.") == []  # nothing to join
    # the next step the assistant announces is not a conclusion of what it found
    assert decisions(f"{FILLER} {grows} Let me fix that.") == [grows]


def test_a_heading_in_a_plan_names_its_steps_and_is_not_one() -> None:
    first = "- Move the token store behind one interface for every issuer."
    heading = "### Issuer adapters and their authentication"
    then = "- Update every adapter fixture for the verified issuer field."
    assert decisions(f"## Implementation plan\n\n{first}\n{heading}\n{then}") == [first, then]


def test_a_verdict_too_short_alone_stays_with_the_reason_after_it() -> None:
    # A Cursor session (SpecStory export): the verdict, then the approach it rests on.
    verdict = "I was incorrect in my assessment."
    reason = (
        "Looking at how mocking is done in `startSession.test.ts`, I can see a much simpler"
        " approach than the one we were trying with `workspace.test.ts`."
    )
    assert decisions(f"{verdict} {reason}") == [f"{verdict} {reason}"]
    # not before what the assistant does next: a verdict is not a step's reason
    step = (
        "Let me branch and first prove the bug — the DoD explicitly requires confirming the"
        " extended prediction fails before the fix, rather than after it."
    )
    assert decisions(f"Both DoDs are precise. {step}") == [step]
