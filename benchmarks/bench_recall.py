"""The recall path: what the ladder keeps at a 40,000-token window, and what a model that follows
its markers gets back with the ``recall`` tool, side by side, per kind of fact.

    python benchmarks/bench_recall.py                               # print the section
    python benchmarks/bench_recall.py --write docs/benchmarks.md    # replace it in place

Each session is replayed twice in this one run through the ladder: without the tool
(``ContextPolicy()``, today's default) and with it (``ContextPolicy(recall=True)``: each summary
names the id of the span it covers). At the last request, a probe missing from the context counts
as recalled when an original that the context's markers name holds it verbatim, or an original
named in one of those (a summary of a summary names its own span, which holds the summary before
it and that one's span id: ``eval.recall_path``); the last row is what reading them all costs.
Probes are the default ones plus ``reasoning_probes``; the sessions are split as
``bench_retention`` splits them, held-out half first.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench_retention import KINDS, section_main, split

from contextwarden.eval.probes import default_probes, reasoning_probes
from contextwarden.eval.replay import StrategyRun, replay
from contextwarden.formats import load
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer
from contextwarden.tokens.heuristic import HeuristicCounter

SECTION = "## The recall path (40,000-token window)"
COMMAND = "python benchmarks/bench_recall.py --write docs/benchmarks.md"
WINDOW = 40_000
WITHOUT = ContextPolicy(context_window=WINDOW)
WITH = ContextPolicy(context_window=WINDOW, recall=True)


@dataclass
class Tally:
    """Per kind, at the last request: probes due, kept in the context, and back by recall."""

    due: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    recalled: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    calls: int = 0

    def add(self, run: StrategyRun, kinds: dict[str, str]) -> None:
        missing = Counter(kinds[t] for t in run.retention.missing_at_end)
        back = Counter(kinds[t] for t in run.recall.recovered) if run.recall else Counter()
        for kind, n in Counter(kinds.values()).items():
            self.due[kind] += n
            self.kept[kind] += n - missing[kind]
            self.recalled[kind] += back[kind]
        self.sent += run.total_tokens_sent
        self.calls += run.recall.calls if run.recall else 0


def measure(paths: Sequence[Path]) -> tuple[Tally, Tally]:
    without, with_tool = Tally(), Tally()
    counter = HeuristicCounter()
    for path in paths:
        session = load(path, counter=counter)
        chosen = (*default_probes(session.messages), *reasoning_probes(session.messages))
        for tally, policy in ((without, WITHOUT), (with_tool, WITH)):
            summarizer = StructuredSummarizer(StructuredPolicy(context_window=WINDOW), counter)
            result = replay(
                session, ("ladder",), probes=chosen, summarizer=summarizer, policy=policy
            )
            kinds = {p.text: p.kind for p in result.probes.probes}
            tally.add(result.runs["ladder"], kinds)
    return without, with_tool


def table(name: str, without: Tally, with_tool: Tally) -> list[str]:
    lines = [
        f"**{name}**",
        "",
        "| kind | due at the end | in the context | + recalled (markers only) | "
        "+ recalled (summary names its span) |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind in (*KINDS, "all"):
        due, kept, alone, spans = (
            _n(t, kind) for t in (without.due, without.kept, without.recalled, with_tool.recalled)
        )
        kept_with = _n(with_tool.kept, kind)
        lines.append(
            f"| {kind} | {due} | {_share(kept, due)} | {_share(kept + alone, due)} | "
            f"{_share(kept_with + spans, due)} |"
        )
    lines.append(
        f"| tokens sent | | {without.sent:,} | {without.sent:,} | {with_tool.sent:,} "
        f"({with_tool.sent / max(1, without.sent):.4f}x) |"
    )
    lines.append(f"| recall calls to read every named original | | | {without.calls:,} | "
                 f"{with_tool.calls:,} |")  # fmt: skip
    return lines


def _n(counts: Counter[str], kind: str) -> int:
    return sum(counts.values()) if kind == "all" else counts[kind]


def _share(n: int, of: int) -> str:
    return f"{n}/{of} ({n / of:.1%})" if of else "n/a"


def section() -> str:
    started = time.process_time()
    fit, held = split()
    parts = [SECTION, ""]
    for name, paths in (("Held out", held), ("Fit", fit)):
        without, with_tool = measure(paths)
        parts += [*table(f"{name} ({len(paths)} sessions)", without, with_tool), ""]
    parts.append(__doc__.split("\n\n", 2)[2].strip())
    parts.append("")
    parts.append(
        f"`{COMMAND}` ({sys.platform}, Python {sys.version.split()[0]}; "
        f"{time.process_time() - started:.0f} s CPU)."
    )
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    return section_main(__doc__, section, argv)


if __name__ == "__main__":
    raise SystemExit(main())
