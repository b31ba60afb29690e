"""Real Claude Code sessions replayed through the proxy, counted by a modeled Claude upstream:
requests over the window by the upstream's count with and without the calibration (issue 22).

Each session's turns go, whole history each, to a real proxy whose upstream is the recorded model
(``eval.proxy_replay``). Claude's tokenizer is not public, so the upstream's count of a request is
modeled as our heuristic count times the session's own ratio of reported to counted growth over
its recorded usage (``tests/usage_replay.upstream_scale``). Both
runs in the same process: *before* the requests name no model the calibration knows (the proxy
counted so before this change), *after* they name the session's model. The modeled cost prices
each request's input at the session model's rates: the prefix unchanged since the previous
request as a cache read, the rest as a 5-minute cache write (output is the same in both runs).

    python benchmarks/bench_proxy_calibration.py [--window 30000] [DIR ...]

DIRs: where the Claude Code ``*.jsonl`` sessions are (default: the corpus's ``claude-code``;
``tests/data/claude-code`` holds one of them again, cut).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from contextwarden.cost.prices import default_prices
from contextwarden.eval.proxy_replay import Seen, replay
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.policy import ContextPolicy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests: the usage replay the calibration tests measure too
from tests.usage_replay import upstream_scale  # noqa: E402

DATA = Path(os.environ.get("CONTEXTWARDEN_DATA") or ROOT.parent / "shared" / "data")
DEFAULT_DIRS = (DATA / "transcripts" / "claude-code",)
UNCALIBRATED = "recorded"
"""The model name of the *before* run: no calibration (the proxy's count before this change)."""
PER_MILLION = 1_000_000


def cost(seen: Seen, model: str) -> float:
    price = default_prices().find(model)
    if price is None:
        return 0.0
    written = seen.input_tokens - seen.cached_tokens
    return (written * price.cache_write_5m + seen.cached_tokens * price.cache_read) / PER_MILLION


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path, default=list(DEFAULT_DIRS))
    parser.add_argument("--window", type=int, default=30_000)
    args = parser.parse_args()
    histories: dict[str, ConversationHistory] = {}
    models: dict[str, str] = {}
    scales: dict[str, float] = {}
    for path in sorted(p for d in args.dirs for p in d.glob("*.jsonl")):
        found = upstream_scale(path)
        if found is not None:
            name = path.stem[:60]
            histories[name] = load(path)
            models[name], scales[name] = found
    limit = ContextPolicy(context_window=args.window).effective_window
    started = time.perf_counter()
    before = replay(histories, args.window, scales=scales)
    middle = time.perf_counter()
    after = replay(histories, args.window, models=models, scales=scales)
    done = time.perf_counter()
    print(f"window {args.window:,} (prompt limit {limit:,}), {len(histories)} sessions\n")
    print(
        "| session | model | upstream / heuristic | requests | over: before | over: after |"
        " peak: before | peak: after | modeled $: before | modeled $: after |"
    )
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for name in histories:
        b, a, model = before[name], after[name], models[name]
        print(
            f"| {name[:40]} | {model} | {scales[name]:.3f} | {a.requests} | {b.over} | {a.over} |"
            f" {b.peak:,} | {a.peak:,} | {cost(b, model):.2f} | {cost(a, model):.2f} |"
        )
    total = {
        run: (
            sum(s.requests for s in seen.values()),
            sum(s.over for s in seen.values()),
            sum(cost(s, models[n]) for n, s in seen.items()),
            sum(s.input_tokens for s in seen.values()),
        )
        for run, seen in (("before", before), ("after", after))
    }
    for run, (requests, over, dollars, tokens) in total.items():
        print(
            f"\n{run}: {requests:,} requests, {over:,} over the window by the upstream's count, "
            f"{tokens:,} input tokens, modeled ${dollars:.2f}",
            end="",
        )
    ratio = total["after"][2] / total["before"][2] if total["before"][2] else float("nan")
    print(
        f"\ncost after / before: {ratio:.3f}; replay {middle - started:.0f} s before, "
        f"{done - middle:.0f} s after"
    )


if __name__ == "__main__":
    main()
