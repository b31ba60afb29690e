"""Injected context in the first message: a summary message carries it as a reference, never what
the person typed (``compaction.injected``, ``summarizers.typed.is_injected_block``).

The Codex texts are cut from ``codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl`` of
the project's corpus (EntityProcess/agentv, MIT; its ``transcripts/SOURCES.md``):
its first user message is five wrappers Codex wrote, AGENTS.md, ``<environment_context>`` and
then what the person typed."""

from __future__ import annotations

from typing import Any

from contextwarden.compaction import CompactionContext, Summarize
from contextwarden.compaction.cuts import FIRST_BLOCKS_KEY
from contextwarden.compaction.injected import (
    INLINE_INJECTED_TOKENS,
    carried_first_blocks,
    injected_reference,
)
from contextwarden.compaction.loss import losses
from contextwarden.content_ids import content_id
from contextwarden.history import ConversationHistory
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock
from contextwarden.recall import named_ids, recall
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.typed import clean_typed_text, is_injected_block, user_messages
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.strategies import tool_turns

COUNTER = HeuristicCounter()
AGENTS_MD = (
    "# AGENTS.md instructions for /home/entity/projects/EntityProcess/agentv\n\n<INSTRUCTIONS>\n"
    "# AgentV Repository Guidelines\n\nThis is a TypeScript monorepo for AgentV - an AI agent "
    "evaluation framework.\n\n## High-Level Goals\n\n"
    + "AgentV aims to provide a robust, declarative framework for evaluating AI agents.\n" * 60
    + "</INSTRUCTIONS>"
)
ENVIRONMENT = (
    "<environment_context>\n  <cwd>/home/entity/projects/EntityProcess/agentv</cwd>\n"
    "  <shell>zsh</shell>\n  <current_date>2026-06-18</current_date>\n"
    "  <timezone>Europe/Berlin</timezone>\n</environment_context>"
)
TYPED = "remove agentv-claude-trace plugin no longer needed, can merge directly"


def first(*texts: str, **extra: Any) -> Message:
    return Message("user", tuple(TextBlock(t) for t in texts), MessageMeta(extra=FrozenDict(extra)))


def test_codex_wrappers_are_not_typed_without_a_loaders_marks() -> None:
    # A request through the proxy: the same texts, with no loader to mark them.
    message = first(AGENTS_MD, ENVIRONMENT, TYPED)
    assert [m.text for m in user_messages([message])] == [TYPED]
    injected = [is_injected_block(message, b) for b in message.content if isinstance(b, TextBlock)]
    assert injected == [True, True, False]
    # The person's words around a wrapper stay typed.
    mixed = TextBlock(f"{ENVIRONMENT}\n{TYPED}")
    assert not is_injected_block(first(mixed.text), mixed)
    assert clean_typed_text(mixed.text) == TYPED


def test_copilot_wrappers_around_typed_text_are_dropped() -> None:
    # transformedContent of the first user.message in
    # tests/data/copilot/EntityProcess__agentv__269e1b9e5502-events.jsonl, shortened.
    sent = (
        "<current_datetime>2026-06-25T03:50:44.763+02:00</current_datetime>\n\n"
        "investigate why i get  Check hook recovered and main state (shell)\n\nand fix\n\n"
        "<system_reminder>\n<sql_tables>Available tables: todos, todo_deps</sql_tables>\n"
        "</system_reminder>"
    )
    assert clean_typed_text(sent) == (
        "investigate why i get  Check hook recovered and main state (shell)\n\nand fix"
    )


def test_loader_marks_decide_first() -> None:
    listed = first("[bd prime] read the full permission list first", TYPED)
    marked = first(*(b.text for b in listed.content if isinstance(b, TextBlock)),
                   injected_texts=("[bd prime] read the full permission list first",))  # fmt: skip
    plain, typed = (b for b in listed.content if isinstance(b, TextBlock))
    assert not is_injected_block(listed, plain)  # unmarked and no wrapper: the person's
    assert is_injected_block(marked, plain) and not is_injected_block(marked, typed)
    # A slash command the loader listed is still what the person typed (typed syntax).
    command = TextBlock("<command-name>/gsd:progress</command-name>")
    assert not is_injected_block(first(command.text, isMeta=True), command)


def test_long_injected_text_becomes_a_reference_and_typed_text_stays() -> None:
    message = first(AGENTS_MD, ENVIRONMENT, TYPED)
    carried = carried_first_blocks([message], COUNTER)
    assert COUNTER.count_text(AGENTS_MD) > INLINE_INJECTED_TOKENS
    assert COUNTER.count_text(ENVIRONMENT) <= INLINE_INJECTED_TOKENS
    reference = injected_reference(AGENTS_MD, COUNTER.count_text(AGENTS_MD))
    assert carried == (reference, TextBlock(ENVIRONMENT), TextBlock(TYPED))
    assert "# AGENTS.md instructions for /home/entity/projects/EntityProcess/agentv" in (
        reference.text
    )
    assert f"{COUNTER.count_text(AGENTS_MD):,} tokens" in reference.text
    assert content_id(AGENTS_MD) in reference.text
    tagged = injected_reference("<skills_instructions>\n## Skills\n</skills_instructions>", 900)
    assert "'<skills_instructions>', 900 tokens" in tagged.text
    # The reference is neither typed nor a wrapper to reference again.
    assert clean_typed_text(reference.text) == ""
    assert [m.text for m in user_messages([first(reference.text, TYPED)])] == [TYPED]


def test_a_carried_first_message_is_not_carried_again() -> None:
    # After a summary, the lead's meta is no longer the first message's: a turn merged after it
    # brings its own marks ("injected": True of a Codex developer message), which must not
    # turn the person's first words into a reference.
    lead = first(TYPED, "summary", injected=True, **{FIRST_BLOCKS_KEY: 1})
    assert carried_first_blocks([lead], COUNTER) == (TextBlock(TYPED),)


def test_summarize_carries_the_reference_and_the_original_comes_back() -> None:
    opening = first(AGENTS_MD, ENVIRONMENT, TYPED, injected_texts=(AGENTS_MD, ENVIRONMENT))
    history = ConversationHistory(counter=COUNTER)
    history.add(opening)
    for message in tool_turns(30, size=2_000)[1:]:
        history.add(message)
    context = CompactionContext(COUNTER, clock=lambda: 0.0)
    result = Summarize(StructuredSummarizer(budget_tokens=2_000), keep_tokens=4_000)(
        history.messages, context
    )
    assert result.applied
    lead = result.messages[0]
    texts = [b.text for b in lead.content if isinstance(b, TextBlock)]
    assert AGENTS_MD not in texts and TYPED in texts and ENVIRONMENT in texts
    assert lead.meta.extra[FIRST_BLOCKS_KEY] == 3
    # Read back, the lead's copy of the first message is the person's words alone.
    assert [m.text for m in user_messages(result.messages)] == [TYPED]
    # The model gets the original back by the id the reference names, the one the loss report
    # of this compaction gives for it.
    (wanted,) = named_ids(result.messages[:1])
    assert wanted in losses(history.messages, result.messages, COUNTER).refs
    assert recall(history, {"id": wanted}).text.startswith(AGENTS_MD[:2_000])
    assert history.rehydrate(wanted).text == AGENTS_MD
    # A second compaction keeps the same lead.
    again = Summarize(StructuredSummarizer(budget_tokens=2_000), keep_tokens=2_000)(
        [*result.messages, *tool_turns(45, size=2_000)[61:]], context
    )
    assert again.applied
    assert again.messages[0].content[:3] == lead.content[:3]
