"""What a replay measured: each strategy's run over a session (tokens sent, the rungs that
changed the context and what they removed, retention, cost) and the whole result, with its JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextwarden.cost.bill import Bill
from contextwarden.eval.probes import ProbeSet
from contextwarden.eval.recall_path import RecallPath
from contextwarden.eval.retention import Retention
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.searchable import SEPARATOR, message_text
from contextwarden.summarizers.typed import SUMMARY_KEY

CHANGE_PREVIEWS = 6
"""Messages a compaction removed or rewrote, previewed per change (all are counted)."""
CHANGE_PREVIEW_CHARS = 160
CHANGE_SUMMARY_CHARS = 40_000
"""A summary longer than this is kept for the report by its head (the rest is counted)."""


@dataclass(frozen=True, slots=True)
class Mark:
    """A rung that changed the context before request ``turn``."""

    turn: int
    name: str
    trigger: str
    tokens_before: int
    tokens_after: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Change:
    """What the rungs that ran before request ``turn`` did to the context, for a reader:
    the messages that left it (removed, or replaced by a rewritten copy) and any summary."""

    turn: int
    rungs: tuple[str, ...]
    removed: int
    previews: tuple[str, ...]
    """``role: first characters`` of the first ``CHANGE_PREVIEWS`` messages that left."""
    summary: str = ""
    """The text of the summary message the change added (empty: no summary)."""

    @classmethod
    def between(
        cls, turn: int, marks: Sequence[Mark], before: Sequence[Message], after: Sequence[Message]
    ) -> Change:
        """What the rungs ``marks`` did to the context ``before``, leaving ``after``."""
        kept, old = {id(m) for m in after}, {id(m) for m in before}
        left = [m for m in before if id(m) not in kept]
        previews = tuple(
            f"{m.role}: {_flat(message_text(m), CHANGE_PREVIEW_CHARS)}"
            for m in left[:CHANGE_PREVIEWS]
        )
        summaries = [  # the blocks of a summary message apart (the summary, a merged user turn)
            message_text(m).replace(SEPARATOR, "\n\n")
            for m in after
            if id(m) not in old and m.meta.extra.get(SUMMARY_KEY)
        ]
        summary = "\n\n".join(summaries)
        if len(summary) > CHANGE_SUMMARY_CHARS:
            more = len(summary) - CHANGE_SUMMARY_CHARS
            summary = f"{summary[:CHANGE_SUMMARY_CHARS]}\n… ({more:,} more characters)"
        rungs = tuple(dict.fromkeys(m.name for m in marks))
        return cls(turn, rungs, len(left), previews, summary)


@dataclass(frozen=True, slots=True)
class StrategyRun:
    """Everything measured for one strategy over one session."""

    name: str
    description: str
    tokens: tuple[int, ...]
    """Context tokens sent at each request (after ``prepare``)."""
    window: int
    over_window: int
    invalid_requests: int
    marks: tuple[Mark, ...]
    compaction_seconds: float
    """Seconds the rungs took (every rung run, applied or not, from the manager's events)."""
    prepare_seconds: float
    """Seconds in ``prepare`` altogether, the checks that found nothing to do included."""
    retention: Retention
    problems: tuple[str, ...] = ()
    """The first invalid requests and compaction errors, in words."""
    compaction_errors: int = 0
    bill: Bill | None = None
    """Each request's cache reads, writes and cost under the cache model (``pricing`` given)."""
    changes: tuple[Change, ...] = ()
    """What each request's compaction removed, and its summary text (see ``Change``)."""

    warnings: tuple[str, ...] = ()
    """What the strategy's reports warned about, once each with how many requests it concerned:
    a window too small for the session, requests that could not fit (ContextOverflowError)."""
    recall: RecallPath | None = None
    """What a model following the markers of the last context would get back with ``recall``."""

    @property
    def total_tokens_sent(self) -> int:
        return sum(self.tokens)

    @property
    def peak_context(self) -> int:
        return max(self.tokens, default=0)

    @property
    def compactions(self) -> int:
        return len(self.marks)

    @property
    def kinds(self) -> dict[str, int]:
        return dict(sorted(Counter(m.name for m in self.marks).items()))

    def as_json(self) -> dict[str, Any]:
        r = self.retention
        return {
            "total_tokens_sent": self.total_tokens_sent,
            "peak_context": self.peak_context,
            "over_window": self.over_window,
            "invalid_requests": self.invalid_requests,
            "compactions": self.compactions,
            "probe_retention": round(r.share, 6),
            "compaction_seconds": round(self.compaction_seconds, 6),
            "compactions_by_kind": self.kinds,
            "prepare_seconds": round(self.prepare_seconds, 6),
            "compaction_errors": self.compaction_errors,
            "probe_retention_final": round(r.final_share, 6),
            **(self.recall.as_json(r) if self.recall is not None else {}),
            "probe_retention_by_kind": {k: round(r.kind_share(k), 6) for k in r.by_kind},
            "probe_checks": r.checks,
            "probes_missing_at_end": len(r.missing_at_end),
            "tokens_per_request": list(self.tokens),
            "problems": list(self.problems),
            **({"cost": _cost_json(self.bill)} if self.bill is not None else {}),
            "warnings": list(self.warnings),
        }


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.replace(SEPARATOR, " ").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _cost_json(bill: Bill) -> dict[str, Any]:
    return {**bill.as_json(), "cost_per_request_usd": [round(c, 6) for c in bill.costs]}


@dataclass(frozen=True, slots=True)
class ReplayResult:
    source: str
    turns: int
    policy: ContextPolicy
    runs: Mapping[str, StrategyRun]
    probes: ProbeSet
    messages: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def window(self) -> int:
        return self.policy.context_window

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every strategy's warnings, each prefixed with the strategy's name."""
        return tuple(f"{name}: {w}" for name, run in self.runs.items() for w in run.warnings)

    def as_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "window": self.window,
            "strategies": {name: run.as_json() for name, run in self.runs.items()},
            "source": self.source,
            "messages": self.messages,
            "effective_window": self.policy.effective_window,
            "autocompact_threshold": self.policy.autocompact_threshold,
            "probes": len(self.probes),
            "probes_by_kind": dict(sorted(Counter(p.kind for p in self.probes.probes).items())),
            "probes_unchecked": len(self.probes.unchecked),
            "seconds": round(self.seconds, 3),
            "warnings": list(self.warnings),
        }
