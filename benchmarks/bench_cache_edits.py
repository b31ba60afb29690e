"""How often each ladder breaks the prompt cache, and how far apart its summaries are.

    python benchmarks/bench_cache_edits.py                 # every transcript, 200,000 and 40,000
    python benchmarks/bench_cache_edits.py --only claude-code

Every transcript is replayed through ``ladder`` and ``ladder-cache``; the context sent at each
request is compared with the one sent at the request before. A request whose messages do not
start with the previous request's messages (by value, as the cache keys them) is a cache-busting
edit: from the first changed message on, the prompt is written again (on a warm cache, sent
less than the cache's 5 minutes after the previous request, that write is extra). Per strategy
and window: compactions by rung, cache-busting requests, the tokens they re-wrote, and for
summaries the context they left as a share of the autocompact threshold and the requests until
the next one.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from contextwarden.compaction.cache import CACHE_TTL_SECONDS
from contextwarden.eval.replay import replay
from contextwarden.formats import load
from contextwarden.model import Message
from contextwarden.policy import CLEARED_MARKER, ContextPolicy
from contextwarden.tokens.heuristic import HeuristicCounter

DATA = Path(
    os.environ.get("CONTEXTWARDEN_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
TRANSCRIPTS = DATA / "transcripts"
WINDOWS = (200_000, 40_000)
SUFFIXES = {".jsonl", ".json", ".traj"}
STRATEGIES = ("ladder-cache", "ladder")
SUMMARY = "summarize"
MICROCOMPACT = "microcompact"


@dataclass
class Edits:
    """What one strategy did at one window, summed over sessions."""

    sessions: int = 0
    requests: int = 0
    busting: int = 0
    warm: int = 0
    """Cache-busting requests sent within the cache's lifetime of the previous request."""
    rewritten: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    fills: list[float] = field(default_factory=list)
    """Tokens after each summary / the autocompact threshold."""
    gaps: list[int] = field(default_factory=list)
    """Requests from each summary to the next one in the same session."""
    cleared: list[int] = field(default_factory=list)
    """Tool results each microcompact cleared (one batch: one cache write)."""


def first_difference(before: Sequence[Message], after: Sequence[Message]) -> int | None:
    """Index of the first of ``before``'s messages that ``after`` does not send again."""
    for i, old in enumerate(before):
        if i >= len(after) or after[i] != old:
            return i
    return None


def request_times(messages: Sequence[Message]) -> list[float | None]:
    """When each request was sent, as replay's clock has it: the latest time stamped before
    the assistant message it produced."""
    times: list[float | None] = []
    latest: float | None = None
    for message in messages:
        if message.role == "assistant":
            times.append(latest)
        stamp = message.meta.timestamp
        if stamp is not None and (latest is None or stamp > latest):
            latest = stamp
    return times


def cleared_results(messages: Sequence[Message]) -> int:
    """Tool results in ``messages`` whose content microcompact replaced with its marker."""
    return sum(1 for m in messages for r in m.tool_results if r.text.startswith(CLEARED_MARKER))


def measure(path: Path, window: int, totals: dict[str, Edits]) -> None:
    history = load(path)
    counter = HeuristicCounter()
    sent: dict[str, list[tuple[Message, ...]]] = {name: [] for name in STRATEGIES}

    def observe(name: str, request: int, messages: tuple[Message, ...]) -> None:
        sent[name].append(messages)

    result = replay(history, STRATEGIES, window=window, counter=counter, observe=observe)
    threshold = ContextPolicy(context_window=window).autocompact_threshold
    times = request_times(history.messages)
    for name in STRATEGIES:
        edits, views = totals[name], sent[name]
        edits.sessions += 1
        edits.requests += len(views)
        for t, (before, after) in enumerate(pairwise(views), start=1):
            first = first_difference(before, after)
            if first is not None:
                edits.busting += 1
                then, now = times[t - 1], times[t]
                edits.warm += then is None or now is None or now - then < CACHE_TTL_SECONDS
                edits.rewritten += sum(counter.count_message(m) for m in after[first:])
        run = result.runs[name]
        edits.kinds.update(mark.name for mark in run.marks)
        summaries = [m for m in run.marks if m.name == SUMMARY]
        summarized = {m.turn for m in summaries}
        for mark in run.marks:
            if mark.name == MICROCOMPACT and mark.turn not in summarized and mark.turn > 0:
                before, after = views[mark.turn - 1], views[mark.turn]
                edits.cleared.append(cleared_results(after) - cleared_results(before))
        edits.fills += [m.tokens_after / threshold for m in summaries]
        edits.gaps += [b.turn - a.turn for a, b in pairwise(summaries)]


def table(window: int, totals: dict[str, Edits]) -> list[str]:
    out = [
        f"### Window {window:,}",
        "",
        "| strategy | requests | compactions by rung | cache-busting requests (per session) "
        "| of them on a warm cache | tokens re-written by them "
        "| results cleared per microcompact (mean) "
        "| context after a summary / threshold (mean) | requests between summaries (mean) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in STRATEGIES:
        e = totals[name]
        kinds = ", ".join(f"{n} {k}" for k, n in e.kinds.most_common())
        fill = f"{sum(e.fills) / len(e.fills):.0%}" if e.fills else "—"
        gap = f"{sum(e.gaps) / len(e.gaps):.1f}" if e.gaps else "—"
        batch = f"{sum(e.cleared) / len(e.cleared):.1f}" if e.cleared else "—"
        per = e.busting / e.sessions if e.sessions else 0.0
        out.append(
            f"| {name} | {e.requests:,} | {kinds} | {e.busting} ({per:.2f}) | {e.warm} "
            f"| {e.rewritten:,} | {batch} "
            f"| {fill} | {gap} |"
        )
    return [*out, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="only transcripts under this folder (e.g. claude-code)")
    args = parser.parse_args()
    root = TRANSCRIPTS / args.only if args.only else TRANSCRIPTS
    paths = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    out = [f"{len(paths)} transcripts", ""]
    for window in WINDOWS:
        totals = {name: Edits() for name in STRATEGIES}
        for path in paths:
            measure(path, window, totals)
        out += table(window, totals)
    print("\n".join(out))


if __name__ == "__main__":
    main()
