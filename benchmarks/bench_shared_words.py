"""How the offline summary's piece and line lookups grow on the inputs that defeat a word index:
sentences of one word (no inner word to look up) against as many decisions, and findings and
lines built of a few shared words (every word in most lines), each at N, 2N and 4N, timed in a
child process per version and size (the inputs are those of the tests in
``tests/test_summarizer_hostile_sizes.py``).

    python benchmarks/bench_shared_words.py --before BASE/src [--after src] [--sizes 1 2 4]
        [--limit 200]

``BASE`` is an earlier checkout (``git archive REV src | tar -x -C BASE``). A run past
``--limit`` seconds is stopped and shown as over it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BASE_SIZES = {"sentences": 10_000, "restated": 7_000, "repeated": 6_000, "common": 7_500}
"""Each input's N: a few seconds for the code before at 2N."""

VOCABULARY = [f"w{k}" for k in range(24)]


def _every_other(n: int) -> list[str]:
    """Lines of 12 of the 24 words, every other one: none holds 3 consecutive ones."""
    return [" ".join(VOCABULARY[(i + 2 * k) % 24] for k in range(12)) for i in range(n)]


def case(kind: str, n: int) -> Callable[[], object]:
    """The call timed for input ``kind`` at size ``n``."""
    from contextwarden.summarizers.findings import chosen, findings
    from contextwarden.summarizers.restated import repeated_in, restated
    from contextwarden.tokens.heuristic import HeuristicCounter

    if kind == "sentences":
        said = " ".join(f"Reconfigured_the_module_{i}_cache." for i in range(n))
        decided = [f"We should keep the lock in worker_{i} to avoid a race." for i in range(n)]
        return lambda: findings(said, decided)
    if kind == "restated":  # polynomials of degree < 4 mod 13 at 5 points: 3 of 5 words shared
        values = itertools.product(range(13), repeat=4)
        units = [
            " ".join(f"p{x}v{(a + b * x + c * x * x + d * x**3) % 13}" for x in range(5))
            for a, b, c, d in values
        ][:n]
        return lambda: restated(units)
    if kind == "repeated":  # lines of 12 of 14 words, units of 13: any k words in most lines
        shapes = [
            " ".join(w for k, w in enumerate(VOCABULARY[:14]) if k not in left_out)
            for left_out in itertools.combinations(range(14), 2)
        ]
        lines = (shapes * (n // len(shapes) + 1))[:n]
        units = [
            " ".join(w for k, w in enumerate(VOCABULARY[:14]) if k != i % 14) for i in range(n)
        ]
        return lambda: repeated_in(units, lines)
    held = "\n".join(f"- {line}" for line in _every_other(n))
    found = [f"{i}: {' '.join(VOCABULARY[(i + k) % 24] for k in range(3))}." for i in range(n)]
    candidates = [(i, 0, unit) for i, unit in enumerate(found)]
    return lambda: chosen(candidates, held, 10**9, HeuristicCounter())


def child(kind: str, n: int) -> None:
    run = case(kind, n)
    started = time.perf_counter()
    run()
    print(f"{time.perf_counter() - started:.2f}")


def timed(src: Path, kind: str, n: int, limit: float) -> str:
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, __file__, "--child", kind, str(n)]
    try:
        done = subprocess.run(
            argv, env=env, check=True, capture_output=True, text=True, timeout=limit
        )
    except subprocess.TimeoutExpired:
        return f"over {limit:.0f} s"
    return f"{done.stdout.strip()} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=ROOT / "src")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--limit", type=float, default=200.0)
    args = parser.parse_args()
    print("| input | N | before | after |\n|---|---:|---:|---:|")
    for kind, base in BASE_SIZES.items():
        for factor in args.sizes:
            n = base * factor
            before = timed(args.before, kind, n, args.limit)
            after = timed(args.after, kind, n, args.limit)
            print(f"| {kind} | {n:,} | {before} | {after} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
