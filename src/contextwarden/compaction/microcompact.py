"""MicroCompact: the content of old results of compactable tools is replaced by a marker.

The most recent results stay, and so does every result the model has not read yet (those after
the last assistant message: a batch of parallel calls' outputs); the ``tool_result`` block and
its ``tool_use_id`` stay too, so every pair is intact, a failed call keeps its error lines after
the marker, and a rejected call's result (it holds the reason the person typed) is left whole.
A text-action agent's observation (``compaction.observations``) is cleared the same way, as the
output of the agent's shell (``OBSERVATION_TOOL``): its marker names the content id
``history.rehydrate`` takes, and a failed command's observation keeps its error lines after it,
read with the command it answers (``summarizers.actions.action_call``). No model call: the
cheapest rung that frees real room.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
    unchanged,
)
from contextwarden.compaction.observations import (
    REHYDRATE_HINT,
    observation_texts,
    original_id,
    with_text,
)
from contextwarden.compaction.tools import ToolMatcher, matcher_for, results_with_names, tool_calls
from contextwarden.model import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.actions import action_call
from contextwarden.summarizers.code_mode import WaitedCalls
from contextwarden.summarizers.failures import failure_lines
from contextwarden.summarizers.typed import typed_in_result
from contextwarden.summarizers.unflagged import unflagged_lines

Kept = Callable[[ToolResultBlock, ToolUseBlock | None], Sequence[str] | None]
"""Lines of a result to keep after the marker when it is cleared, given the call it answers;
``None``: the result is not to be cleared at all."""

FAILED_LINES_NOTE = "The call failed; its error lines were:"
UNFLAGGED_LINES_NOTE = "Lines that read like a failure:"
UNFLAGGED_LINE_CHARS = 200
"""Each line kept of a result not found failed is at most this long: a hint that something went
wrong, not the whole message a failed result keeps."""
OBSERVATION_TOOL = "Bash"
"""The tool an observation is the output of, for choosing what to clear: text-action agents
(SWE-agent, mini-swe-agent) act through shell commands."""


@dataclass(frozen=True, slots=True)
class Clearing:
    """The outcome of clearing old results: new messages, which changed, how many results."""

    messages: tuple[Message, ...]
    changed: tuple[int, ...]
    cleared: int
    kept: int

    def saving(self, before: Sequence[Message], context: CompactionContext) -> int:
        """Tokens the clearing saves over ``before`` (only the changed messages are counted)."""
        return sum(context.count(before[i]) - context.count(self.messages[i]) for i in self.changed)

    def proposal(
        self, tokens_before: int, saving: int, description: str, details: dict[str, int]
    ) -> Proposal:
        """The clearing as an in-place proposal for ``finish``."""
        return Proposal(self.messages, tokens_before - saving, description, self.changed, details)


def is_cleared(block: Block, marker: str) -> bool:
    """True when ``block`` (a tool result, or an observation's text) was already cleared: its
    content is the marker (and kept lines, or the rehydrate hint)."""
    if isinstance(block, TextBlock):
        return block.text.startswith(marker)
    return (
        isinstance(block, ToolResultBlock)
        and isinstance(block.content, str)
        and block.content.startswith(marker)
    )


def output_slots(
    messages: Sequence[Message], index: int, selected: Callable[[str | None], bool]
) -> list[int]:
    """Positions in ``messages[index]`` of the tool output ``selected`` picks (given the tool's
    name): its tool results, or the texts of an observation (``OBSERVATION_TOOL``'s output)."""
    message = messages[index]
    if message.role != "user":
        return []
    if message.tool_results:
        return [pos for pos, _, name in results_with_names(messages, index) if selected(name)]
    found = observation_texts(message)
    return [pos for pos, _ in found] if found and selected(OBSERVATION_TOOL) else []


def cleared_observation(marker: str, text: str, lines: Sequence[str]) -> str:
    """What an observation's text becomes when cleared: the marker, how to get it back, then
    the kept lines (a failed command's error lines, as a cleared tool result keeps them)."""
    return cleared_content(f"{marker} [{REHYDRATE_HINT.format(id=original_id(text))}]", lines)


def cleared_content(marker: str, lines: Sequence[str]) -> str:
    """The marker, then the kept lines (none: the marker alone)."""
    return "\n".join((marker, *lines))


def clear_old_results(
    messages: Sequence[Message],
    selected: Callable[[str | None], bool],
    keep_recent: int,
    marker: str,
    kept: Kept | None = None,
) -> Clearing:
    """Replace the content of every selected tool result but the latest ``keep_recent`` and those
    the model has not read yet (``_unanswered_from``).

    ``selected`` gets the tool's name (or None when the tool_use is not found); ``kept`` gives
    the lines that follow the marker, or None for a result to leave whole. Results already
    cleared stay as they are and still count toward recency; so does a result that its marker
    and kept lines would not shorten.
    """
    found: list[tuple[int, int]] = []
    for i in range(len(messages)):
        found.extend((i, pos) for pos in output_slots(messages, i, selected))
    unseen = _unanswered_from(messages)
    old = [slot for slot in found[: max(0, len(found) - keep_recent)] if slot[0] < unseen]
    by_message: dict[int, dict[int, str]] = {}
    calls: dict[int, dict[str, ToolUseBlock]] = {}
    waited = WaitedCalls(messages)
    for i, pos in old:
        block = messages[i].content[pos]
        if is_cleared(block, marker):
            continue
        if isinstance(block, TextBlock):
            result = ToolResultBlock(original_id(block.text), block.text)
            call = action_call(messages[i - 1], result.tool_use_id) if i else None
            lines = kept(result, call) if kept is not None else ()
            if lines is not None:
                content = cleared_observation(marker, block.text, lines)
                if len(content) < len(block.text):
                    by_message.setdefault(i, {})[pos] = content
            continue
        assert isinstance(block, ToolResultBlock)
        lines = ()
        if kept is not None:
            answered = calls.setdefault(i, tool_calls(messages, i, waited))
            lines = kept(block, answered.get(block.tool_use_id))
        if lines is None:
            continue
        content = cleared_content(marker, lines)
        if lines and isinstance(block.content, str) and len(content) >= len(block.content):
            continue  # nothing to gain: the kept lines are the whole result
        by_message.setdefault(i, {})[pos] = content
    out = list(messages)
    for i, contents in by_message.items():
        out[i] = _with_contents(out[i], contents)
    cleared = sum(len(p) for p in by_message.values())
    return Clearing(tuple(out), tuple(sorted(by_message)), cleared, len(found) - len(old))


def _unanswered_from(messages: Sequence[Message]) -> int:
    """The index of the first message after the last assistant message: the results from there
    on are what the model is about to read for the first time (a batch of parallel calls' results
    may be many), so clearing them would leave it answering calls it never saw the output of."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "assistant":
            return i + 1
    return 0


def _with_contents(message: Message, contents: dict[int, str]) -> Message:
    """``message`` with the blocks at the given positions holding the given text."""
    blocks: list[Block] = list(message.content)
    for pos, content in contents.items():
        block = blocks[pos]
        if isinstance(block, TextBlock):
            message = with_text(message, pos, content)
            blocks = list(message.content)
            continue
        assert isinstance(block, ToolResultBlock)
        blocks[pos] = replace(block, content=content)
    return replace(message, content=tuple(blocks))


def failure_lines_kept(
    limit: int,
    originals: Callable[[str], ToolResultBlock | TextBlock | None] | None = None,
    unflagged: int = 0,
) -> Kept:
    """What microcompact keeps of a cleared result: up to ``limit`` error lines of a failed call,
    found by the failure detection the summaries use, in the result as first added
    (``originals``), not in a preview an earlier rung cut; of a result not found failed, up to
    ``unflagged`` lines saying its work did not happen (``unflagged.unflagged_lines``): a failure
    that exited 0 is not lost silently. A result holding a reason the person typed (a rejected
    call's reason, answers to a question tool, Cline's typed elements) is never cleared: what
    the user said stays in the context."""

    def kept(block: ToolResultBlock, call: ToolUseBlock | None) -> tuple[str, ...] | None:
        found = originals(block.tool_use_id) if originals is not None else None
        source = found if isinstance(found, ToolResultBlock) else block
        if isinstance(found, TextBlock):  # an observation, by its content id
            source = replace(block, content=found.text)
        if typed_in_result(source, call):
            return None
        failed = failure_lines(call, source, limit)
        if failed:
            return (FAILED_LINES_NOTE, *failed)
        hinted = unflagged_lines(call, source.text, unflagged, UNFLAGGED_LINE_CHARS)
        return (UNFLAGGED_LINES_NOTE, *hinted) if hinted else ()

    return kept


class MicroCompact:
    """Clears old compactable tool results, keeping the latest ``keep_recent``.

    Defaults come from the policy: ``compactable_tools``, ``keep_recent_tool_results``,
    ``microcompact_min_saving`` (its own guard: a smaller saving is not applied) and
    ``cleared_marker``. ``min_saving=0`` applies any saving (the idle trigger does: the prompt
    cache has expired, so every token cleared is free).
    """

    name = "microcompact"

    def __init__(
        self,
        keep_recent: int | None = None,
        *,
        tools: Iterable[str] | None = None,
        min_saving: int | None = None,
        marker: str | None = None,
    ) -> None:
        if keep_recent is not None and keep_recent < 0:
            raise ValueError(f"keep_recent must be >= 0, got {keep_recent}")
        if min_saving is not None and min_saving < 0:
            raise ValueError(f"min_saving must be >= 0, got {min_saving}")
        self.keep_recent = keep_recent
        self.tools = tuple(tools) if tools is not None else None
        self.min_saving = min_saving
        self.marker = marker

    def matcher(self, context: CompactionContext) -> ToolMatcher:
        names = self.tools if self.tools is not None else context.policy.compactable_tools
        return matcher_for(names)

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        policy = ctx.policy
        keep = self.keep_recent if self.keep_recent is not None else policy.keep_recent_tool_results
        marker = self.marker or policy.cleared_marker
        minimum = self.min_saving if self.min_saving is not None else policy.min_saving
        kept = failure_lines_kept(
            policy.cleared_error_lines, ctx.originals, policy.cleared_unflagged_lines
        )
        clearing = clear_old_results(messages, self.matcher(ctx).matches, keep, marker, kept)
        tokens_before = ctx.total_before(messages)
        if not clearing.cleared:
            reason = f"no compactable tool result older than the latest {keep} to clear"
            return unchanged(self.name, messages, reason, tokens_before)
        saving = clearing.saving(messages, ctx)
        details = {"cleared": clearing.cleared, "kept": clearing.kept, "saving": saving}
        if saving < max(minimum, 1):
            reason = f"not applied: saving {saving:,} tokens is below the minimum {minimum:,}"
            return unchanged(self.name, messages, reason, tokens_before, details)
        description = (
            f"cleared {clearing.cleared} old tool result(s), kept the latest {clearing.kept}"
        )
        proposal = clearing.proposal(tokens_before, saving, description, details)
        return finish(self.name, messages, tokens_before, proposal)
