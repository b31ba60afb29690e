"""Where the offline summary's budget goes (issue #26): over every summary written while the
study sets' sessions are replayed as ``bench_fresh`` does (40,000-token window, default ladder
and offline summarizer), the tokens each kind of line takes in the summaries sent and those the
budget left out, and how many of them hold a hand-written probe: any probe, or one that no other
line of the same summary holds (what the line alone carries).

    python benchmarks/bench_budget.py --fresh DATA --sets 1 3 4 5

A line is an item of ``StructuredSummarizer.layout`` (``sections.Item``), named by its section and
its kind (``5:decisions``; ``6:unranked`` is a user message, never dropped). Its tokens are the
summary's counter's, plus one for its line break; labels are counted as ``label``. A kind that
holds many tokens and few probes no other line holds is what a summary at its budget could spend
on something else; one that the budget drops though it holds probes is what the ranking cuts.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench_fresh import PRICED_AT, WINDOW, bench_for
from bench_fresh_all import folders

from contextwarden.cost.prices import default_prices
from contextwarden.eval.probes import load_probes
from contextwarden.eval.replay import replay
from contextwarden.formats import load
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer, extract_facts
from contextwarden.summarizers.base import Summary
from contextwarden.summarizers.sections import Item, dropped
from contextwarden.tokens.heuristic import HeuristicCounter

COLUMNS = ("kept", "kept, a probe", "kept, alone", "dropped", "dropped, a probe", "dropped, lost")
"""Tokens per kind: in the summaries sent; of those, in lines holding a probe, and in lines
holding a probe no other kept line holds (what they alone carry); left out by the budget; of
those, in lines holding a probe, and in lines holding a probe no kept line holds (what the
summary lost with them)."""


@dataclass
class Ledger:
    """A summarizer that writes each summary as the offline one does, and counts its lines."""

    inner: StructuredSummarizer
    probes: Sequence[str] = ()
    tokens: dict[str, Counter[str]] = field(default_factory=dict)
    summaries: int = 0
    sent: int = 0

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        facts = extract_facts(messages)
        sections, limit = self.inner.layout(facts, instructions=instructions)
        gone = dropped(sections, limit, self.inner.counter)
        kept = {
            (n, i): item.text
            for n, items in sections.items()
            for i, item in enumerate(items)
            if (n, i) not in gone
        }
        for n, items in sections.items():
            for i, item in enumerate(items):
                others = [text for at, text in kept.items() if at != (n, i)]
                self._count(n, item, (n, i) in gone, others)
        summary = self.inner.from_facts(facts, instructions=instructions)
        self.summaries += 1
        self.sent += self.inner.counter.count_text(summary.text)
        return summary

    def _count(self, section: int, item: Item, lost: bool, others: Sequence[str]) -> None:
        """Adds ``item``'s tokens to its kind's row; ``others`` are the other lines kept."""
        kind = "label" if item.label else (item.kind or "unranked")
        row = self.tokens.setdefault(f"{section}:{kind}", Counter())
        tokens = self.inner.counter.count_text(item.text) + 1
        held = [p for p in self.probes if p in item.text]
        alone = any(all(p not in text for text in others) for p in held)
        where = "dropped" if lost else "kept"
        row[where] += tokens
        row[f"{where}, a probe"] += tokens if held else 0
        row["dropped, lost" if lost else "kept, alone"] += tokens if alone else 0


def measure(fresh: Path, sets: Sequence[int]) -> Ledger:
    """The ledger of every summary written for the sessions of ``sets``."""
    counter = HeuristicCounter()
    ledger = Ledger(StructuredSummarizer(StructuredPolicy(context_window=WINDOW), counter))
    price = default_prices().get(PRICED_AT)
    for n in sets:
        probes, data = folders(n, fresh)
        if not data.is_dir():
            print(f"set {n}: no sessions at {data}, skipped", file=sys.stderr)
            continue
        bench = bench_for(probes, data)
        for session in bench.sessions:
            history = load(data / session.path, index=session.index, counter=counter)
            chosen = load_probes(bench.probes / session.probes)
            ledger.probes = [p.text for p in chosen]
            replay(
                history,
                ("ladder",),
                probes=chosen,
                summarizer=ledger,
                policy=ContextPolicy(context_window=WINDOW),
                pricing=price,
            )
    return ledger


def table(ledger: Ledger) -> list[str]:
    """The ledger as a Markdown table, the kinds that take most tokens first."""
    lines = [
        f"{ledger.summaries} summaries, {ledger.sent:,} tokens sent",
        "",
        "| line | " + " | ".join(COLUMNS) + " |",
        "|---|" + "--:|" * len(COLUMNS),
    ]
    rows = sorted(ledger.tokens.items(), key=lambda kv: -(kv[1]["kept"] + kv[1]["dropped"]))
    for kind, row in rows:
        lines.append(f"| {kind} | " + " | ".join(f"{row[c]:,}" for c in COLUMNS) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fresh", type=Path, required=True, help="folder of the sets' sessions")
    parser.add_argument("--sets", type=int, nargs="+", required=True, help="study set numbers")
    args = parser.parse_args(argv)
    print("\n".join(table(measure(args.fresh, args.sets))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
