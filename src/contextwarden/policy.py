"""ContextPolicy: every number the compaction ladder uses, named, documented and overridable.

The defaults follow Claude Code's (200k window, 20k output reserve, 13k autocompact buffer, …);
the reserve, buffer and minimum savings scale with the window when not given, so a small window
such as ``ContextPolicy(context_window=30_000)`` is usable as is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from contextwarden.model import FrozenDict

OUTPUT_RESERVE_RATIO = 0.10
"""Share of the window kept for the model's reply when ``max_output_reserve`` is not given."""

AUTOCOMPACT_BUFFER_RATIO = 0.065
"""Share of the window kept free below the effective window when ``autocompact_buffer`` is not
given (13,000 of 200,000, Claude Code's buffer)."""

MIN_SAVING_RATIO = 0.10
"""Share of the window microcompact must save when ``microcompact_min_saving`` is not given
(20,000 at 200,000, Claude Code's minimum)."""

MESSAGE_RESULTS_RATIO = 0.20
"""Share of the effective window the tool results of one message may take together when
``max_message_result_tokens`` is not given (36,000 tokens at 200,000)."""

SUMMARY_KEEP_RATIO = 0.20
"""Share of the window kept verbatim after a summary when ``summary_keep_tokens`` is not given,
less what the summary's floor takes beyond ``SUMMARY_RATIO`` at a small window
(``default_keep_tokens``)."""

SUMMARY_RATIO = 0.10
"""Share of the window a summary may take (the offline summary's ``StructuredPolicy.budget_ratio``:
20,000 tokens at 200,000)."""

SUMMARY_FLOOR_TOKENS = 8_000
"""The least a summary may take, whatever the window (``summary_floor``). What a long session has
to carry (what the person asked, the files, the errors, the decisions and findings) does not shrink
with the window: at 40,000 tokens, 10 % (4,000) dropped a third of the decisions of sessions the
summary was never tuned on, and 8,000 kept most (docs/benchmarks.md)."""

SUMMARY_FLOOR_RATIO = 0.25
"""The floor never takes more than this share of the window, so a summary plus the tail kept
verbatim stays well under the autocompact threshold even at a tiny window."""

DEFAULT_COMPACTABLE_TOOLS: tuple[str, ...] = (
    "Read",
    "Bash",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
    "Edit",
    "Write",
)
DEFAULT_RESULT_LIMITS: FrozenDict = FrozenDict({"Bash": 30_000})
CLEARED_MARKER = "[Old tool result content cleared]"
DROPPED_NOTE = (
    "[contextwarden: {count:,} earlier message(s) were dropped here to fit the context window]"
)
"""Added after the first user message when a truncation drops messages, so the model knows the
conversation has a gap there (nothing leaves the context without a trace). The person did not
type it (``summarizers.typed``)."""
DROPPED_RECALL_NOTE = (
    "[contextwarden: {count:,} earlier message(s) were dropped here to fit the context window; "
    'recall(id="{id}") reads them back verbatim]'
)
"""``DROPPED_NOTE`` when the model is offered the ``recall`` tool (``ContextPolicy.recall``): it
also names the dropped span's id, as a summary names its own."""
DROPPED_NOTE_OPENING = DROPPED_NOTE.split("{", 1)[0]

OverflowPolicy = Literal["raise", "flag"]
"""What ``prepare`` does when even the last-resort cap leaves the request over the window."""


@dataclass(frozen=True, slots=True)
class ContextPolicy:
    """The window, thresholds and budgets of the compaction ladder.

    Fields given as ``None`` are derived from ``context_window`` in ``__post_init__`` (the
    ratios above), so after construction every field holds a number.
    """

    # ---------------------------------------------------------------- window and thresholds
    context_window: int = 200_000
    """Tokens the model accepts in one request (prompt + reply)."""
    max_output_reserve: int | None = None
    """Tokens kept for the reply; ``None``: 10 % of the window (20,000 at 200,000)."""
    autocompact_buffer: int | None = None
    """Autocompact fires at ``effective_window - autocompact_buffer`` tokens; ``None``: 6.5 % of
    the window (13,000 at 200,000, so the threshold is 167,000)."""
    warning_ratio: float = 0.8
    """``is_near_limit`` is true above this share of the window (the seed's ``isNearLimit``)."""

    # ---------------------------------------------------------------- truncation and breaker
    keep_recent_turns: int = 10
    """Truncation keeps the first user message and this many of the latest turns."""
    max_consecutive_failures: int = 3
    """Summarizer failures in a row after which autocompact stops calling it (circuit breaker).
    A summary declined because it would not save tokens is no failure: autocompact backs off
    (``retry_after_tokens``)."""
    retry_after_tokens: int | None = None
    """After a summary declined because it would not have saved tokens, autocompact is not tried
    again until the conversation has grown by this many tokens (what compaction removed
    meanwhile counts as grown), or until a manual ``compact``; sooner, once, when the context
    first goes over the effective window after a decline under it (truncation would otherwise
    drop what a summary keeps). Truncation still keeps each request inside the window meanwhile.
    ``None``: ``autocompact_buffer`` (13,000 at 200,000; 2,600 at 40,000), the room the policy
    keeps between autocompact's threshold and the effective window: a summary declined at the
    threshold is tried again when the context reaches the window, where truncation would start.
    Each further decline in a row doubles the wait (``compaction.breaker.Backoff.wait``, at most
    the effective window), so an LLM summarizer whose summaries never save is asked a number of
    times that grows with the logarithm of the session's length (then once per window of
    growth), not on every request;
    a summary's budget (20,000 at 200,000, 8,000 at 40,000) waited too long at a small window:
    truncation dropped turns that the next summaries would have kept (docs/benchmarks.md).
    0: no wait (the next request over the threshold tries again)."""
    small_window_ratio: float = 0.75
    """A summary that leaves the context at or above this share of the autocompact threshold
    means the window is too small for the session (summaries would follow each other every few
    requests): ``prepare``'s report carries a warning."""
    on_overflow: OverflowPolicy = "raise"
    """When the last-resort cap cannot bring the request under the effective window (what is left
    is thinking, tool_use inputs, images, or the preamble): ``"raise"`` ContextOverflowError, or
    ``"flag"`` it in the report (``over_window`` and a warning) and let the caller decide."""

    # ---------------------------------------------------------------- tool result budget, snip
    max_result_chars: Mapping[str, int] = field(default=DEFAULT_RESULT_LIMITS)
    """Per-tool limit on one tool result's characters, by tool name (matched with aliases)."""
    default_max_result_chars: int = 50_000
    """Limit for tools not named in ``max_result_chars``."""
    result_head_ratio: float = 0.5
    """Share of a cut tool result's preview taken from its head; the rest is its tail."""
    max_message_result_tokens: int | None = None
    """All tool results of one message together stay within this many tokens (parallel calls are
    cut in proportion); ``None``: 20 % of the effective window. Keeps the latest turn, which is
    never dropped, able to fit the window."""
    max_line_chars: int = 2_000
    """Snip cuts lines of tool results longer than this to a prefix with a marker."""

    # ---------------------------------------------------------------- microcompact
    compactable_tools: tuple[str, ...] = DEFAULT_COMPACTABLE_TOOLS
    """Tools whose old results microcompact may clear (case-insensitive, common aliases too)."""
    keep_recent_tool_results: int = 3
    """Microcompact keeps this many of the latest compactable results untouched."""
    idle_minutes: float = 60.0
    """Microcompact runs after this long without an assistant message: the prompt cache has
    expired, so clearing costs no cache re-write."""
    microcompact_ratio: float = 0.6
    """Microcompact runs when tokens reach this share of the effective window, well below the
    autocompact threshold, so the cheap rung gets its chance before the expensive one."""
    microcompact_min_saving: int | None = None
    """Below this saving microcompact does nothing; ``None``: 10 % of the window."""
    cleared_marker: str = CLEARED_MARKER
    """Text that replaces a cleared tool result's content."""
    cleared_error_lines: int = 4
    """Microcompact keeps up to this many lines of a failed result it clears, after the marker:
    the failure line a summary would quote, then the most telling further failure lines (each
    at most 300 characters), ranked as the offline summary's section 4 ranks them
    (``StructuredPolicy.error_lines``). A rejected call's result, which holds what the person
    typed, is never cleared."""
    cleared_unflagged_lines: int = 1
    """Microcompact keeps up to this many lines of a result it clears that was not found failed
    but says the work it asked for did not happen (an HTTP error page's heading a script
    printed, ``504 Gateway Time-out``; the shell's ``zsh:1: no matches found: *.go``;
    ``summarizers.unflagged``), each at most 200 characters, after ``Lines that read like a
    failure:``. A program's own error lines after exit 0 are not kept (it handled them). Across
    fit sets 1 and 3-15 five results keep a line, all true failures; 0 turns it off."""

    recall: bool = False
    """The model is offered the ``recall`` tool (``contextwarden.recall``): each summary then
    names the id that brings back the messages it covers. Off by default, since a model without
    the tool could not use the id."""

    # ---------------------------------------------------------------- summary
    summary_keep_tokens: int | None = None
    """Autocompact keeps the latest messages verbatim up to this many tokens; ``None``: 20 %
    of the window (40,000 at 200,000), less what the summary's floor takes beyond its 10 % at a
    small window (4,000 at 40,000: ``default_keep_tokens``)."""
    summary_room_ratio: float = 0.5
    """...and at most this share of the room the fixed part (system prompt + tools) leaves
    below the autocompact threshold, so after a summary the conversation grows for several
    turns before the next one (hysteresis: an agent whose tools take most of the window would
    otherwise be summarized on nearly every request)."""

    # ---------------------------------------------------------------- re-attached files
    max_files: int = 5
    """After autocompact, re-read at most this many recently used files."""
    max_tokens_per_file: int = 5_000
    """Each re-read file is cut to this many tokens."""
    restore_budget: int = 50_000
    """All re-read files together stay within this many tokens."""
    restore_window_ratio: float = 0.3
    """…and within this share of the effective window, so that at a small window a summary with
    its re-read files still shrinks the context (0.3 of 180,000 is 54,000: the 200K defaults are
    unchanged)."""

    def __post_init__(self) -> None:
        window = self.context_window
        if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
            raise ValueError(f"context_window must be a positive int, got {window!r}")
        derived = {
            "max_output_reserve": OUTPUT_RESERVE_RATIO,
            "autocompact_buffer": AUTOCOMPACT_BUFFER_RATIO,
            "microcompact_min_saving": MIN_SAVING_RATIO,
        }
        for name, ratio in derived.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, round(window * ratio))
        if self.summary_keep_tokens is None:
            object.__setattr__(self, "summary_keep_tokens", default_keep_tokens(window))
        if self.retry_after_tokens is None:
            object.__setattr__(self, "retry_after_tokens", self.autocompact_buffer)
        if self.max_message_result_tokens is None:
            effective = window - _int(self.max_output_reserve)
            object.__setattr__(
                self, "max_message_result_tokens", max(1, round(effective * MESSAGE_RESULTS_RATIO))
            )
        if not isinstance(self.max_result_chars, FrozenDict):  # keep the policy hashable
            object.__setattr__(self, "max_result_chars", FrozenDict(self.max_result_chars))
        object.__setattr__(self, "compactable_tools", tuple(self.compactable_tools))
        _check(self)

    # ---------------------------------------------------------------- derived numbers
    @property
    def output_reserve(self) -> int:
        """``max_output_reserve`` as an int (always set after construction)."""
        return _int(self.max_output_reserve)

    @property
    def buffer(self) -> int:
        """``autocompact_buffer`` as an int (always set after construction)."""
        return _int(self.autocompact_buffer)

    @property
    def effective_window(self) -> int:
        """Tokens the prompt may use: the window minus the output reserve."""
        return self.context_window - self.output_reserve

    @property
    def autocompact_threshold(self) -> int:
        """Autocompact fires at or above this many tokens (167,000 with the defaults)."""
        return self.effective_window - self.buffer

    @property
    def warning_threshold(self) -> int:
        """``is_near_limit`` is true above this many tokens (160,000 with the defaults)."""
        return math.floor(self.context_window * self.warning_ratio)

    @property
    def microcompact_threshold(self) -> int:
        """Microcompact may run at or above this many tokens."""
        return math.floor(self.effective_window * self.microcompact_ratio)

    @property
    def min_saving(self) -> int:
        """``microcompact_min_saving`` as an int (always set after construction)."""
        return _int(self.microcompact_min_saving)

    @property
    def retry_after(self) -> int:
        """``retry_after_tokens`` as an int (always set after construction)."""
        return _int(self.retry_after_tokens)

    @property
    def message_result_tokens(self) -> int:
        """``max_message_result_tokens`` as an int (always set after construction)."""
        return _int(self.max_message_result_tokens)

    @property
    def reattach_tokens(self) -> int:
        """What re-read files may take in all: ``restore_budget`` within
        ``restore_window_ratio`` of the effective window."""
        return min(
            self.restore_budget, math.floor(self.effective_window * self.restore_window_ratio)
        )

    @property
    def keep_tokens(self) -> int:
        """``summary_keep_tokens`` as an int (always set after construction)."""
        return _int(self.summary_keep_tokens)

    def kept_tail_budget(self, fixed: int) -> int:
        """Tokens a summary keeps verbatim when ``fixed`` tokens (the preamble) are always sent:
        ``keep_tokens`` within ``summary_room_ratio`` of the room under the threshold."""
        room = max(self.autocompact_threshold - fixed, 0)
        return min(self.keep_tokens, math.floor(room * self.summary_room_ratio))

    def result_limit(self, canonical_tool: str | None) -> int:
        """The character limit for one result of ``canonical_tool`` (see ``compaction.tools``)."""
        if canonical_tool is not None:
            for name, limit in self.max_result_chars.items():
                if name.lower() == canonical_tool.lower():
                    return int(limit)
        return self.default_max_result_chars


def summary_floor(
    window: int, tokens: int = SUMMARY_FLOOR_TOKENS, ratio: float = SUMMARY_FLOOR_RATIO
) -> int:
    """The least a summary may take at ``window``: ``tokens``, within ``ratio`` of the window."""
    return min(tokens, int(window * ratio))


def default_keep_tokens(window: int) -> int:
    """What autocompact keeps verbatim at ``window`` when ``summary_keep_tokens`` is not given.

    ``SUMMARY_KEEP_RATIO`` of the window, less what the summary's floor takes beyond
    ``SUMMARY_RATIO``: the summary and the tail share the room, so the context right after a
    summary is no larger at a small window for the summary's floor (40,000 tokens: an 8,000-token
    summary and a 4,000-token tail, where a 4,000 and an 8,000 were; 80,000 and up: unchanged).
    Never below 5 % of the window (``SUMMARY_KEEP_RATIO`` less the floor's ratio beyond
    ``SUMMARY_RATIO``).
    """
    beyond = max(0, summary_floor(window) - int(window * SUMMARY_RATIO))
    return round(window * SUMMARY_KEEP_RATIO) - beyond


def _int(value: int | None) -> int:
    assert value is not None, "ContextPolicy.__post_init__ derives every optional number"
    return value


def _check(policy: ContextPolicy) -> None:
    """Reject nonsense with a message naming the field and the value."""
    non_negative = (
        "max_output_reserve",
        "autocompact_buffer",
        "microcompact_min_saving",
        "retry_after_tokens",
    )
    positive = (
        "keep_recent_turns",
        "max_consecutive_failures",
        "default_max_result_chars",
        "max_line_chars",
        "max_files",
        "max_tokens_per_file",
        "restore_budget",
        "summary_keep_tokens",
        "max_message_result_tokens",
    )
    for name in non_negative:
        _require(policy, name, getattr(policy, name) >= 0, "must be >= 0")
    for name in positive:
        _require(policy, name, getattr(policy, name) > 0, "must be > 0")
    for name in ("keep_recent_tool_results", "cleared_error_lines", "cleared_unflagged_lines"):
        _require(policy, name, getattr(policy, name) >= 0, "must be >= 0")
    _require(policy, "idle_minutes", policy.idle_minutes > 0, "must be > 0")
    ok = policy.on_overflow in ("raise", "flag")
    _require(policy, "on_overflow", ok, 'must be "raise" or "flag"')
    ratios = (
        "warning_ratio",
        "microcompact_ratio",
        "result_head_ratio",
        "small_window_ratio",
        "restore_window_ratio",
        "summary_room_ratio",
    )
    for name in ratios:
        _require(policy, name, 0 <= getattr(policy, name) <= 1, "must be between 0 and 1")
    if policy.autocompact_threshold <= 0:
        raise ValueError(
            f"max_output_reserve ({policy.max_output_reserve}) + autocompact_buffer "
            f"({policy.autocompact_buffer}) leave no room in a {policy.context_window}-token "
            "window; lower them or raise context_window"
        )
    for tool, limit in policy.max_result_chars.items():
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise ValueError(f"max_result_chars[{tool!r}] must be a positive int, got {limit!r}")
    if not policy.cleared_marker.strip():
        raise ValueError("cleared_marker must contain non-whitespace text")


def _require(policy: ContextPolicy, name: str, ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"ContextPolicy.{name} {what}, got {getattr(policy, name)!r}")
