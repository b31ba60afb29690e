"""Summarize: the prefix becomes one summary user message; the recent messages stay verbatim."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from contextwarden.compaction import CompactionContext, MicroCompact, Summarize
from contextwarden.compaction.cap import uncut
from contextwarden.compaction.cuts import SUMMARY_KEY, first_user_blocks
from contextwarden.compaction.observations import original_id
from contextwarden.compaction.summarize import CONTINUATION_NOTE, add_to_summary
from contextwarden.errors import SummarizerError
from contextwarden.model import Message, TextBlock
from contextwarden.policy import CLEARED_MARKER, ContextPolicy
from contextwarden.rules import validate
from contextwarden.summarizers.base import Summary
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.typed import user_messages
from tests.strategies import CharCounter, FailingSummarizer, FakeSummarizer, chat, tool_turns

CTX = CompactionContext(CharCounter(), clock=lambda: 1_234.0)


def test_summary_message_then_recent_messages_verbatim() -> None:
    messages = tool_turns(20, size=1_000)
    summarizer = FakeSummarizer("the agent read twenty files")
    result = Summarize(summarizer, keep_tokens=5_000)(messages, CTX)
    after = result.messages
    assert result.applied and validate(after) == []
    lead = after[0]
    assert lead.content[0] == messages[0].content[0]  # the first user message, verbatim
    note = lead.content[1]
    assert isinstance(note, TextBlock)
    assert note.text.startswith(CONTINUATION_NOTE + "\n\n<summary>\nthe agent read twenty files")
    assert lead.meta.extra[SUMMARY_KEY] is True and lead.meta.timestamp == 1_234.0
    cut = result.report.details["cut"]
    assert list(after[1:]) == messages[cut:]
    assert sum(CTX.count(m) for m in messages[cut:]) <= 5_000
    assert result.summary == "the agent read twenty files"
    assert result.report.tokens_after == sum(CharCounter().count_message(m) for m in after)


def test_summarizer_gets_what_is_replaced_and_the_instructions() -> None:
    messages = tool_turns(20, size=1_000)
    summarizer = FakeSummarizer()
    result = Summarize(summarizer, instructions="keep the API decisions", keep_tokens=5_000)(
        messages, CTX
    )
    ((given, instructions),) = summarizer.calls
    assert instructions == "keep the API decisions"
    assert list(given) == messages[1 : result.report.details["cut"]]  # not the kept first message


def test_tail_starting_with_a_user_message_is_merged_after_the_summary() -> None:
    messages = chat(40, size=200)
    result = Summarize(FakeSummarizer("short"), keep_tokens=1_000)(messages, CTX)
    after = result.messages
    assert validate(after) == [] and after[0].role == "user"
    cut = result.report.details["cut"]
    assert messages[cut].role == "user"
    assert after[0].content[-1] == messages[cut].content[0]
    hooked = add_to_summary(result, messages, [TextBlock("hook output")], CTX)
    texts = [b.text for b in hooked.messages[0].content if isinstance(b, TextBlock)]
    assert texts.index("hook output") == 2  # after first message and summary, before the turn
    assert hooked.report.tokens_after == result.report.tokens_after + len("hook output")


def test_second_summary_replaces_the_first_and_keeps_one_first_message() -> None:
    messages = tool_turns(20, size=1_000)
    summarizer = FakeSummarizer("summary one")
    once = Summarize(summarizer, keep_tokens=5_000)(messages, CTX).messages
    more = list(once) + tool_turns(40, size=1_000)[41:]
    twice = Summarize(FakeSummarizer("summary two"), keep_tokens=5_000)(more, CTX)
    assert twice.applied and validate(twice.messages) == []
    lead_text = " ".join(b.text for b in twice.messages[0].content if isinstance(b, TextBlock))
    assert "summary two" in lead_text and "summary one" not in lead_text
    assert first_user_blocks(twice.messages) == messages[0].content


def test_attach_adds_blocks_given_the_kept_tail() -> None:
    seen: list[int] = []

    def attach(tail: Sequence[Message]) -> list[TextBlock]:
        seen.append(len(tail))
        return [TextBlock("Contents of a.py (re-read after compaction):\n\nprint(1)")]

    result = Summarize(FakeSummarizer("s"), keep_tokens=5_000, attach=attach)(
        tool_turns(20, size=1_000), CTX
    )
    assert seen == [result.report.details["kept"]]
    assert any(
        "re-read after compaction" in b.text
        for b in result.messages[0].content
        if isinstance(b, TextBlock)
    )


def test_summary_larger_than_what_it_replaces_is_not_applied() -> None:
    messages = tool_turns(4, size=100)
    result = Summarize(FakeSummarizer("y" * 50_000), keep_tokens=300)(messages, CTX)
    assert not result.applied and "would not save tokens" in result.report.description
    assert result.report.details["summarizer_called"] is True
    assert result.messages == tuple(messages)


def test_failures_raise_summarizer_error() -> None:
    messages = tool_turns(20, size=1_000)
    with pytest.raises(SummarizerError, match="test failure 1"):
        Summarize(FailingSummarizer(), keep_tokens=5_000)(messages, CTX)

    class Crashing:
        def summarize(
            self, messages: Sequence[Message], *, instructions: str | None = None
        ) -> Summary:
            raise RuntimeError("connection reset")

    with pytest.raises(
        SummarizerError, match="Crashing failed: RuntimeError: connection reset"
    ) as info:
        Summarize(Crashing(), keep_tokens=5_000)(messages, CTX)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(SummarizerError, match="empty summary"):
        Summarize(FakeSummarizer("   "), keep_tokens=5_000)(messages, CTX)


def test_nothing_to_summarize_when_everything_fits_the_kept_budget() -> None:
    summarizer = FakeSummarizer()
    result = Summarize(summarizer, keep_tokens=1_000_000)(tool_turns(5), CTX)
    assert not result.applied and "nothing to summarize" in result.report.description
    assert summarizer.calls == []


def test_the_summarizer_reads_results_as_first_added_never_markers() -> None:
    messages = tool_turns(20, size=1_000)
    originals = {r.tool_use_id: r for m in messages for r in m.tool_results}
    cleared = MicroCompact(min_saving=0)(messages, CTX).messages
    assert sum(r.text == CLEARED_MARKER for m in cleared for r in m.tool_results) == 17
    summarizer = FakeSummarizer()
    ctx = replace(CTX, originals=originals.get)
    assert Summarize(summarizer, keep_tokens=300)(cleared, ctx).applied
    ((given, _),) = summarizer.calls
    seen = [r for m in given for r in m.tool_results]
    assert seen and all(r is originals[r.tool_use_id] for r in seen)
    assert all(r.text.startswith("result ") for r in seen)
    blind = FakeSummarizer()  # without originals the summarizer sees what the view holds
    Summarize(blind, keep_tokens=300)(cleared, CTX)
    assert any(r.text == CLEARED_MARKER for m in blind.calls[0][0] for r in m.tool_results)


def test_a_turn_merged_into_a_summary_is_quoted_by_the_next_one() -> None:
    def turns(first: int, count: int) -> list[Message]:
        return [
            m
            for n in range(first, first + count)
            for m in (Message.user(f"request {n:03d}"), Message.assistant("x" * 2_000))
        ]

    summarizer = StructuredSummarizer(counter=CharCounter(), budget_tokens=100_000)
    once = Summarize(summarizer, keep_tokens=5_000)(turns(0, 20), CTX)
    merged = once.messages[0].content[-1]  # the kept tail began with a typed user message
    assert isinstance(merged, TextBlock) and merged.text.startswith("request 0")
    twice = Summarize(summarizer, keep_tokens=5_000)([*once.messages, *turns(20, 20)], CTX)
    assert twice.applied
    summary = twice.messages[0].content[1]
    assert isinstance(summary, TextBlock) and f"\n{merged.text}\n" in summary.text  # verbatim
    typed = [m.text for m in user_messages(twice.messages)]
    assert typed == sorted(set(typed)) and merged.text in typed  # each once, in order


def test_without_a_summarizer_the_offline_default_writes_the_summary() -> None:
    messages = tool_turns(20, size=1_000)
    result = Summarize(keep_tokens=5_000)(messages, CTX)
    offline = StructuredSummarizer.for_window(CTX.policy.context_window)
    cut = result.report.details["cut"]
    assert result.applied and validate(result.messages) == []
    assert result.summary == offline.summarize(messages[1:cut]).text
    assert "`src/file0.py` — read" in (result.summary or "")


def test_a_first_message_larger_than_a_message_may_be_is_carried_cut_with_its_id() -> None:
    """Kept whole, a 22,000-token brief pasted as the first message filled a 40,000-token
    window after every summary, and the session was summarized on 145 of its 1,124 requests;
    carried by the summary message it is cut like an oversize text of the latest turn, the
    note naming the id that brings the original back."""
    brief = "Rebuild the site. " + "".join(f"Requirement {i}: a page.\n" for i in range(3_000))
    messages = [Message.user(brief), *tool_turns(20, size=1_000)[1:]]
    ctx = CompactionContext(CharCounter(), policy=ContextPolicy(context_window=40_000))
    limit = ctx.policy.message_result_tokens
    result = Summarize(FakeSummarizer("short"), keep_tokens=5_000)(messages, ctx)
    assert result.applied and validate(result.messages) == []
    carried = result.messages[0].content[0]
    assert isinstance(carried, TextBlock)
    assert carried.text.startswith("Rebuild the site. Requirement 0")
    assert "first message" in carried.text and original_id(brief) in carried.text
    assert len(brief) > limit >= CharCounter().count_text(carried.text)
    assert uncut(carried.text, {original_id(brief): TextBlock(brief)}.get) == brief
    again = Summarize(FakeSummarizer("shorter"), keep_tokens=5_000)(
        [*result.messages, *tool_turns(20, size=1_000)[1:]], ctx
    )
    assert again.messages[0].content[0] == carried  # cut once: the next summary keeps it


def test_a_first_message_that_fits_is_carried_verbatim() -> None:
    messages = tool_turns(20, size=1_000)
    result = Summarize(FakeSummarizer("short"), keep_tokens=5_000)(messages, CTX)
    assert result.messages[0].content[0] is messages[0].content[0]
