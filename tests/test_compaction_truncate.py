"""Truncate: the first user message and the latest turns, cut only where nothing is orphaned."""

from __future__ import annotations

from contextwarden.compaction import CompactionContext, Truncate
from contextwarden.compaction.cuts import FIRST_BLOCKS_KEY, first_user_blocks
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.policy import DROPPED_NOTE, ContextPolicy
from contextwarden.rules import validate
from contextwarden.summarizers.typed import typed_texts
from tests.strategies import CharCounter, chat, tool_turns


def test_seed_example_50_messages_keep_first_user_message_and_10_turns() -> None:
    messages = chat(50)
    result = Truncate(keep_recent_turns=10)(messages)
    after = result.messages
    assert result.applied and validate(after) == []
    # The kept tail starts with a user message (turn 15 of 25), so the first user message is
    # merged in front of it: one user message, the first message's blocks first, then the note
    # saying how many messages were dropped between them.
    note = TextBlock(DROPPED_NOTE.format(count=29))
    assert after[0].content == (*messages[0].content, note, *messages[30].content)
    assert after[0].meta.extra[FIRST_BLOCKS_KEY] == 1
    assert list(after[1:]) == messages[31:]
    assert len(after) == 20
    assert result.report.details["kept_turns"] == 10
    assert result.report.details["dropped"] == 29


def test_history_ending_with_a_new_prompt_keeps_the_latest_assistant_turn() -> None:
    messages = chat(51)  # the last message is a user prompt, not yet answered
    result = Truncate(keep_recent_turns=1)(messages)
    assert [m.text for m in result.messages[1:]] == [messages[49].text, messages[50].text]
    note = TextBlock(DROPPED_NOTE.format(count=48))
    assert result.messages[0].content == (*messages[0].content, note)


def test_few_turns_nothing_to_drop() -> None:
    messages = chat(6)
    result = Truncate(keep_recent_turns=10)(messages)
    assert not result.applied and "nothing to drop" in result.report.description
    assert result.messages == tuple(messages)


def test_invalid_input_is_returned_unchanged_with_the_reason() -> None:
    orphan = Message("user", (ToolResultBlock("toolu_x", "out"), TextBlock("and then")))
    messages = [*chat(23), Message.assistant("ok"), orphan, Message.assistant("done")]
    result = Truncate(keep_recent_turns=1)(messages)
    assert not result.applied
    assert result.report.description.startswith("not applied: it would break [tool_pairing]")


def test_max_tokens_moves_the_cut_inside_a_turn_without_orphans() -> None:
    counter = CharCounter()
    messages = tool_turns(30, size=1_000)  # one long turn: a prompt, then 30 tool calls
    ctx = CompactionContext(counter)
    result = Truncate(keep_recent_turns=10, max_tokens=6_000)(messages, ctx)
    after = result.messages
    assert result.applied and validate(after) == []
    assert sum(counter.count_message(m) for m in after) <= 6_000
    assert after[0].content[:-1] == messages[0].content and after[1].role == "assistant"
    assert after[0].content[-1].text.startswith("[contextwarden: ")  # the dropped note
    assert after[-1] == messages[-1]
    assert result.report.tokens_after == sum(counter.count_message(m) for m in after)


def test_max_tokens_that_cannot_be_met_uses_the_latest_cut_and_says_so() -> None:
    messages = tool_turns(5, size=5_000)
    result = Truncate(max_tokens=100)(messages, CompactionContext(CharCounter()))
    assert result.applied and "still over the 100-token budget" in result.report.description
    assert list(result.messages[1:]) == messages[-2:]
    assert result.report.details["fits"] is False


def test_truncating_twice_keeps_only_the_original_first_message() -> None:
    once = Truncate(keep_recent_turns=10)(chat(50)).messages
    twice = Truncate(keep_recent_turns=2)(list(once) + chat(10)[1:] + [Message.user("again")])
    first = first_user_blocks(twice.messages)
    assert first == chat(50)[0].content
    assert twice.messages[0].content[0] == chat(50)[0].content[0]
    assert validate(twice.messages) == []


def test_pending_tool_call_at_the_end_is_kept() -> None:
    messages = [*chat(40), Message.user("read it")]
    messages.append(Message.assistant([ToolUseBlock("toolu_9", "Read", {"file_path": "a"})]))
    result = Truncate(keep_recent_turns=2)(messages)
    assert result.messages[-1] == messages[-1]
    assert validate(result.messages) == []


def test_the_note_says_how_many_messages_were_dropped_and_is_not_the_persons_words() -> None:
    """Without ``recall`` the model still learns that the conversation has a gap (no id to read it
    back with); a later summary does not quote the note as something the person typed."""
    messages = chat(50)
    result = Truncate(keep_recent_turns=10)(messages, CompactionContext(CharCounter()))
    notes = [b.text for b in result.messages[0].content if "dropped here" in getattr(b, "text", "")]
    assert notes == [
        "[contextwarden: 29 earlier message(s) were dropped here to fit the context window]"
    ]
    assert "recall" not in notes[0]
    recalled = CompactionContext(CharCounter(), policy=ContextPolicy(recall=True))
    (with_id,) = [
        b.text
        for b in Truncate(keep_recent_turns=10)(messages, recalled).messages[0].content
        if "dropped here" in getattr(b, "text", "")
    ]
    assert with_id.startswith(notes[0][:-1] + '; recall(id="')
    assert not any("dropped here" in t for t in typed_texts(result.messages[0]))
