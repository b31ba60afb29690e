"""Append one message + ``estimate_tokens()`` at 100, 1,000 and 10,000 messages, vs a full recount.

The history checks a new message against the last one only and the ledger counts it once, so the
cost must stay flat as the history grows; the baseline (in the same run) recounts every message.

    python benchmarks/bench_history.py [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

from contextwarden import ConversationHistory, HeuristicCounter, Message, validate

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "text"
SIZES = (100, 1_000, 10_000)
APPENDS = 2_000
"""Timed appends per size (user + assistant pairs, so the history stays valid)."""
ROUNDS = 5
SECTION = "## History: append + estimate (target ≤ 20 µs at 10,000 messages, ≥ 100x a recount)"


def filled(size: int, text: str) -> ConversationHistory:
    history = ConversationHistory()
    for i in range(size // 2):
        history.add_user_message(f"{i} {text}")
        history.add_assistant_message(Message.assistant(f"reply {i}: looked at it"))
    return history


def time_appends(size: int, text: str) -> float:
    """Median over rounds of the CPU time per (add + estimate_tokens) at ``size`` messages."""
    samples = []
    for _ in range(ROUNDS):
        history = filled(size, text)
        batch = [
            (Message.user(f"new {i} {text}"), Message.assistant(f"reply {i}"))
            for i in range(APPENDS // 2)
        ]
        start = time.process_time()
        for user, reply in batch:
            history.add(user)
            history.estimate_tokens()
            history.add(reply)
            history.estimate_tokens()
        samples.append((time.process_time() - start) / APPENDS)
    return statistics.median(samples)


def time_recount(size: int, text: str) -> float:
    """CPU time to count every message again (and validate), as a naive check would per turn."""
    history = filled(size, text)
    counter = HeuristicCounter()
    samples = []
    for _ in range(ROUNDS):
        start = time.process_time()
        sum(counter.count_message(m) for m in history.messages)
        validate(history.messages)
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def table() -> list[str]:
    text = (SHARED / "en.txt").read_text(encoding="utf-8")[:400]
    lines = [
        SECTION,
        "",
        "Made by `python benchmarks/bench_history.py --write docs/benchmarks.md` "
        f"(Python {platform.python_version()}, 2 cores, CPU time, median of {ROUNDS} rounds of "
        f"{APPENDS:,} appends; each user message is 400 characters of en.txt). The baseline is a "
        "full recount + validate of the same history in the same run.",
        "",
        "| messages | add + estimate_tokens | vs 100 messages | full recount + validate | ratio |",
        "|---:|---:|---:|---:|---:|",
    ]
    first = None
    for size in SIZES:
        append = time_appends(size, text)
        recount = time_recount(size, text)
        first = first or append
        lines.append(
            f"| {size:,} | {append * 1e6:.1f} µs | {append / first:.2f}x | "
            f"{recount * 1e3:.2f} ms | {recount / append:,.0f}x |"
        )
    return lines


def write_section(path: Path, lines: list[str]) -> None:
    """Replace this section (up to the next ``## `` heading) in ``path``, or append it."""
    old = path.read_text(encoding="utf-8").splitlines() if path.exists() else ["# Benchmarks"]
    if SECTION in old:
        start = old.index(SECTION)
        end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")), len(old))
        new = [*old[:start], *lines, "", *old[end:]]
    else:
        new = [*old, "", *lines]
    path.write_text("\n".join(new).rstrip("\n") + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="update this section of a markdown file")
    args = parser.parse_args()
    lines = table()
    print("\n".join(lines))
    if args.write:
        write_section(args.write, lines)
        print(f"\nwritten to {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
