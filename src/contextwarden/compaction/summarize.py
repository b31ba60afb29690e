"""Summarize (autocompact): the messages before a safe cut become one summary user message.

The summary message starts with the conversation's first user message (typed text verbatim,
long injected context as a reference: ``compaction.injected``), then the continuation note and
the summary, then re-attached files and hook output; the latest messages follow verbatim. A
summarizer failure raises SummarizerError (the manager's breaker counts them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
    unchanged,
)
from contextwarden.compaction.cap import cut_text, uncut
from contextwarden.compaction.cuts import (
    FIRST_BLOCKS_KEY,
    SUMMARY_BLOCKS_KEY,
    SUMMARY_KEY,
    CutPlan,
    first_user_blocks,
    join,
    lead_message,
    plan_cut,
    turn_starts,
)
from contextwarden.compaction.injected import carried_first_blocks
from contextwarden.compaction.observations import named_id, observation_texts, with_text
from contextwarden.errors import CompactionError, SummarizerError
from contextwarden.model import Block, FrozenDict, Message, MessageMeta, TextBlock, ToolResultBlock
from contextwarden.recall import span_id
from contextwarden.summarizers.base import Summarizer, Summary
from contextwarden.summarizers.structured import StructuredSummarizer

CONTINUATION_NOTE = (
    "This session is being continued from an earlier conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation."
)

FIRST_MESSAGE = "first message"
"""What the cut note calls a text of the first message the summary message carries."""

RECALL_NOTE = (
    " The earlier messages themselves can be read back verbatim with the recall tool: "
    'recall(id="{id}").'
)
"""Added to the note when the model is offered the recall tool (``ContextPolicy.recall``)."""

Attach = Callable[[Sequence[Message]], Sequence[Block]]
"""Given the messages kept verbatim, the blocks to add to the summary message (re-read files)."""

ChooseCut = Callable[[Sequence[Message], CutPlan, int], int]
"""Given the messages, the cut plan and the cut ``Summarize`` would take, the safe cut to take
instead (``compaction.headroom.HeadroomCut`` plans for the prompt cache)."""


class Summarize:
    """Replaces everything before a safe cut point with a summary from ``summarizer``.

    The cut is the earliest safe cut whose kept tail fits ``keep_tokens`` (policy
    ``kept_tail_budget``: ``summary_keep_tokens`` within a share of the room the preamble
    leaves), so as many recent turns as fit stay verbatim; when even the latest
    cut's tail is over that budget, the latest cut is used (the latest assistant turn is always
    kept). ``attach`` adds blocks (re-read files) given the kept tail. ``choose`` may move the
    cut to another of the plan's safe cuts. Without a ``summarizer`` the offline
    ``StructuredSummarizer`` sized for the context's window writes the summary.
    """

    name = "summarize"

    def __init__(
        self,
        summarizer: Summarizer | None = None,
        *,
        instructions: str | None = None,
        keep_tokens: int | None = None,
        attach: Attach | None = None,
        choose: ChooseCut | None = None,
    ) -> None:
        self.summarizer = summarizer
        self.instructions = instructions
        self.keep_tokens = keep_tokens
        self.attach = attach
        self.choose = choose

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        plan = plan_cut(self.name, messages, context, "summarize")
        if isinstance(plan, CompactionResult):
            return plan
        ctx, tokens_before, cuts, suffix = plan.context, plan.tokens_before, plan.cuts, plan.suffix
        fixed = tokens_before - plan.suffix[0]  # the preamble, sent whatever is cut
        budget = self.keep_tokens
        if budget is None:
            budget = ctx.policy.kept_tail_budget(fixed)
        cut = next((c for c in cuts if suffix[c] <= budget), cuts[-1])
        plain = cut
        if self.choose is not None and cut > 1:
            cut = self.choose(messages, plan, cut)
            if cut not in cuts:
                raise CompactionError(
                    f"Summarize: choose returned cut {cut}, not one of the safe cuts {cuts}; "
                    "a cut chooser must return one of plan.cuts"
                )
        if cut <= 1:
            reason = (
                "everything after the first message fits the kept-tail budget; nothing to summarize"
            )
            return unchanged(self.name, messages, reason, tokens_before)
        summarizer = self.summarizer or StructuredSummarizer.for_window(ctx.policy.context_window)
        prefix = as_added(_replaced_part(messages[:cut]), ctx.originals)
        summary = self._summarize(summarizer, prefix)
        lead = self._lead(messages, summary, messages[cut:], ctx)
        after = join(lead, messages[cut:])
        tokens_after = plan.tokens_after(after, lead, cut)
        kept_turns = sum(1 for s in turn_starts(messages) if s >= cut)
        description = (
            f"summarized messages 0..{cut - 1} ({cut} messages) into one user message, kept "
            f"{len(messages) - cut} recent messages verbatim ({kept_turns} turn(s) start in them)"
        )
        details = {
            "summarizer_called": True,
            "cut": cut,
            "kept": len(messages) - cut,
            "summary_chars": len(summary.text),
            "plain_cut": plain,
        }
        proposal = Proposal(after, tokens_after, description, None, details, summary.text)
        return finish(self.name, messages, tokens_before, proposal)

    def _summarize(self, summarizer: Summarizer, prefix: Sequence[Message]) -> Summary:
        try:
            summary = summarizer.summarize(prefix, instructions=self.instructions)
        except SummarizerError:
            raise
        except Exception as exc:  # a summarizer's own bug or transport error: one tree, kept cause
            name = type(summarizer).__name__
            raise SummarizerError(f"summarizer {name} failed: {type(exc).__name__}: {exc}") from exc
        if not isinstance(summary, Summary) or not summary.text.strip():
            raise SummarizerError(
                f"summarizer {type(summarizer).__name__} returned an empty summary"
            )
        return summary

    def _lead(
        self,
        messages: Sequence[Message],
        summary: Summary,
        tail: Sequence[Message],
        ctx: CompactionContext,
    ) -> Message:
        first = tuple(
            _first_block_cut(block, ctx) for block in carried_first_blocks(messages, ctx.counter)
        )
        recall = RECALL_NOTE.format(id=span_id(summary.text)) if ctx.policy.recall else ""
        note = TextBlock(
            f"{CONTINUATION_NOTE}{recall}\n\n<summary>\n{summary.text.strip()}\n</summary>"
        )
        attached = tuple(self.attach(tail)) if self.attach is not None else ()
        blocks = (*first, note, *attached)
        extra = FrozenDict({SUMMARY_KEY: True, SUMMARY_BLOCKS_KEY: len(blocks)})
        return lead_message(blocks, len(first), MessageMeta(timestamp=ctx.clock(), extra=extra))


def _first_block_cut(block: Block, ctx: CompactionContext) -> Block:
    """A text of the first message, as the summary message carries it: whole, or, when larger
    than a message may be (``policy.message_result_tokens``, as ``Oversize`` cuts a text of the
    latest turn), its head and tail around a note naming the original's id. Kept whole, a first
    message the person pasted a 22,000-token brief into filled the context at a 40,000-token
    window after every summary, and the session was summarized on 145 of its 1,124 requests,
    each summary re-summarizing the last (docs/benchmarks.md, fifteenth round)."""
    if not isinstance(block, TextBlock):
        return block
    limit = ctx.policy.message_result_tokens
    text = cut_text(block.text, limit, ctx.counter, FIRST_MESSAGE)
    return block if text is block.text else TextBlock(text, block.extra)


def _replaced_part(prefix: Sequence[Message]) -> list[Message]:
    """What the summary replaces: the prefix without the first user message's own blocks,
    which the summary message keeps verbatim (summarizing them too would pay for them twice).

    The block counts in the message's meta move with its blocks, so a turn merged after an
    earlier summary is still read as typed text, not as part of that summary."""
    first = first_user_blocks(prefix)
    rest = prefix[0].content[len(first) :]
    if not rest:
        return list(prefix[1:])
    meta = prefix[0].meta
    extra = {k: v for k, v in meta.extra.items() if k != FIRST_BLOCKS_KEY}
    end = extra.get(SUMMARY_BLOCKS_KEY)
    if isinstance(end, int) and not isinstance(end, bool):
        extra[SUMMARY_BLOCKS_KEY] = max(0, end - len(first))
    head = Message("user", rest, replace(meta, extra=FrozenDict(extra)))
    return [head, *prefix[1:]]


Originals = Callable[[str], ToolResultBlock | TextBlock | None]


def as_added(messages: Sequence[Message], originals: Originals | None) -> list[Message]:
    """``messages`` with every tool result, observation and text the cap cut as it was first added
    (``originals``), so what a rung cut or cleared reaches the summarizer whole (what the person
    typed included: a summary carries it verbatim; an assistant turn larger than the window, as
    a SpecStory export writes a whole agent turn with its tool calls as one text, too)."""
    if originals is None:
        return list(messages)
    out = []
    for message in messages:
        if message.role == "user" and message.tool_results:
            blocks = tuple(_original(b, originals) for b in message.content)
            if any(new is not old for new, old in zip(blocks, message.content, strict=True)):
                message = replace(message, content=blocks)
        observed = observation_texts(message)
        for position, block in observed:
            named = named_id(block.text)
            found = originals(named) if named is not None else None
            if isinstance(found, TextBlock):
                message = with_text(message, position, found.text)
        if not observed:
            message = _uncut_texts(message, originals)
        out.append(message)
    return out


def _uncut_texts(message: Message, originals: Originals) -> Message:
    """``message`` with each text the cap cut (a paste, an assistant turn larger than the
    window) whole again."""
    for position, block in enumerate(message.content):
        whole = uncut(block.text, originals) if isinstance(block, TextBlock) else None
        if whole is not None:
            message = with_text(message, position, whole)
    return message


def _original(block: Block, originals: Originals) -> Block:
    if not isinstance(block, ToolResultBlock):
        return block
    found = originals(block.tool_use_id)
    return found if isinstance(found, ToolResultBlock) and found != block else block


def add_to_summary(
    result: CompactionResult,
    before: Sequence[Message],
    blocks: Sequence[Block],
    context: CompactionContext,
) -> CompactionResult:
    """``result`` with ``blocks`` (e.g. post-compact hook output) added to its summary message.

    They go right after the summary's own blocks (before a merged turn's blocks). Checked again
    like any proposal: if the additions would break a rule or cost more than the compaction
    saved, the result is the input unchanged with the reason.
    """
    lead = result.messages[0] if result.messages else None
    if not blocks or lead is None or not result.applied or not lead.meta.extra.get(SUMMARY_KEY):
        return result
    end = lead.meta.extra.get(SUMMARY_BLOCKS_KEY)
    end = end if isinstance(end, int) else len(lead.content)
    content = (*lead.content[:end], *blocks, *lead.content[end:])
    extra = FrozenDict({**lead.meta.extra, SUMMARY_BLOCKS_KEY: end + len(blocks)})
    new_lead = replace(lead, content=content, meta=replace(lead.meta, extra=extra))
    after = (new_lead, *result.messages[1:])
    tokens_after = result.report.tokens_after + context.count(new_lead) - context.count(lead)
    details = {**result.report.details, "hook_blocks": len(blocks)}
    description = f"{result.report.description}; added {len(blocks)} block(s) from hooks"
    proposal = Proposal(after, tokens_after, description, None, details, result.summary)
    return finish(result.report.name, before, result.report.tokens_before, proposal)
