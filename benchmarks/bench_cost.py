"""What each context strategy costs with prompt caching, side by side, at two windows, in one run.

    python benchmarks/bench_cost.py                 # every transcript, windows 200,000 and 40,000
    python benchmarks/bench_cost.py --only claude-code
    python benchmarks/bench_cost.py --windows 20000 60000 --cache min_keep_ratio=0.25

Every transcript is replayed through every strategy (``replay --pricing``) with the cache model
billing each request: Claude Code sessions at their own model's prices (and next to what their
recorded usage cost), Codex rollouts at gpt-5's (automatic prefix caching), the rest at
claude-sonnet-4-6's. Then the targets: the cache-aware ladder (``ladder-cache``) costs less than
``none`` where ``none`` fits the window, less than today's ladder, and less than Claude Code's
recorded usage on the same sessions, with fact retention no lower than today's ladder's.
``--cache NAME=VALUE`` sets a field of the ``CachePolicy`` that ``ladder-cache`` plans for.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from contextwarden.compaction.cache import CachePolicy
from contextwarden.cost import default_prices
from contextwarden.cost.prices import Price
from contextwarden.cost.recorded import recorded_bill, unseen_preamble
from contextwarden.eval.replay import ReplayResult, StrategyRun, replay
from contextwarden.eval.strategies import STRATEGY_NAMES
from contextwarden.formats import load
from contextwarden.history import ConversationHistory

DATA = Path(
    os.environ.get("CONTEXTWARDEN_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
TRANSCRIPTS = DATA / "transcripts"
WINDOWS = (200_000, 40_000)
SUFFIXES = {".jsonl", ".json", ".traj"}
CODEX_MODEL = "gpt-5"
OTHER_MODEL = "claude-sonnet-4-6"
COMMAND = "python benchmarks/bench_cost.py"
SHOWN = ("ladder-cache", "ladder", "none", "truncate", "mask")


@dataclass
class Totals:
    """Sums over sessions for one window."""

    cost: dict[str, float] = field(default_factory=dict)
    checks: dict[str, float] = field(default_factory=dict)
    present: dict[str, float] = field(default_factory=dict)
    fits_cost: dict[str, float] = field(default_factory=dict)
    """Cost over the sessions where ``none`` never exceeds the window."""
    recorded: float = 0.0
    recorded_model: dict[str, float] = field(default_factory=dict)
    """Each strategy's cost over the sessions with a recorded cost."""
    wins: dict[str, int] = field(default_factory=dict)
    """Sessions where ladder-cache costs no more than the strategy."""
    sessions: int = 0

    def add(self, result: ReplayResult, recorded: float | None) -> None:
        self.sessions += 1
        fits = result.runs["none"].over_window == 0
        cache = result.runs["ladder-cache"]
        for name, run in result.runs.items():
            cost = _cost(run)
            self.cost[name] = self.cost.get(name, 0.0) + cost
            self.checks[name] = self.checks.get(name, 0.0) + run.retention.checks
            present = run.retention.share * run.retention.checks
            self.present[name] = self.present.get(name, 0.0) + present
            if fits:
                self.fits_cost[name] = self.fits_cost.get(name, 0.0) + cost
            if recorded is not None:
                self.recorded_model[name] = self.recorded_model.get(name, 0.0) + cost
            if _cost(cache) <= cost + 1e-9:
                self.wins[name] = self.wins.get(name, 0) + 1
        if recorded is not None:
            self.recorded += recorded

    def retention(self, name: str) -> float:
        return self.present[name] / self.checks[name] if self.checks.get(name) else 1.0


def _cost(run: StrategyRun) -> float:
    assert run.bill is not None
    return run.bill.cost


def _price(path: Path, history: ConversationHistory) -> tuple[Price, float | None]:
    """The model to price at, and the recorded cost (Claude Code sessions only)."""
    table = default_prices()
    if path.parent.name == "claude-code":
        bills = recorded_bill(history, table)
        model = max(bills, key=lambda m: len(bills[m].usages))
        return table.get(model), sum(b.cost for b in bills.values())
    return table.get(CODEX_MODEL if path.parent.name == "codex" else OTHER_MODEL), None


def _row(path: Path, result: ReplayResult, price: Price, recorded: float | None) -> str:
    cells = [path.stem[:48], price.model, str(result.turns)]
    for name in SHOWN:
        run = result.runs[name]
        over = f" ({run.over_window} over)" if run.over_window else ""
        cells.append(f"${_cost(run):,.2f}{over}")
    cells.append(f"${recorded:,.2f}" if recorded is not None else "—")
    cache, ladder = result.runs["ladder-cache"], result.runs["ladder"]
    cells.append(f"{cache.retention.share:.1%} / {ladder.retention.share:.1%}")
    return "| " + " | ".join(cells) + " |"


def run_window(
    paths: Sequence[Path], window: int, cache: CachePolicy | None = None
) -> tuple[list[str], Totals]:
    totals = Totals()
    lines = []
    planned = {"cache": cache} if cache is not None else {}  # main's replay has no ``cache``
    for path in paths:
        history = load(path)
        price, recorded = _price(path, history)
        extra = unseen_preamble(history)
        result = replay(
            history,
            STRATEGY_NAMES,
            window=window,
            pricing=price,
            unseen_preamble=extra,
            **planned,  # type: ignore[arg-type]
        )
        totals.add(result, recorded)
        lines.append(_row(path, result, price, recorded))
    return lines, totals


def targets(totals: Totals) -> list[str]:
    cost = totals.cost
    keep_cache, keep_ladder = totals.retention("ladder-cache"), totals.retention("ladder")
    fits = totals.fits_cost

    def verdict(ok: bool) -> str:
        return "**met**" if ok else "**missed**"

    rows = [
        (
            "below `none` where it fits",
            f"${fits.get('ladder-cache', 0):,.2f} vs ${fits.get('none', 0):,.2f}",
            fits.get("ladder-cache", 0) <= fits.get("none", 0),
        ),
        (
            "below today's ladder",
            f"${cost['ladder-cache']:,.2f} vs ${cost['ladder']:,.2f} "
            f"(cheaper or equal in {totals.wins.get('ladder', 0)}/{totals.sessions} sessions)",
            cost["ladder-cache"] < cost["ladder"],
        ),
        (
            "below Claude Code's recorded usage",
            f"${totals.recorded_model.get('ladder-cache', 0):,.2f} vs ${totals.recorded:,.2f}",
            totals.recorded_model.get("ladder-cache", 0) < totals.recorded,
        ),
        (
            "retention no lower than today's ladder",
            f"{keep_cache:.3%} vs {keep_ladder:.3%}",
            keep_cache >= keep_ladder,
        ),
    ]
    return [f"- {what}: {numbers} — {verdict(ok)}" for what, numbers, ok in rows]


def cache_policy(settings: Sequence[str]) -> CachePolicy:
    """``CachePolicy`` with ``NAME=VALUE`` fields set (numbers; ints where they parse as one)."""
    fields: dict[str, float | int] = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        fields[name] = int(value) if value.lstrip("-").isdigit() else float(value)
    return CachePolicy(**fields)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="only transcripts under this folder (e.g. claude-code)")
    parser.add_argument("--windows", type=int, nargs="+", default=list(WINDOWS))
    parser.add_argument(
        "--cache", action="append", default=[], metavar="NAME=VALUE", help="a CachePolicy field"
    )
    args = parser.parse_args()
    cache = cache_policy(args.cache) if args.cache else None
    root = TRANSCRIPTS / args.only if args.only else TRANSCRIPTS
    paths = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    started = time.perf_counter()
    out = ["## Cost with prompt caching: strategies side by side", ""]
    head = "| session | priced at | requests | " + " | ".join(SHOWN)
    head += " | recorded | retention (ladder-cache / ladder) |"
    for window in args.windows:
        lines, totals = run_window(paths, window, cache)
        out += [f"### Window {window:,}", "", *targets(totals), "", head]
        out.append("|" + "---|" * (len(SHOWN) + 5))
        out += lines
        total = " | ".join(f"${totals.cost[n]:,.2f}" for n in SHOWN)
        out.append(f"| **all {totals.sessions}** | | | {total} | ${totals.recorded:,.2f} | |")
        out.append("")
    elapsed = time.perf_counter() - started
    command = " ".join([COMMAND, *sys.argv[1:]])
    out.append(f"`{command}` — {len(paths)} transcripts, all windows in one run, {elapsed:.0f} s.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
