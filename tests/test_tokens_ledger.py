"""TokenLedger: cached per-message counts, usage anchors, resets; and usage_total's shapes."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import Usage
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types import CompletionUsage
from openai.types.completion_usage import PromptTokensDetails
from openai.types.responses import ResponseUsage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from contextwarden.model import Message
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.tokens.ledger import TokenLedger, usage_total
from contextwarden.tokens.messages import count_message_with, count_preamble


class CountingCounter:
    """One token per character, and a tally of how often messages were counted."""

    def __init__(self) -> None:
        self.message_calls = 0

    def count_text(self, text: str) -> int:
        return len(text)

    def count_message(self, message: Message) -> int:
        self.message_calls += 1
        return count_message_with(self.count_text, message)


def user(text: str) -> Message:
    return Message.user(text)


def test_append_and_total_without_anchor() -> None:
    counter = CountingCounter()
    ledger = TokenLedger(counter)
    ledger.set_preamble("system prompt", None)
    messages = [user("a" * 10), Message.assistant("b" * 20), user("c" * 5)]
    for message in messages:
        ledger.append(message)
    expected = count_preamble(counter.count_text, "system prompt", None) + sum(
        counter.count_message(m) for m in messages
    )
    assert ledger.total() == ledger.estimate() == expected
    assert not ledger.anchored
    assert ledger.count(0) == counter.count_message(messages[0])
    assert ledger.count(-1) == counter.count_message(messages[-1])
    assert len(ledger) == 3


def test_each_message_is_counted_once() -> None:
    counter = CountingCounter()
    ledger = TokenLedger(counter)
    for i in range(1_000):
        ledger.append(user(f"message {i}"))
        ledger.total()
        ledger.estimate()
    assert counter.message_calls == 1_000


def test_anchor_then_estimate_what_follows() -> None:
    ledger = TokenLedger(CountingCounter())
    ledger.append(user("x" * 100))
    ledger.append(Message.assistant("y" * 50))
    ledger.anchor(1_234)
    assert ledger.anchored
    assert ledger.total() == 1_234
    later = user("z" * 30)
    ledger.append(later)
    assert ledger.total() == 1_234 + ledger.count(-1)
    assert ledger.estimate() != ledger.total()
    ledger.anchor(2_000)  # a newer response replaces the older anchor
    assert ledger.total() == 2_000


def test_reset_drops_anchor_and_reuses_counts() -> None:
    counter = CountingCounter()
    ledger = TokenLedger(counter)
    kept = [user("keep me"), Message.assistant("and me")]
    for message in [*kept, user("dropped")]:
        ledger.append(message)
    ledger.anchor(999)
    calls = counter.message_calls
    summary = user("summary of the dropped part")
    ledger.reset([summary, *kept])
    assert not ledger.anchored
    assert counter.message_calls == calls + 1  # only the new summary was counted
    assert (
        ledger.total()
        == ledger.estimate()
        == sum(count_message_with(len, m) for m in [summary, *kept])
    )


def test_reset_recounts_equal_but_distinct_messages() -> None:
    counter = CountingCounter()
    ledger = TokenLedger(counter)
    original = user("same text")
    ledger.append(original)
    twin = user("same text")
    assert twin == original and twin is not original
    calls = counter.message_calls
    ledger.reset([twin])
    assert counter.message_calls == calls + 1


def test_replace_last_before_and_after_anchor() -> None:
    ledger = TokenLedger(CountingCounter())
    ledger.append(Message.assistant("part one"))
    ledger.anchor(500)
    ledger.replace_last(Message.assistant("part one, part two"))  # covered by the anchor
    assert ledger.total() == 500 + len(", part two")
    ledger.append(user("next"))
    ledger.replace_last(user("next, longer"))  # after the anchor
    assert ledger.total() == 500 + len(", part two") + ledger.count(-1)
    with pytest.raises(IndexError):
        TokenLedger(CountingCounter()).replace_last(user("x"))


def test_preamble_change_moves_the_anchor() -> None:
    ledger = TokenLedger(CountingCounter())
    ledger.set_preamble("short", None)
    ledger.append(user("hello"))
    ledger.anchor(1_000)
    ledger.set_preamble("a much longer system prompt", None)
    assert ledger.total() == 1_000 + len("a much longer system prompt") - len("short")
    assert ledger.preamble == count_preamble(len, "a much longer system prompt", None)


def test_negative_anchor_is_refused() -> None:
    with pytest.raises(ValueError):
        TokenLedger(CountingCounter()).anchor(-1)


def test_works_with_real_counter() -> None:
    ledger = TokenLedger(HeuristicCounter())
    ledger.set_preamble("You are helpful.", [{"name": "bash", "input_schema": {}}])
    ledger.append(user("Please list the files."))
    assert ledger.total() > ledger.preamble > 0


operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.text(max_size=40)),
        st.tuples(st.just("anchor"), st.integers(0, 10_000)),
        st.tuples(st.just("replace_last"), st.text(max_size=40)),
        st.tuples(st.just("preamble"), st.text(max_size=40)),
        st.tuples(st.just("reset"), st.integers(0, 5)),
    ),
    max_size=40,
)


@given(operations)
@settings(max_examples=200, deadline=None)
def test_ledger_matches_a_recount(ops: list[tuple[str, Any]]) -> None:
    """estimate() always equals a from-scratch count; an anchor's offset survives every change
    except reset and a newer anchor."""
    ledger = TokenLedger(CountingCounter())
    view: list[Message] = []
    system = ""
    offset: int | None = None
    for op, arg in ops:
        if op == "append":
            view.append(user(arg))
            ledger.append(view[-1])
        elif op == "anchor":
            ledger.anchor(arg)
            offset = arg - ledger.estimate()
        elif op == "replace_last" and view:
            view[-1] = user(arg)
            ledger.replace_last(view[-1])
        elif op == "preamble":
            system = arg
            ledger.set_preamble(system, None)
        elif op == "reset":
            view = [*view[arg:], user("summary")]
            ledger.reset(view)
            offset = None
        recount = count_preamble(len, system, None) + sum(count_message_with(len, m) for m in view)
        assert ledger.estimate() == recount
        assert ledger.anchored == (offset is not None)
        assert ledger.total() == recount + (offset or 0)


# ----------------------------------------------------------------------------- usage_total
def test_usage_total_anthropic_sdk_object() -> None:
    usage = Usage(
        input_tokens=10,
        output_tokens=5,
        cache_read_input_tokens=1_000,
        cache_creation_input_tokens=200,
    )
    assert usage_total(usage) == 1_215


def test_usage_total_anthropic_dict_with_missing_and_none() -> None:
    assert usage_total({"input_tokens": 10, "output_tokens": 5}) == 15
    assert usage_total({"input_tokens": 10, "cache_read_input_tokens": None}) == 10
    assert usage_total(Usage(input_tokens=3, output_tokens=4)) == 7


def test_usage_total_openai_chat() -> None:
    usage = CompletionUsage(
        prompt_tokens=100,
        completion_tokens=20,
        total_tokens=120,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=80),  # part of prompt_tokens
    )
    assert usage_total(usage) == 120
    assert usage_total({"prompt_tokens": 7, "completion_tokens": None}) == 7


def test_usage_total_openai_responses() -> None:
    usage = ResponseUsage(
        input_tokens=50,
        output_tokens=10,
        total_tokens=60,
        input_tokens_details=InputTokensDetails(cached_tokens=40, cache_write_tokens=5),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=3),
    )
    assert usage_total(usage) == 60


def test_usage_total_nothing_usable() -> None:
    assert usage_total(None) == 0
    assert usage_total({}) == 0
    assert usage_total({"input_tokens": True, "output_tokens": "5"}) == 0
    assert usage_total(object()) == 0
