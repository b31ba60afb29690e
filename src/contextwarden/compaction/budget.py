"""ToolResultBudget: a tool result over its tool's limit becomes a head + tail preview with a note.

Nothing is lost: the full text goes to the spill directory (named by its sha256) when one is
configured, and the history's log always keeps the original (``history.rehydrate(tool_use_id)``).
"""

from __future__ import annotations

import hashlib
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
from contextwarden.compaction.snip import snip_text
from contextwarden.compaction.tools import ALIASES, normalize, results_with_names
from contextwarden.model import Block, Message, TextBlock, ToolResultBlock
from contextwarden.policy import ContextPolicy

log = logging.getLogger("contextwarden")

CUT_NOTE = (
    "\n\n[contextwarden: cut {cut:,} of {total:,} characters from the middle of this tool result. "
    "The full output is kept under id {spill_id}{where}; history.rehydrate({tool_use_id!r}) "
    "returns it.]\n\n"
)
"""The note put between head and tail. It names the id twice: the content hash (the spill file's
name) and the tool_use_id (the log lookup)."""

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

    tool_use_id: str
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
            for canonical, aliases in ALIASES.items():
                if normalize(canonical) == normalize(name):
                    for alias in aliases:
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
        blocks: list[Block] = list(messages[i].content)
        cuts: list[Cut] = []
        for position, block, tool in results_with_names(messages, i):
            text = block.text
            limit = min(rules.of(tool), int(len(text) * factor))
            if len(text) <= limit:
                continue
            found = self._cut_block(block, text, limit, tool, ctx)
            if found is not None:
                blocks[position], cut = found
                cuts.append(cut)
        if not cuts:
            return messages[i], cuts
        return replace(messages[i], content=tuple(blocks)), cuts

    def _cut_block(
        self,
        block: ToolResultBlock,
        text: str,
        limit: int,
        tool: str | None,
        ctx: CompactionContext,
    ) -> tuple[ToolResultBlock, Cut] | None:
        """The block cut to ``limit`` characters (note included), or None if not worth it."""
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        spill_id = f"sha256-{digest[:32]}"
        spill_dir = self.spill_dir or ctx.spill_dir
        where = f", file {spill_dir / (spill_id + '.txt')}" if spill_dir is not None else ""
        note_args = {"spill_id": spill_id, "where": where, "tool_use_id": block.tool_use_id}
        # The note's own length counts against the limit, so a cut result is never cut again.
        probe = CUT_NOTE.format(cut=len(text), total=len(text), **note_args)
        if len(text) <= len(probe) + MIN_PREVIEW_SAVING:
            return None  # the note alone would be about as long as the result
        keep = max(0, limit - len(probe))
        head_len = int(keep * ctx.policy.result_head_ratio)
        # The preview's long lines are cut as Snip would: one pass, one count of the result.
        line_limit = ctx.policy.max_line_chars
        head = snip_text(_head(text, head_len), line_limit)[0]
        tail = snip_text(_tail(text, keep - head_len), line_limit)[0]
        path = _spill(spill_dir, spill_id, text) if spill_dir is not None else None
        if path is None:  # not written (or no directory): do not point at a missing file
            note_args["where"] = ""
        note = CUT_NOTE.format(cut=len(text) - len(head) - len(tail), total=len(text), **note_args)
        preview = head + note + tail
        others = () if isinstance(block.content, str) else block.content
        kept: tuple[Block, ...] = tuple(b for b in others if not isinstance(b, TextBlock))
        content = preview if not kept else (TextBlock(preview), *kept)
        new = replace(block, content=content)  # type: ignore[arg-type]
        cut = Cut(block.tool_use_id, tool, len(text), len(head) + len(tail), spill_id, path)
        return new, cut


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
    """A cheap pre-check: could a tool result here be over a limit (per tool or per message)?"""
    if message.role != "user":
        return False
    found = False
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            found = True
            if _chars(block) > rules.smallest:
                return True
    return found and ctx.count(message) > rules.message_tokens


def _chars(block: ToolResultBlock) -> int:
    content = block.content
    if isinstance(content, str):
        return len(content)
    return sum(len(b.text) for b in content if isinstance(b, TextBlock))


def _head(text: str, n: int) -> str:
    """The first ``n`` characters, ending at a line break when one is near the end."""
    if n <= 0:
        return ""
    head = text[:n]
    nl = head.rfind("\n", int(n * (1 - SNAP_WINDOW)))
    return head[: nl + 1] if nl > 0 else head


def _tail(text: str, n: int) -> str:
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
