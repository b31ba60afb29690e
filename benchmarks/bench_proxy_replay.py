"""Every real session replayed through the proxy as its agent sent it, 30,000-token window.

Each transcript's turns go, whole history each, to a real proxy server whose upstream is the
recorded model (it answers with the session's recorded replies). Baseline, same run: the same
requests sent straight to the model. Printed per transcript: requests, peak tokens, requests over
the window, invalid requests, and the share of input tokens in a prefix unchanged since the
previous request (what a prompt cache would serve).

    python benchmarks/bench_proxy_replay.py [--window 30000] [--cache auto|off] [--only TEXT]

``--cache`` is the proxy's option (auto: the cache-aware ladder and breakpoints placed; off: the
plain ladder); ``--only`` keeps the transcripts whose path contains TEXT.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

from contextwarden.eval.proxy_replay import RecordedModel, Seen, replay, turns
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.policy import ContextPolicy

DATA = (
    Path(
        os.environ.get("CONTEXTWARDEN_DATA")
        or Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    / "transcripts"
)
"""The corpus: ``$CONTEXTWARDEN_DATA/transcripts`` (as ``.ci/run`` sets it), else ../shared/data."""
SUFFIXES = {".jsonl", ".json", ".traj"}


def sessions(only: str = "") -> dict[str, ConversationHistory]:
    files = sorted(
        p for p in DATA.rglob("*") if p.is_file() and p.suffix in SUFFIXES and only in str(p)
    )
    return {re.sub(r"[^A-Za-z0-9_.-]", "_", f.name)[:100]: load(f) for f in files}


def direct(histories: dict[str, ConversationHistory], limit: int) -> dict[str, Seen]:
    """The baseline: each request measured as the agent sent it, with no proxy in between."""
    model = RecordedModel(limit)
    model.server.server_close()  # only its measuring is used
    for name, history in histories.items():
        for turn in turns(name, history):
            model.measure(name, turn.body)
    return model.seen


def share(seen: Seen) -> str:
    return f"{seen.cached_tokens / seen.input_tokens:.1%}" if seen.input_tokens else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=30_000)
    parser.add_argument("--cache", choices=("auto", "off"), default="auto")
    parser.add_argument("--only", default="", help="transcripts whose path contains this")
    args = parser.parse_args()
    limit = ContextPolicy(context_window=args.window).effective_window
    histories = sessions(args.only)
    raw = direct(histories, limit)
    started = time.perf_counter()
    managed = replay(histories, args.window, cache=args.cache)
    seconds = time.perf_counter() - started
    print(
        f"window {args.window:,} (prompt limit {limit:,}), {len(histories)} transcripts, "
        f"proxy --cache {args.cache}\n"
    )
    print(
        "| transcript | requests | direct peak | direct over | proxy peak | proxy over |"
        " proxy invalid | cacheable: direct | cacheable: proxy |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for name in histories:
        d, p = raw.get(name, Seen()), managed.get(name, Seen())
        print(
            f"| {name[:48]} | {p.requests} | {d.peak:,} | {d.over} | {p.peak:,} | {p.over} |"
            f" {p.invalid} | {share(d)} | {share(p)} |"
        )
    total = {
        k: sum(getattr(s, k) for s in managed.values())
        for k in ("requests", "invalid", "over", "input_tokens", "cached_tokens")
    }
    base = {
        k: sum(getattr(s, k) for s in raw.values())
        for k in ("requests", "invalid", "over", "input_tokens", "cached_tokens")
    }
    print(
        f"\nall: {total['requests']:,} requests; direct: {base['over']:,} over the window, "
        f"{base['cached_tokens'] / base['input_tokens']:.1%} cacheable of "
        f"{base['input_tokens']:,} input tokens; proxy: {total['over']} over, "
        f"{total['invalid']} invalid, {total['cached_tokens'] / total['input_tokens']:.1%} "
        f"cacheable of {total['input_tokens']:,} input tokens; {seconds:.0f} s through the proxy"
    )


if __name__ == "__main__":
    main()
