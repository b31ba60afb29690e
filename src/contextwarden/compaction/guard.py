"""The window guarantee's steps: a text larger than the window cut first, the last-resort rungs,
and what the caller is told when even they could not make the request fit (ContextOverflowError)
or when the window is too small for the session (a warning in the report).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from contextwarden.compaction.apply import CompactionReport
from contextwarden.compaction.base import Strategy
from contextwarden.compaction.cap import Cap, Oversize, unshrinkable
from contextwarden.compaction.summarize import Summarize
from contextwarden.compaction.truncate import Truncate
from contextwarden.errors import ContextOverflowError
from contextwarden.history import ConversationHistory
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy

WINDOW_TOO_SMALL = "window too small for this session"
"""How the small-window warning begins (replay counts the reports that carry it)."""


def first_resort(history: ConversationHistory, policy: ContextPolicy) -> Oversize:
    """The cut of a text of the latest turn larger than the window allows, which the manager runs
    before the summary when the history is over the effective window (``compaction.cap``)."""
    return Oversize(max_tokens=_cut_budget(history, policy))


def last_resorts(history: ConversationHistory, policy: ContextPolicy) -> tuple[Strategy, ...]:
    """Truncate (keeping a summary at the front: never the one just made), then the cap; the
    manager runs each only while the history is still over the effective window."""
    budget = policy.effective_window - history.preamble_tokens
    return (
        Truncate(max_tokens=max(1, budget), keep_summary=True),
        Cap(max_tokens=_cut_budget(history, policy)),
    )


def _cut_budget(history: ConversationHistory, policy: ContextPolicy) -> int:
    """The effective window in the figure the rungs count from (``counted_tokens``): a usage
    anchor above it lowers the target."""
    anchored = max(0, history.estimate_tokens() - history.counted_tokens())
    return max(1, policy.effective_window - anchored)


def guarded(
    report: CompactionReport,
    history: ConversationHistory,
    policy: ContextPolicy,
    count: Callable[[Message], int],
) -> CompactionReport:
    """``report`` with its warnings; raises ContextOverflowError when the history is still over
    the effective window and ``policy.on_overflow`` is ``"raise"``."""
    if not report.actions and not report.over_window:
        return report  # the common case, a pass with nothing to do: keep it cheap
    warnings = list(report.warnings)
    small = small_window_warning(report, history, policy)
    if small is not None:
        warnings.append(small)
    if report.over_window:
        tokens = history.estimate_tokens()
        capped = [a.details.get("unshrinkable") for a in report.actions if a.name == Cap.name]
        left = (
            capped[-1] if capped and capped[-1] else unshrinkable(history.messages, tokens, count)
        )
        error = ContextOverflowError(tokens, policy.effective_window, left)
        if policy.on_overflow == "raise":
            raise error
        warnings.append(str(error))
    return replace(report, warnings=tuple(warnings)) if warnings else report


def small_window_warning(
    report: CompactionReport, history: ConversationHistory, policy: ContextPolicy
) -> str | None:
    """The warning when a summary made in this pass still leaves the context at
    ``policy.small_window_ratio`` of the autocompact threshold or more: the fixed part (system
    prompt, tools, first message, summary, kept turns) leaves so little room that summaries will
    repeat every few requests, losing detail each time."""
    if Summarize.name not in report.applied:
        return None
    tokens, threshold = history.estimate_tokens(), policy.autocompact_threshold
    if tokens < policy.small_window_ratio * threshold:
        return None
    return (
        f"{WINDOW_TOO_SMALL}: after a summary the context still holds {tokens:,} of the "
        f"{threshold:,} tokens at which autocompact fires ({tokens / threshold:.0%}; system prompt "
        f"and tools: {history.preamble_tokens:,}), so it will be summarized again within a few "
        "requests; use a larger context_window or a smaller summary_keep_tokens"
    )
