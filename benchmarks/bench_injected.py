"""What the first message's injected context costs every summary message, before and after it is
carried as a reference (issue #26): the project's sessions at a 40,000-token window.

    python benchmarks/bench_injected.py                                # this checkout alone
    python benchmarks/bench_injected.py --baseline SRC                 # and another as *before*

The sessions and probes are ``bench_retention``'s (its fixed fit / held-out split; typed user
messages, files, failure lines, decisions and error messages), replayed through the default
ladder and offline summary as ``bench_retention``'s *after* column does, and billed at
``bench_fresh.PRICED_AT`` prices with its prompt cache. Per half: the probes kept at the last
request, tokens sent, modeled cost, and the tokens of the conversation's first message inside
the last context's summary message (``first_blocks`` of the lead), summed over sessions.
``--baseline SRC`` runs the same in a subprocess with the package in ``SRC``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_fresh import PRICED_AT
from bench_retention import AFTER, KINDS, LADDER_AFTER, WINDOW, split

from contextwarden.cost.prices import default_prices
from contextwarden.eval.probes import default_probes, reasoning_probes
from contextwarden.eval.replay import replay
from contextwarden.formats import load
from contextwarden.model import Message
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.tokens.heuristic import HeuristicCounter

FIRST_BLOCKS_KEY = "contextwarden.first_blocks"
"""``compaction.cuts.FIRST_BLOCKS_KEY``, spelled out so a baseline checkout reads it too."""


@dataclass
class Half:
    """Kept and due probes per kind at the last request, tokens sent, cost, first-message tokens."""

    kept: Counter[str] = field(default_factory=Counter)
    due: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    cost: float = 0.0
    first_tokens: int = 0


def measure(paths: Sequence[Path]) -> Half:
    half = Half()
    counter = HeuristicCounter()
    price = default_prices().get(PRICED_AT)
    for path in paths:
        session = load(path, counter=counter)
        chosen = (*default_probes(session.messages), *reasoning_probes(session.messages))
        last = _Last()
        result = replay(
            session,
            ("ladder",),
            probes=chosen,
            summarizer=StructuredSummarizer(AFTER, counter),
            policy=LADDER_AFTER,
            pricing=price,
            observe=last,
        )
        run = result.runs["ladder"]
        kinds = {p.text: p.kind for p in result.probes.probes}
        missing = Counter(kinds[t] for t in run.retention.missing_at_end)
        for kind, n in Counter(kinds.values()).items():
            half.due[kind] += n
            half.kept[kind] += n - missing[kind]
        half.sent += run.total_tokens_sent
        half.cost += run.bill.cost if run.bill else 0.0
        half.first_tokens += _first_tokens(last.sent, counter)
    return half


class _Last:
    """An observer keeping the context of the last request."""

    sent: tuple[Message, ...] = ()

    def __call__(self, _strategy: str, _turn: int, sent: tuple[Message, ...]) -> None:
        self.sent = sent


def _first_tokens(sent: Sequence[Message], counter: HeuristicCounter) -> int:
    """Tokens of the first message's blocks at the head of a summary message (0: no summary)."""
    if not sent:
        return 0
    kept = sent[0].meta.extra.get(FIRST_BLOCKS_KEY)
    if not isinstance(kept, int) or isinstance(kept, bool):
        return 0
    return counter.count_message(Message("user", sent[0].content[:kept]))


def baseline(src: Path) -> dict[str, Half]:
    """``measure`` of both halves with the package in ``src``, in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, __file__, "--json"]
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    return {name: _half(values) for name, values in json.loads(out).items()}


def _half(values: dict[str, Any]) -> Half:
    return Half(
        Counter(values["kept"]),
        Counter(values["due"]),
        values["sent"],
        values["cost"],
        values["first_tokens"],
    )


def halves() -> dict[str, Half]:
    fit, held = split()
    return {"held out": measure(held), "fit": measure(fit)}


def table(name: str, before: Half, after: Half) -> list[str]:
    lines = [
        f"**{name}**",
        "",
        "| | before | after |",
        "|---|---:|---:|",
    ]
    for kind in KINDS:
        cells = [f"{h.kept[kind]}/{h.due[kind]}" for h in (before, after)]
        lines.append(f"| {kind} at the last request | " + " | ".join(cells) + " |")
    ratio = after.sent / max(1, before.sent)
    lines.append(f"| tokens sent | {before.sent:,} | {after.sent:,} ({ratio:.4f}x) |")
    ratio = after.cost / max(1e-9, before.cost)
    lines.append(
        f"| modeled cost at {PRICED_AT} prices, prompt cache | ${before.cost:,.2f} "
        f"| ${after.cost:,.2f} ({ratio:.4f}x) |"
    )
    lines.append(
        "| first message's tokens in the last summary message, summed | "
        f"{before.first_tokens:,} | {after.first_tokens:,} |"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="a src folder to measure as 'before'")
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args(argv)
    after = halves()
    if args.json:
        print(json.dumps({name: vars(half) for name, half in after.items()}))
        return 0
    before = baseline(args.baseline) if args.baseline is not None else after
    for name, half in after.items():
        print("\n".join([*table(f"{name} (window {WINDOW:,})", before[name], half), ""]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
