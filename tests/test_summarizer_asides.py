"""Decisions in the assistant's reasoning and in a sub-agent's report (``summarizers.asides``):
only the lines their author labels as the cause or the choice are kept.

The report is in the shape Claude Code writes a background agent's notification in its session
files (``<task-notification>`` with ``<status>``, ``<summary>`` and ``<result>``); its content and
the reasoning are invented.
"""

from __future__ import annotations

from contextwarden.model import Message, TextBlock, ThinkingBlock
from contextwarden.summarizers.facts import extract_facts

ROOT_CAUSE = (
    "**Root cause:** `isZero` returns `false` for every bool kind, so the override's value is "
    "always copied."
)
STRATEGY = "**Execution Strategy:** one agent, tasks in order (only two of them could overlap)."
UNLABELLED = "The hooks run in migration mode because an earlier commit-msg hook was there."


def notification(result: str) -> str:
    return (
        "<task-notification>\n<task-id>a49aa</task-id>\n<status>completed</status>\n"
        '<summary>Agent "Analyze the merge bug" finished</summary>\n'
        f"<result>Here is the report.\n\n{result}</result>\n</task-notification>"
    )


def decisions_of(*messages: Message) -> list[str]:
    return [text for _, text in extract_facts(messages).decisions]


def test_a_labelled_line_of_a_sub_agent_report_is_a_decision() -> None:
    report = Message("user", (TextBlock(notification(f"{ROOT_CAUSE}\n\n{UNLABELLED}")),))
    found = decisions_of(Message.user("Find out why the merge drops fields."), report)
    assert ROOT_CAUSE in found
    assert UNLABELLED not in found  # a report's unlabelled reasons would crowd the summary


def test_a_labelled_line_the_person_typed_is_not_a_report() -> None:
    assert decisions_of(Message.user(f"Look at this:\n{ROOT_CAUSE}")) == []


def test_a_labelled_line_of_the_reasoning_is_a_decision() -> None:
    reasoning = f"Tasks 3 and 4 could run together.\n\n{STRATEGY}\n\n{UNLABELLED}"
    thinking = ThinkingBlock(reasoning, "signature")
    reply = Message("assistant", (thinking, TextBlock("Starting with task 1.")))
    found = decisions_of(Message.user("Run the plan."), reply)
    assert STRATEGY in found
    assert UNLABELLED not in found
