"""Thought summaries in a Gemini CLI ``/chat share`` export: a resumed session's model turns open
with the summaries the CLI rebuilt as ``**<subject>** <description>`` text parts (its
``sessionUtils``), written with nothing between them and the reply. Each is found where it was
joined, so the reply stays the reply; nothing is lost or added."""

from __future__ import annotations

import pytest

from contextwarden.formats.gemini_cli_thoughts import thought_summaries


def _thought(subject: str, description: str) -> str:
    """A summary part's text as the CLI rebuilds it from a session record's ``thoughts``."""
    return f"**{subject}** {description}"


FIRST = _thought("Reading the Loop", "I'm checking how each chunk is read and freed.")
SECOND = _thought("Finding the Copy", "The slice keeps the whole buffer alive, so I'll copy it.")


def test_summaries_glued_to_each_other_and_to_the_reply_are_told_apart() -> None:
    reply = "I have added `.copy()` to both appends.\n\nRun it again to check the memory."
    found = thought_summaries(FIRST + SECOND + reply)
    assert (found.summaries, found.rest, found.glued) == ((FIRST, SECOND), reply, True)


def test_summaries_before_a_call_run_to_the_call() -> None:
    found = thought_summaries(FIRST + SECOND)
    assert (found.summaries, found.rest, found.glued) == ((FIRST, SECOND), "", True)


@pytest.mark.parametrize(
    "description",
    [
        "It subclasses `nn.Module` and holds no state.",  # a sentence end inside a code span
        "The 8.6-hour file decodes in chunks.",  # a decimal number
        "It reads config.json and stops.",  # a file name
        "Reading the log.\n\n**Checking the Swap**\n\nSwap grows with every chunk.",  # a heading
    ],
)
def test_a_summary_is_not_cut_inside_itself(description: str) -> None:
    text = _thought("Looking", description)
    found = thought_summaries(text)
    assert (found.summaries, found.rest, found.glued) == ((text,), "", False)


@pytest.mark.parametrize(
    "reply",
    [
        "\n[Note] The run took 25 minutes.",  # a part that opens on a new line
        "\n\n### What changed\n- the copy",  # a Markdown heading
        "\n\n1. First, the copy.",  # a list
    ],
)
def test_a_reply_opening_on_a_new_line_or_with_a_markdown_block_is_the_reply(reply: str) -> None:
    found = thought_summaries(FIRST + reply)
    assert (found.summaries, found.rest, found.glued) == ((FIRST,), reply, False)


@pytest.mark.parametrize(
    "text",
    [
        "I changed it. **Why** the copy matters: views keep buffers.",  # bold inside a reply
        "**Done**: the copy is added.",  # bold not followed by a space
        "## MODEL text",
    ],
)
def test_a_text_not_opening_with_a_summary_is_all_reply(text: str) -> None:
    found = thought_summaries(text)
    assert (found.summaries, found.rest, found.glued) == ((), text, False)


def test_a_bold_phrase_after_a_sentence_the_reply_began_is_not_a_summary() -> None:
    reply = "I will copy it.\n\n**Next** step: run it."
    assert thought_summaries(FIRST + reply).summaries == (FIRST,)


def test_one_summary_glued_to_its_reply_shows_the_cli_joined_them() -> None:
    found = thought_summaries(FIRST + "It is fixed.")
    assert (found.summaries, found.rest, found.glued) == ((FIRST,), "It is fixed.", True)
