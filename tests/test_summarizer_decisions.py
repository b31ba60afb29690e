"""Decisions in the assistant's words: a reason, a choice, a diagnosis or a plan's step, in the
languages agents write; a short line whole, code only by its comments; diagnoses go first."""

from __future__ import annotations

import pytest

from contextwarden.model import Message
from contextwarden.summarizers import StructuredSummarizer
from contextwarden.summarizers.carry import DECISION_PREFIX
from contextwarden.summarizers.decisions import PLAN_LINES, decisions, reasoned
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()


@pytest.mark.parametrize(
    "line",
    [
        "I'll keep the SQLite store as the default because it needs no server to run.",
        "I see the issue - I accidentally duplicated a catch block.",
        "The real problem is the stale cache entry, not the network.",
        "Оставлю SQLite по умолчанию, потому что ему не нужен сервер.",
        "Usaré SQLite en lugar de PostgreSQL porque no necesita servidor.",
        "Je garde SQLite parce que la base ne demande aucun serveur.",
        "Ich nehme SQLite statt PostgreSQL, weil es keinen Server braucht.",
        "我们保留 SQLite\uff0c因为它不需要服务器。",
        "サーバーが不要なため、SQLite をそのまま使います。",
    ],
)
def test_a_reason_a_choice_or_a_diagnosis_is_a_decision(line: str) -> None:
    assert decisions(f"Reading the file now.\n{line}") == [line]


def test_chatter_is_not_a_decision() -> None:
    assert decisions("Now let me read the remaining key files.\nLet me run the tests.") == []


def test_a_short_line_is_kept_whole_and_a_long_one_by_its_sentences() -> None:
    short = "Same tab issue. My edit strings were using spaces."
    assert decisions(short) == [short]
    filler = "This sentence only describes what was read in the file, nothing more. " * 3
    long = f"{filler}The cause is the stale lock file the crashed run left behind."
    assert decisions(long) == ["The cause is the stale lock file the crashed run left behind."]


def test_code_is_read_only_by_its_comments() -> None:
    text = (
        "```bash\n"
        "# Let's find the line number again since I might have shifted things\n"
        'grep -n "because" src/app.py  # the code itself is not a decision\n'
        "```"
    )
    assert decisions(text) == [
        "# Let's find the line number again since I might have shifted things"
    ]


def test_the_steps_after_a_plan_are_decisions() -> None:
    steps = [f"**Step {i}:** move the token store behind the new interface {i}" for i in range(8)]
    found = decisions("Here's the plan:\n\n" + "\n\n".join(steps))
    assert found == steps[:PLAN_LINES]


def test_diagnoses_leave_a_short_summary_before_reasons() -> None:
    reason = "I'll keep the SQLite store as the default because it needs no server to run."
    diagnosis = "The real problem was the stale lock file left by the crashed run."
    assert reasoned(reason) and not reasoned(diagnosis)
    messages = [Message.user("Make the store pluggable.")]
    messages += [Message.assistant(reason), Message.user("Go on."), Message.assistant(diagnosis)]
    messages += [Message.user("And then?"), Message.assistant("Done.")]
    full = StructuredSummarizer().summarize(messages).text
    assert f"{DECISION_PREFIX}{diagnosis}" in full and f"{DECISION_PREFIX}{reason}" in full
    for budget in range(COUNTER.count_text(full), 0, -5):
        text = StructuredSummarizer(budget_tokens=budget).summarize(messages).text
        if f"{DECISION_PREFIX}{diagnosis}" not in text:  # the newer line, yet it went first
            assert f"{DECISION_PREFIX}{reason}" in text
            return
    pytest.fail("no budget left the diagnosis out")
