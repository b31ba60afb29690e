"""ToolResultBudget: a tool result over its tool's limit becomes a head + tail preview with a note.

A text-action agent's observation (``compaction.observations``) is budgeted like a result of an
unnamed tool. Nothing is lost: the full text goes to the spill directory (named by its content id)
when one is configured, and the history's log always keeps the original
(``history.rehydrate(tool_use_id)``, or the content id for an observation).
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
    unchanged,
    with_edits,
)
from contextwarden.compaction.observations import observation_texts, with_text
from contextwarden.compaction.snip import snip_text
from contextwarden.compaction.tools import results_with_names
from contextwarden.content_ids import content_id
from contextwarden.model import Block, Message, TextBlock, ToolResultBlock
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.actions import is_observation
from contextwarden.toolnames import aliases_of, normalize

log = logging.getLogger("contextwarden")

CUT_NOTE = (
    "\n\n[contextwarden: cut {cut:,} of {total:,} characters from the middle of this {what}. "
    "The full output is kept under id {spill_id}{where}; history.rehydrate({key!r}) "
    "returns it.]\n\n"
)
"""The note put between head and tail. It names the content id (the spill file's name) and the
key ``history.rehydrate`` takes: the tool_use_id of a result, the content id of an observation."""

FIT_ROUNDS = 4
"""Rounds of proportional shrinking to fit a message's results into its token budget."""
FIT_MARGIN = 0.9
"""Each round aims this far under the budget, so estimates that are not linear still converge."""
SNAP_WINDOW = 0.1
"""Head and tail end at a line break when one lies within this share of their length."""
MIN_PREVIEW_SAVING = 200
"""A result is cut only if that saves more than this many characters beyond the note's length."""


@dataclass(frozen=True, slots=True)
class Cut:
    """One tool result that was cut: where, how much, and where the full text went."""

    tool_use_id: str | None
    """None for an observation (its ``spill_id`` is its rehydrate key)."""
    tool: str | None
    original_chars: int
    kept_chars: int
    spill_id: str
    spill_path: str | None


class ToolResultBudget:
    """Cuts each tool result longer than its tool's character limit to a head and tail preview.

    ``limits`` (tool name → chars, matched case-insensitively with aliases) and ``default_limit``
    override the policy's ``max_result_chars`` / ``default_max_result_chars``. The results of one
    message together also stay within ``message_tokens`` (policy ``max_message_result_tokens``):
    parallel calls are cut in proportion to their length until the message fits.
    """

    name = "tool_result_budget"

    def __init__(
        self,
        limits: Mapping[str, int] | None = None,
        default_limit: int | None = None,
        *,
        message_tokens: int | None = None,
        spill_dir: str | Path | None = None,
    ) -> None:
        self.limits = limits
        self.default_limit = default_limit
        self.message_tokens = message_tokens
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self._table: tuple[Mapping[str, int], dict[str, int]] | None = None
        """The alias-expanded limits of the last source seen (built once, not per call)."""

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        rules = _Limits(self._limits(ctx.policy), self._default(ctx.policy), self._budget(ctx))
        edits: dict[int, Message] = {}
        cuts: list[Cut] = []
        for i in range(ctx.start, len(messages)):
            if not _may_exceed(messages[i], rules, ctx):
                continue
            new, found = self._fit_message(messages, i, rules, ctx)
            if found:
                edits[i] = new
                cuts.extend(found)
        tokens_before = ctx.total_before(messages)
        if not edits:
            return unchanged(self.name, messages, "no tool result over its limit", tokens_before)
        delta = sum(ctx.count(new) - ctx.count(messages[i]) for i, new in edits.items())
        total_cut = sum(c.original_chars - c.kept_chars for c in cuts)
        description = f"cut {len(cuts)} tool result(s) to a preview, {total_cut:,} characters out"
        details = {"cuts": tuple(_cut_details(c) for c in cuts)}
        after = with_edits(messages, edits)
        proposal = Proposal(after, tokens_before + delta, description, list(edits), details)
        return finish(self.name, messages, tokens_before, proposal)

    def wants(self, message: Message, context: CompactionContext) -> bool:
        """A cheap look: could this rung change ``message``? (No false negatives.)"""
        ctx = context
        rules = _Limits(self._limits(ctx.policy), self._default(ctx.policy), self._budget(ctx))
        return _may_exceed(message, rules, ctx)

    # ------------------------------------------------------------------ internals
    def _limits(self, policy: ContextPolicy) -> dict[str, int]:
        source = self.limits if self.limits is not None else policy.max_result_chars
        if self._table is not None and self._table[0] is source:
            return self._table[1]
        table: dict[str, int] = {}
        for name, limit in source.items():
            table[normalize(name)] = int(limit)
            for alias in aliases_of(name):
                table.setdefault(normalize(alias), int(limit))
        self._table = (source, table)
        return table

    def _default(self, policy: ContextPolicy) -> int:
        if self.default_limit is not None:
            return self.default_limit
        return policy.default_max_result_chars

    def _budget(self, ctx: CompactionContext) -> int:
        if self.message_tokens is not None:
            return self.message_tokens
        return ctx.policy.message_result_tokens

    def _fit_message(
        self, messages: Sequence[Message], i: int, rules: _Limits, ctx: CompactionContext
    ) -> tuple[Message, list[Cut]]:
        """Cut to the per-tool limits, then shrink every result alike until the message fits."""
        factor = 1.0
        new, cuts = self._cut_message(messages, i, rules, ctx, factor)
        for _ in range(FIT_ROUNDS):
            tokens = ctx.count(new)
            if tokens <= rules.message_tokens:
                break
            factor *= rules.message_tokens / tokens * FIT_MARGIN
            new, cuts = self._cut_message(messages, i, rules, ctx, factor)
        return new, cuts

    def _cut_message(
        self,
        messages: Sequence[Message],
        i: int,
        rules: _Limits,
        ctx: CompactionContext,
        factor: float,
    ) -> tuple[Message, list[Cut]]:
        new = messages[i]
        cuts: list[Cut] = []
        for position, block, tool in results_with_names(messages, i):
            text = block.text
            limit = min(rules.of(tool), int(len(text) * factor))
            found = self._cut_text(text, limit, ctx, block.tool_use_id)
            if found is not None:
                preview, kept, spill_id, path = found
                new = with_result_text(new, position, preview)
                cuts.append(Cut(block.tool_use_id, tool, len(text), kept, spill_id, path))
        for position, observation in observation_texts(messages[i]):
            text = observation.text
            found = self._cut_text(text, min(rules.default, int(len(text) * factor)), ctx)
            if found is not None:
                preview, kept, spill_id, path = found
                new = with_text(new, position, preview)
                cuts.append(Cut(None, None, len(text), kept, spill_id, path))
        return new, cuts

    def _cut_text(
        self, text: str, limit: int, ctx: CompactionContext, tool_use_id: str | None = None
    ) -> tuple[str, int, str, str | None] | None:
        """``text`` cut to ``limit`` characters (note included): (preview, characters of the
        original kept, spill id, spill path);
        None when it is within the limit or the cut is not worth it. The note's rehydrate key is
        ``tool_use_id`` when given, else the content id."""
        if len(text) <= limit:
            return None
        spill_id = content_id(text)
        spill_dir = self.spill_dir or ctx.spill_dir
        where = f", file {spill_dir / (spill_id + '.txt')}" if spill_dir is not None else ""
        what = "tool result" if tool_use_id is not None else "observation"
        note_args = {"spill_id": spill_id, "where": where, "key": tool_use_id or spill_id}
        # The note's own length counts against the limit, so a cut result is never cut again.
        probe = CUT_NOTE.format(cut=len(text), total=len(text), what=what, **note_args)
        if len(text) <= len(probe) + MIN_PREVIEW_SAVING:
            return None  # the note alone would be about as long as the result
        keep = max(0, limit - len(probe))
        head_len = int(keep * ctx.policy.result_head_ratio)
        # The preview's long lines are cut as Snip would: one pass, one count of the result.
        line_limit = ctx.policy.max_line_chars
        head = snip_text(head_of(text, head_len), line_limit)[0]
        tail = snip_text(tail_of(text, keep - head_len), line_limit)[0]
        path = _spill(spill_dir, spill_id, text) if spill_dir is not None else None
        if path is None:  # not written (or no directory): do not point at a missing file
            note_args["where"] = ""
        cut = len(text) - len(head) - len(tail)
        note = CUT_NOTE.format(cut=cut, total=len(text), what=what, **note_args)
        return head + note + tail, len(head) + len(tail), spill_id, path


def with_result_text(message: Message, position: int, text: str) -> Message:
    """``message`` with the tool result at ``position`` holding ``text`` (its images and other
    non-text parts kept after it)."""
    block = message.content[position]
    assert isinstance(block, ToolResultBlock), "only a tool result's text is replaced here"
    others = () if isinstance(block.content, str) else block.content
    kept: tuple[Block, ...] = tuple(b for b in others if not isinstance(b, TextBlock))
    content = text if not kept else (TextBlock(text), *kept)
    blocks = list(message.content)
    blocks[position] = replace(block, content=content)  # type: ignore[arg-type]
    return replace(message, content=tuple(blocks))


@dataclass(frozen=True, slots=True)
class _Limits:
    """The limits in force for one call: per tool (normalized names), default, per message."""

    per_tool: dict[str, int]
    default: int
    message_tokens: int

    def of(self, tool: str | None) -> int:
        return self.per_tool.get(normalize(tool), self.default) if tool else self.default

    @property
    def smallest(self) -> int:
        return min([self.default, *self.per_tool.values()])


def _may_exceed(message: Message, rules: _Limits, ctx: CompactionContext) -> bool:
    """A cheap pre-check: could a tool result or observation here be over a limit (per tool or
    per message)?"""
    if message.role != "user":
        return False
    found = False
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            found = True
            if _chars(block) > rules.smallest:
                return True
    if is_observation(message):
        found = True
        if any(len(b.text) > rules.default for _, b in observation_texts(message)):
            return True
    return found and ctx.count(message) > rules.message_tokens


def _chars(block: ToolResultBlock) -> int:
    content = block.content
    if isinstance(content, str):
        return len(content)
    return sum(len(b.text) for b in content if isinstance(b, TextBlock))


def head_of(text: str, n: int) -> str:
    """The first ``n`` characters, ending at a line break when one is near the end."""
    if n <= 0:
        return ""
    head = text[:n]
    nl = head.rfind("\n", int(n * (1 - SNAP_WINDOW)))
    return head[: nl + 1] if nl > 0 else head


def tail_of(text: str, n: int) -> str:
    """The last ``n`` characters, starting after a line break when one is near the start."""
    if n <= 0:
        return ""
    tail = text[-n:]
    nl = tail.find("\n", 0, max(1, int(n * SNAP_WINDOW)))
    return tail[nl + 1 :] if nl >= 0 else tail


def _spill(directory: Path, spill_id: str, text: str) -> str | None:
    """Write ``text`` to ``directory/<spill_id>.txt`` atomically; the path, or None on error.

    An error is logged, not raised: the history's log still holds the full text.
    """
    path = directory / f"{spill_id}.txt"
    try:
        if path.is_file():
            return str(path)  # content-addressed: the same text is already there
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{spill_id}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as fh:
                fh.write(text)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError as exc:
        log.warning(
            "could not write spill file %s: %s (the history's log keeps the text)", path, exc
        )
        return None
    return str(path)


def _cut_details(cut: Cut) -> dict[str, object]:
    return {
        "tool_use_id": cut.tool_use_id,
        "tool": cut.tool,
        "original_chars": cut.original_chars,
        "kept_chars": cut.kept_chars,
        "spill_id": cut.spill_id,
        "spill_path": cut.spill_path,
    }
