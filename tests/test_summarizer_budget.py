"""The offline summary stays within its budget: explicit or derived, over generated
conversations; only when what is never dropped exceeds it is it longer, and then it is exactly
that (``sections.fit``)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer
from contextwarden.summarizers.carry import DECISIONS_LABEL
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.sections import Item, fit, render
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.strategies import conversations

COUNTER = HeuristicCounter()
COMMANDS_LABEL = "Commands run (oldest first; exit status where the tool showed it):"
LONG_COMMAND = "pytest tests/test_parser.py -x -q --maxfail=1 -k 'tokenize or parse or render'"
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _within_or_floor(summarizer: StructuredSummarizer, messages: list[Message]) -> int:
    """Checks the promise of ``layout`` and ``fit`` for ``messages``; the tokens fitted to."""
    summary = summarizer.summarize(messages)
    sections, limit = summarizer.layout(extract_facts(messages))
    tokens = COUNTER.count_text(summary.text)
    assert tokens <= limit or dict(summary.sections) == fit(sections, 0, COUNTER)
    return limit


@SLOW
@given(conversations(), st.integers(1, 3_000))
def test_a_summary_fits_an_explicit_budget_or_is_what_is_never_dropped(
    messages: list[Message], budget: int
) -> None:
    summarizer = StructuredSummarizer(budget_tokens=budget)
    assert _within_or_floor(summarizer, messages) <= budget


@SLOW
@given(conversations(), st.integers(1_000, 30_000))
def test_a_summary_fits_a_derived_budget_or_is_what_is_never_dropped(
    messages: list[Message], window: int
) -> None:
    policy = StructuredPolicy(context_window=window, min_budget_tokens=0)
    summarizer = StructuredSummarizer(policy)
    user_tokens = sum(COUNTER.count_text(m.text) for m in extract_facts(messages).user_messages)
    grown = max(policy.budget_for(user_tokens), int(window * policy.carry_ceiling_ratio))
    assert _within_or_floor(summarizer, messages) <= grown


_ranks = st.none() | st.tuples(st.integers(0, 8), st.integers(0, 5))
_items = st.lists(
    st.builds(Item, st.sampled_from(["- a line", "- a longer line of words", "x " * 30]), _ranks)
    | st.builds(Item, st.sampled_from(["Label:", "Another label:"]), label=st.just(True)),
    max_size=8,
)


@given(st.dictionaries(st.integers(1, 9), _items), st.integers(0, 400))
def test_fit_is_within_budget_or_keeps_only_what_is_never_dropped(
    sections: dict[int, list[Item]], budget: int
) -> None:
    bodies = fit(sections, budget, COUNTER)
    assert COUNTER.count_text(render(bodies)) <= budget or bodies == fit(sections, 0, COUNTER)


@given(st.dictionaries(st.integers(1, 9), _items), st.integers(0, 400))
def test_a_label_is_written_only_above_a_kept_item_of_its_own(
    sections: dict[int, list[Item]], budget: int
) -> None:
    labels = {item.text for items in sections.values() for item in items if item.label}
    for body in fit(sections, budget, COUNTER).values():
        lines = body.split("\n")
        for line, after in zip(lines, [*lines[1:], None], strict=True):
            if line in labels:
                assert after is not None and after not in labels and not after.startswith("(")


def test_a_label_of_items_all_dropped_is_not_written() -> None:
    """Hypothesis's smallest case: one command, a budget that only what is never dropped fits.
    The label of the commands went with them; the note says what was left out."""
    messages = [
        Message.user("Please fix the failing test in parser.py"),
        Message.assistant([ToolUseBlock("1", "Bash", {"command": LONG_COMMAND})]),
        Message.user([ToolResultBlock("1", "parser.py\ntest_parser.py")]),
        Message.assistant("I chose to rewrite the parser because the tokenizer is wrong."),
        Message.user([TextBlock("Go ahead.")]),
    ]
    whole = StructuredSummarizer(budget_tokens=10_000).summarize(messages).text
    assert COMMANDS_LABEL in whole
    floor = StructuredSummarizer(budget_tokens=1).layout(extract_facts(messages))[0]
    budget = COUNTER.count_text(render(fit(floor, 0, COUNTER)))
    summary = StructuredSummarizer(budget_tokens=budget).summarize(messages).text
    assert COUNTER.count_text(summary) <= budget
    assert COMMANDS_LABEL not in summary
    assert DECISIONS_LABEL not in summary
    assert "1 commands" in summary
