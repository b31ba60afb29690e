"""The prompt-cache model against the usage Claude Code sessions recorded.

    python benchmarks/bench_cost_model.py            # print the section for docs/benchmarks.md

Each session is rebuilt as the requests Claude Code sent (``contextwarden.cost.recorded``):
compaction boundaries included, each segment's base (preamble, summary, re-attached files)
estimated from its first request's usage, message sizes from our heuristic count. The cache model
then says which tokens each request read from the cache and wrote to it; the table sets that next
to the recorded ``cache_read_input_tokens`` / ``cache_creation_input_tokens`` and the cost at the
session's model's prices.
"""

from __future__ import annotations

import os
import time
from functools import reduce
from operator import add
from pathlib import Path

from contextwarden.cost import Usage, default_prices
from contextwarden.cost.recorded import Rebuilt, rebuild
from contextwarden.formats import load

DATA = Path(
    os.environ.get("CONTEXTWARDEN_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
SESSIONS = DATA / "transcripts" / "claude-code"
COMMAND = "python benchmarks/bench_cost_model.py"
TARGET = 0.10


def _ratio(modeled: int, recorded: int) -> str:
    return f"{modeled / recorded:.3f}" if recorded else "—"


def _row(name: str, rebuilt: Rebuilt) -> tuple[str, Usage, Usage, float, float]:
    model = next(r.model for r in rebuilt.recorded if r.model)
    price = default_prices().get(model)
    modeled = rebuilt.modeled(price)
    recorded = reduce(add, (r.usage for r in rebuilt.recorded), Usage())
    cells = [
        name,
        price.model,
        str(len(rebuilt.requests)),
        str(len(rebuilt.bases) - 1),
        rebuilt.ttl,
        f"{recorded.cache_read:,}",
        f"{modeled.total.cache_read:,}",
        _ratio(modeled.total.cache_read, recorded.cache_read),
        f"{recorded.cache_write:,}",
        f"{modeled.total.cache_write:,}",
        _ratio(modeled.total.cache_write, recorded.cache_write),
        f"${recorded.cost(price):.2f}",
        f"${modeled.cost:.2f}",
    ]
    line = "| " + " | ".join(cells) + " |"
    return line, modeled.total, recorded, modeled.cost, recorded.cost(price)


def main() -> None:
    started = time.perf_counter()
    header = (
        "| session | model | requests | compactions | TTL | read (recorded) | read (model) | "
        "ratio | written (recorded) | written (model) | ratio | cost (recorded) | cost (model) |"
    )
    lines = [header, "|" + "---|" * 13]
    modeled, recorded, cost_m, cost_r = Usage(), Usage(), 0.0, 0.0
    for path in sorted(SESSIONS.glob("*.jsonl")):
        history = load(path)
        assert history.source is not None
        line, m, r, cm, cr = _row(path.stem, rebuild(history, history.source.metadata))
        lines.append(line)
        modeled, recorded, cost_m, cost_r = modeled + m, recorded + r, cost_m + cm, cost_r + cr
    read = modeled.cache_read / recorded.cache_read
    written = modeled.cache_write / recorded.cache_write
    lines.append(
        f"| **all {len(lines) - 2} sessions** | | | | | {recorded.cache_read:,} | "
        f"{modeled.cache_read:,} | **{read:.3f}** | {recorded.cache_write:,} | "
        f"{modeled.cache_write:,} | **{written:.3f}** | ${cost_r:.2f} | ${cost_m:.2f} |"
    )
    ok = abs(read - 1) <= TARGET and abs(written - 1) <= TARGET
    print("## Cost model vs recorded usage (Claude Code sessions)\n")
    print(f"`{COMMAND}` ({time.perf_counter() - started:.1f} s). Target: modeled cache reads and")
    verdict = "met" if ok else "missed"
    print(f"writes within {TARGET:.0%} of the recorded ones in total — **{verdict}**")
    print(f"(reads {read - 1:+.1%}, writes {written - 1:+.1%}, cost {cost_m / cost_r - 1:+.1%}).\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
