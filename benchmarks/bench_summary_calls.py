"""How often the ladder calls the summarizer on the fresh sets, and what came of each call: the
summaries applied, the summaries declined because they would not save tokens, the back-offs and
breaker openings that followed, the truncations (issue #26). An LLM summarizer's calls cost
money, so a change to when autocompact runs reports them.

    PYTHONPATH=src python benchmarks/bench_summary_calls.py --fresh DATA [--sets 19 20]
    PYTHONPATH=BASE/src python benchmarks/bench_summary_calls.py --fresh DATA   # the *before*

Each session of a set is replayed as ``bench_fresh.py`` replays it (the ladder, a 40,000-token
window, the offline summary, ``ContextPolicy()``); the package measured is the one on
``PYTHONPATH``. Calls are counted around the summarizer, applied summaries and truncations from
the replay's marks, back-offs and breaker openings from the manager's log lines, so any version
of the package can be measured. *declined*: calls whose summary was not applied (the offline
summarizer does not fail, so each would not have saved tokens).
"""

from __future__ import annotations

import argparse
import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bench_fresh import WINDOW, bench_for
from bench_fresh_all import folders, sets_here

from contextwarden.eval.probes import load_probes
from contextwarden.eval.replay import replay
from contextwarden.formats import load
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer
from contextwarden.summarizers.base import Summary
from contextwarden.tokens.heuristic import HeuristicCounter

COLUMNS = ("calls", "applied", "declined", "backed off", "breaker opened", "truncations")


class Counting:
    """The offline summarizer, counting its calls."""

    def __init__(self, inner: StructuredSummarizer) -> None:
        self.inner, self.calls = inner, 0

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        self.calls += 1
        return self.inner.summarize(messages, instructions=instructions)


class Tally(logging.Handler):
    """Counts the manager's notices that autocompact backed off or its breaker opened."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.counts: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text.startswith("autocompact backs off"):
            self.counts["backed off"] += 1
        if text.startswith("autocompact circuit breaker open"):
            self.counts["breaker opened"] += 1


def measure(n: int, fresh: Path) -> Counter[str]:
    """Set ``n``'s counts over its sessions."""
    probes, data = folders(n, fresh)
    bench = bench_for(probes, data)
    counter, tally = HeuristicCounter(), Tally()
    logger = logging.getLogger("contextwarden")
    logger.addHandler(tally)
    logger.setLevel(logging.INFO)
    counts: Counter[str] = Counter()
    try:
        for session in bench.sessions:
            history = load(data / session.path, index=session.index, counter=counter)
            summarizer = Counting(StructuredSummarizer(StructuredPolicy(context_window=WINDOW)))
            result = replay(
                history,
                ("ladder",),
                probes=load_probes(bench.probes / session.probes),
                summarizer=summarizer,
                policy=ContextPolicy(context_window=WINDOW),
            )
            rungs = Counter(m.name for m in result.runs["ladder"].marks)  # the rungs applied
            counts.update(
                calls=summarizer.calls,
                applied=rungs["summarize"],
                declined=summarizer.calls - rungs["summarize"],
                truncations=rungs["truncate"],
            )
    finally:
        logger.removeHandler(tally)
    return counts + tally.counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fresh", type=Path, required=True, help="folder of fresh, fresh3, …")
    parser.add_argument("--sets", type=int, nargs="+", help="these sets only (default: all)")
    args = parser.parse_args(argv)
    print("| set | " + " | ".join(COLUMNS) + " |")
    print("|---|" + "---:|" * len(COLUMNS))
    total: Counter[str] = Counter()
    for n in args.sets or sets_here():
        counts = measure(n, args.fresh)
        total.update(counts)
        print(f"| {n} | " + " | ".join(str(counts[c]) for c in COLUMNS) + " |", flush=True)
    print("| all | " + " | ".join(str(total[c]) for c in COLUMNS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
