"""Every set of hand-written probes (``fresh_probes``, ``fresh_probes3`` …) measured with two
``src`` folders, side by side: probes kept at the last request per kind, before → after, the
modeled cost's ratio, and how many come back with ``recall`` after (issue #26).

    git archive <base> src | tar -x -C BASE
    python benchmarks/bench_fresh_all.py --before BASE/src --after src --fresh DATA
    python benchmarks/bench_fresh_all.py --before BASE/src --after src --fresh DATA --sets 17

``DATA`` holds each set's sessions as ``build_fresh_corpus.py`` writes them: ``DATA/fresh`` for
set 1 (``build_fresh_corpus.py MIRRORS DATA/fresh``), ``DATA/freshN`` for set N
(``--set N MIRRORS DATA/freshN``). Each (set, src) pair runs ``bench_fresh.py --json`` in its
own process with that ``src`` on ``PYTHONPATH`` (``bench_fresh.baseline``), ``--jobs`` at once.
A set whose sessions are not built is named and skipped.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_fresh import KINDS, Tally, baseline

HERE = Path(__file__).resolve().parent
NAMES = {
    "user_message": "requests",
    "file_path": "files",
    "decision": "decisions",
    "error": "errors",
}


def sets_here() -> list[int]:
    """Every set whose probe folder this checkout holds, in order (set 1 is ``fresh_probes``)."""
    found = [
        int(m[1] or 1) for p in HERE.iterdir() if (m := re.fullmatch(r"fresh_probes(\d*)", p.name))
    ]
    return sorted(found)


def folders(n: int, fresh: Path) -> tuple[Path, Path]:
    """Set ``n``'s probe folder and data folder."""
    suffix = "" if n == 1 else str(n)
    return HERE / f"fresh_probes{suffix}", fresh / f"fresh{suffix}"


def summed(tallies: dict[str, Tally]) -> tuple[Counter[str], Counter[str], Counter[str], float]:
    """Kept, due and recalled per kind, and the cost, over a set's halves."""
    kept, due, recalled, cost = Counter[str](), Counter[str](), Counter[str](), 0.0
    for tally in tallies.values():
        kept.update(tally.kept)
        due.update(tally.due)
        recalled.update(tally.recalled)
        cost += tally.cost
    return kept, due, recalled, cost


def row(name: str, before: Counter[str], after: Counter[str], due: Counter[str]) -> list[str]:
    cells = [f"{before[k]} → {after[k]}/{due[k]}" for k in KINDS]
    total = sum(due[k] for k in KINDS)
    cells.append(f"{sum(before[k] for k in KINDS)} → {sum(after[k] for k in KINDS)}/{total}")
    return [name, *cells]


def table(
    results: dict[int, tuple[dict[str, Tally], dict[str, Tally]]],
) -> str:
    head = ["set", *(NAMES[k] for k in KINDS), "all", "cost ratio", "recall (after)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 5 + "---:|---:|---:|"]
    totals: list[Counter[str]] = [Counter(), Counter(), Counter(), Counter()]
    cost_before = cost_after = 0.0
    for n, (before, after) in sorted(results.items()):
        kept_before, _, _, cost_b = summed(before)
        kept_after, due, recalled, cost_a = summed(after)
        for total, part in zip(totals, (kept_before, kept_after, due, recalled), strict=True):
            total.update(part)
        cost_before, cost_after = cost_before + cost_b, cost_after + cost_a
        ratio = f"{cost_a / cost_b:.4f}" if cost_b else "-"
        recall = f"{sum(recalled.values())}/{sum(due.values())}"
        lines.append(
            "| " + " | ".join([*row(str(n), kept_before, kept_after, due), ratio, recall]) + " |"
        )
    ratio = (
        f"{cost_after / cost_before:.4f} (${cost_before:,.2f} → ${cost_after:,.2f})"
        if cost_before
        else "-"
    )
    recall = f"{sum(totals[3].values())}/{sum(totals[2].values())}"
    lines.append(
        "| " + " | ".join([*row("all", totals[0], totals[1], totals[2]), ratio, recall]) + " |"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the src folder measured first")
    parser.add_argument("--after", type=Path, required=True, help="the src folder measured second")
    parser.add_argument("--fresh", type=Path, required=True, help="folder of fresh, fresh3, …")
    parser.add_argument("--sets", type=int, nargs="+", help="these sets only (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="measurements run at once")
    args = parser.parse_args(argv)
    for src in (args.before, args.after):
        if not (src / "contextwarden").is_dir():
            parser.error(f"{src} holds no contextwarden package (pass a checkout's src folder)")
    wanted = args.sets or sets_here()
    unknown = sorted(set(wanted) - set(sets_here()))
    if unknown:
        parser.error(f"no probes for set(s) {unknown}: this checkout has {sets_here()}")
    ready = []
    for n in wanted:
        data = folders(n, args.fresh)[1]
        if data.is_dir():
            ready.append(n)
        else:
            print(f"set {n}: skipped, {data} is missing (build_fresh_corpus.py --set {n})")

    def measure(job: tuple[int, Path]) -> dict[str, Tally]:
        n, src = job
        probes, data = folders(n, args.fresh)
        return baseline(src, data, probes)

    jobs = [(n, src) for n in ready for src in (args.before, args.after)]
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        done = list(pool.map(measure, jobs))
    results = {n: (done[2 * i], done[2 * i + 1]) for i, n in enumerate(ready)}
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
