"""Token estimates against what Claude counted: recorded Claude Code sessions replayed with usage.

    python benchmarks/bench_usage.py DIR [DIR ...]            # accuracy and speed, held-out half
    python benchmarks/bench_usage.py DIR [DIR ...] --fit      # fit the calibration priors

Every ``*.jsonl`` under the directories is a Claude Code session (real ``usage`` per reply). A
session belongs to the FIT part when the SHA-256 of its file name is even, else to the REPORT part;
``--held-out DIR`` adds sessions to REPORT whatever their hash (docs/benchmarks.md says which were
used). The priors in ``tokens/calibration.py`` come from ``--fit`` on FIT only; the tables report on
REPORT only.

Each session is replayed through ``ConversationHistory``: every message added in order, and
``record_usage`` on every reply, as an agent does. Before each reply the history's estimate of its
request is compared with what Claude reported: the growth since the previous request (estimate -
previous prompt) against the reported growth (prompt - previous prompt; a prompt is input + cache
read + cache creation tokens), over requests that grew by MIN_GROWTH tokens or more. The growth
holds the previous reply and what was added after it; the usage Claude Code saves carries the
output count of a stream's first event, not the reply's, so the reply is the history's to
estimate too.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.heuristic import HeuristicCounter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests: the replay the tests measure too
from tests.usage_replay import (  # noqa: E402
    MIN_GROWTH,
    Growth,
    Session,
    accuracy,
    load_session,
    replay,
)


def split(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    fit: list[Path] = []
    report: list[Path] = []
    for path in paths:
        digest = hashlib.sha256(path.name.encode()).digest()
        (fit if digest[-1] % 2 == 0 else report).append(path)
    return fit, report


def row(name: str, growths: Sequence[Growth], seconds: float, base: float) -> str:
    found = accuracy(growths)
    return (
        f"| {name} | {found.requests:,} | {found.median:.3f} | {found.p10:.3f} "
        f"| {found.p90:.3f} | **{found.under:.1%}** | {seconds:.2f} s | {base / seconds:.2f}x |"
    )


def counters() -> dict[str, tuple[Callable[[], TokenCounter], bool]]:
    """Name → (counter factory, calibrated)."""
    from bench_tokens import BEFORE_V9, previous_heuristic

    from contextwarden.tokens.quick import QuicktokCounter

    return {
        "o200k raw (QuicktokCounter)": (lambda: QuicktokCounter("o200k_base"), False),
        f"heuristic v8 raw (before issue 27, {BEFORE_V9})": (
            lambda: previous_heuristic(BEFORE_V9),
            False,
        ),
        "heuristic raw (HeuristicCounter)": (HeuristicCounter, False),
        "calibrated o200k": (lambda: QuicktokCounter("o200k_base"), True),
        "calibrated heuristic (Claude default)": (HeuristicCounter, True),
    }


def measure(loaded: Sequence[Session]) -> None:
    print(
        "| counter | requests | median | p10 | p90 | share < 0.9 | replay CPU time "
        "| speed vs o200k raw |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    base = 0.0
    by_model: dict[str, list[Growth]] = defaultdict(list)
    for name, (make, calibrated) in counters().items():
        counter = make()
        start = time.process_time()
        growths = [g for s in loaded for g in replay(s, counter, s.model if calibrated else None)]
        seconds = time.process_time() - start
        base = base or seconds
        print(row(name, growths, seconds, base))
        if calibrated and isinstance(counter, HeuristicCounter):
            for growth in growths:
                by_model[growth.model].append(growth)
    print("\nCalibrated heuristic by model:\n")
    print("| model | requests | median | p10 | p90 | share < 0.9 |")
    print("|---|---:|---:|---:|---:|---:|")
    for model, growths in sorted(by_model.items()):
        if any(g.reported >= MIN_GROWTH for g in growths):
            print(row(model, growths, 1.0, 1.0).rsplit(" | ", 2)[0] + " |")


def fit(loaded: Sequence[Session]) -> None:
    """Per model family: tokens per counted token (ratio of sums over requests that grew by
    MIN_GROWTH or more) and framing per tool block (least squares of reported = a * counted +
    b * blocks over every request that grew)."""
    counter = HeuristicCounter()
    by_model: dict[str, list[Growth]] = defaultdict(list)
    for session in loaded:
        for growth in replay(session, counter, None):
            if growth.reported > 0 and growth.counted > 0:
                by_model[growth.model].append(growth)
    for model, growths in sorted(by_model.items()):
        x1 = [g.counted for g in growths]
        x2 = [g.tool_blocks for g in growths]
        y = [g.reported for g in growths]
        a, b = _least_squares(x1, x2, y)
        big = [g for g in growths if g.reported >= MIN_GROWTH]
        ratio = sum(g.reported for g in big) / sum(g.counted for g in big)
        print(
            f"{model}: {len(growths)} requests, ratio of sums {ratio:.3f} ({len(big)} requests); "
            f"reported = {a:.3f} * counted + {b:.1f} * tool blocks "
            f"(framing {b / a:.1f} counted tokens a block)"
        )


def _least_squares(x1: Sequence[int], x2: Sequence[int], y: Sequence[int]) -> tuple[float, float]:
    """y ≈ a x1 + b x2, least squares."""
    w = [1.0] * len(y)
    s11 = sum(wi * a * a for wi, a in zip(w, x1, strict=True))
    s12 = sum(wi * a * b for wi, a, b in zip(w, x1, x2, strict=True))
    s22 = sum(wi * b * b for wi, b in zip(w, x2, strict=True))
    t1 = sum(wi * a * c for wi, a, c in zip(w, x1, y, strict=True))
    t2 = sum(wi * b * c for wi, b, c in zip(w, x2, y, strict=True))
    det = s11 * s22 - s12 * s12
    return (t1 * s22 - t2 * s12) / det, (s11 * t2 - s12 * t1) / det


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--held-out", type=Path, action="append", default=[])
    parser.add_argument("--fit", action="store_true", help="fit the priors on the FIT part")
    parser.add_argument("--limit", type=int, default=0, help="at most this many sessions a part")
    args = parser.parse_args(argv)
    paths = sorted(p for d in args.dirs for p in d.rglob("*.jsonl"))
    fit_paths, report_paths = split(paths)
    report_paths += sorted(p for d in args.held_out for p in d.rglob("*.jsonl"))
    chosen = fit_paths if args.fit else report_paths
    if args.limit:
        chosen = chosen[: args.limit]
    loaded = [s for s in map(load_session, chosen) if s is not None]
    print(f"{'FIT' if args.fit else 'REPORT'}: {len(loaded)} sessions\n")
    (fit if args.fit else measure)(loaded)


if __name__ == "__main__":
    main()
