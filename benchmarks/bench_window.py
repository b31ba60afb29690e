"""The window guarantee on real sessions: observation masking on text-action agents, every
transcript at a 30,000-token window, and a window too small for its session.

    python benchmarks/bench_window.py        # prints the tables for docs/benchmarks.md

1. ``replay --strategy mask`` against ``none`` (default 200,000-token window) on every SWE-agent
   and mini-swe-agent trajectory: tokens sent over the session and the peak context.
2. The ladder on every transcript at 30,000 tokens: ``prepare()`` before each assistant message
   and once more after the last message when it is a user message (the request the agent was
   about to send), counting requests over the effective window, invalid requests and
   ContextOverflowError.
3. codex ``0b9f…`` at 20,000 tokens: compactions, summaries, and the warning the replay gives.

Run it on an older commit's ``src`` (``PYTHONPATH=…/src``) for the baseline: it only uses APIs
that existed before the guarantee (newer fields are read when present).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from contextwarden.errors import ContextWardenError
from contextwarden.eval.replay import replay
from contextwarden.eval.requests import TranscriptClock, request_points
from contextwarden.formats import load
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate

DATA = Path(
    os.environ.get("CONTEXTWARDEN_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
TRANSCRIPTS = DATA / "transcripts"
SUFFIXES = {".jsonl", ".json", ".traj"}
WINDOW = 30_000
SMALL_SESSION = "0b9f2ac6f3aa"
SMALL_WINDOW = 20_000


def sessions(folder: str | None = None) -> list[Path]:
    root = TRANSCRIPTS / folder if folder else TRANSCRIPTS
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def mask_vs_none() -> None:
    print("| trajectory | none: tokens sent | mask: tokens sent | mask / none | peak none → mask |")
    print("|---|---:|---:|---:|---:|")
    for path in sessions("swe-agent"):
        runs = replay(load(path), ("none", "mask")).runs
        none, mask = runs["none"], runs["mask"]
        share = mask.total_tokens_sent / none.total_tokens_sent
        print(
            f"| {path.name[:58]} | {none.total_tokens_sent:,} | {mask.total_tokens_sent:,} | "
            f"{share:.1%} | {none.peak_context:,} → {mask.peak_context:,} |"
        )


def corpus(window: int) -> Counter[str]:
    """Every transcript through the ladder at ``window``; totals over all requests."""
    totals: Counter[str] = Counter()
    for path in sessions():
        one(path, window, totals)
    return totals


def one(path: Path, window: int, totals: Counter[str]) -> None:
    clock = TranscriptClock()  # "idle" means what it meant when the session ran
    manager = ContextManager(ContextPolicy(context_window=window), clock=clock)
    effective = manager.policy.effective_window
    for history in request_points(load(path), clock):
        try:
            totals.update(manager.prepare(history).applied)
        except ContextWardenError:
            totals["raised"] += 1
        tokens = history.estimate_tokens()
        totals["requests"] += 1
        totals["over"] += tokens > effective
        totals["invalid"] += bool(validate(history.messages))
        totals["peak"] = max(totals["peak"], tokens)


def small_window() -> None:
    path = next(p for p in sessions() if SMALL_SESSION in p.name)
    result = replay(load(path), ("ladder",), window=SMALL_WINDOW)
    run, effective = result.runs["ladder"], result.policy.effective_window
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(run.kinds.items(), key=lambda kv: -kv[1]))
    over = sum(1 for t in run.tokens if t > effective)
    print(f"{path.name} at {SMALL_WINDOW:,} tokens: {len(run.tokens)} requests, ")
    print(f"{run.compactions} compactions ({kinds}), {over} over the effective window ")
    print(f"({effective:,}), peak {run.peak_context:,}, {run.retention.share:.1%} of probes kept.")
    for warning in getattr(run, "warnings", ()):
        print(f"\nWarning: {warning}")


def main() -> None:
    print("### `replay --strategy mask` vs `none` on SWE-agent and mini-swe-agent trajectories\n")
    mask_vs_none()
    print(f"\n### Every transcript through the ladder at {WINDOW:,} tokens\n")
    totals = corpus(WINDOW)
    special = ("requests", "over", "invalid", "peak", "raised")
    rungs = ", ".join(f"{k} {n}" for k, n in totals.most_common() if k not in special)
    print(
        f"{totals['requests']:,} requests (the last one after each transcript's final user "
        f"message included): peak {totals['peak']:,}, {totals['over']} over the effective window, "
        f"{totals['invalid']} invalid, {totals['raised']} ContextOverflowError; rungs applied: "
        f"{rungs}."
    )
    print(f"\n### A window too small for its session: codex `{SMALL_SESSION}…`\n")
    small_window()


if __name__ == "__main__":
    main()
