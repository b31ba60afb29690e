"""Recorded Claude Code sessions replayed through ConversationHistory with their real usage: how
far the history's estimate of each request's growth is from what Claude reported.

Shared by tests/test_tokens_calibration.py and benchmarks/bench_usage.py (which fits the priors
on one half of the sessions and reports on the other).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from contextwarden.formats.claude_code import read
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import Message, thaw
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.calibration import tool_blocks
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.tokens.ledger import usage_prompt

MIN_GROWTH = 1_000
"""Requests that added fewer tokens are left out: a few tokens of framing are already 10 %."""
UNDER = 0.9
"""An estimate under this share of the reported growth counts as an under-count."""


@dataclass(frozen=True, slots=True)
class Session:
    path: Path
    model: str
    """The model of most replies."""
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class Growth:
    """One request: what the history estimated it grew by since the previous request, what
    Claude reported, and what the counter counted for the messages it added (the previous reply
    included) and the tool blocks among them."""

    model: str
    estimated: int
    reported: int
    counted: int
    tool_blocks: int


def load_session(path: Path) -> Session | None:
    """The session's messages (Claude Code loader), or None when no reply names a Claude model."""
    messages = tuple(read(path, LoadReport(str(path), "claude-code")).messages)
    models = [m.meta.extra.get("model") for m in messages if m.role == "assistant"]
    named = [m for m in models if isinstance(m, str) and m.startswith("claude")]
    return Session(path, max(set(named), key=named.count), messages) if named else None


def replay(session: Session, counter: TokenCounter, model: str | None) -> Iterator[Growth]:
    """Replay ``session`` into a history (``model`` picks the calibration; None: raw counts):
    every message added in order and ``record_usage`` on every reply, as an agent does. Before
    each reply, the growth of its request since the previous one: estimate - previous prompt
    against prompt - previous prompt (prompt: input + cache read + cache creation tokens)."""
    history = ConversationHistory(mode="merge", counter=counter, model=model)
    previous: int | None = None
    calls = counted = 0
    for message in session.messages:
        usage = thaw(message.meta.extra.get("usage")) if message.role == "assistant" else None
        prompt = usage_prompt(usage)
        if prompt:  # Claude Code's <synthetic> replies carry zero usage: not a request
            if previous is not None:
                estimated = history.estimate_tokens() - previous
                grown = history.counted_tokens() - counted
                yield Growth(session.model, estimated, prompt - previous, grown, calls)
            counted = history.counted_tokens()
            history.add(message)
            history.record_usage(usage)
            previous, calls = prompt, tool_blocks(message)
        else:
            history.add(message)
            calls += tool_blocks(message)


def upstream_scale(path: Path) -> tuple[str, float] | None:
    """The session's model and its reported tokens per counted (heuristic) token over the
    requests that grew by ``MIN_GROWTH`` or more (a model of what Claude would count for any
    request of the session); None when it names no Claude model or grew too little to tell."""
    session = load_session(path)
    if session is None:
        return None
    growths = [g for g in replay(session, HeuristicCounter(), None) if g.reported >= MIN_GROWTH]
    counted = sum(g.counted for g in growths)
    if counted <= 0:
        return None
    return session.model, sum(g.reported for g in growths) / counted


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True, slots=True)
class Accuracy:
    """Estimated / reported growth over requests that grew by MIN_GROWTH or more."""

    requests: int
    median: float
    p10: float
    p90: float
    under: float
    """Share of those requests estimated under UNDER of the reported growth."""


def accuracy(growths: Sequence[Growth]) -> Accuracy:
    ratios = [g.estimated / g.reported for g in growths if g.reported >= MIN_GROWTH]
    return Accuracy(
        len(ratios),
        statistics.median(ratios),
        quantile(ratios, 0.1),
        quantile(ratios, 0.9),
        sum(r < UNDER for r in ratios) / len(ratios),
    )
