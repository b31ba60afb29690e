"""What carrying the error lines the agent quotes in its own text could buy (issue #26): the code
spans and fenced lines of every assistant text that the failure detection would rank as an error
line were they a tool's output (``failure_ranks.line_rank`` in ``MARKED_RANKS``), counted per
set, and the error probes such a line holds.

    python benchmarks/bench_quoted_errors.py --fresh DATA --sets 1 3 4

Text calls (Cline's XML calls, SpecStory's steps and Cursor bubbles) are read as the calls they
are first (``textcalls.as_native_calls``), so a terminal bubble counts as a tool's output, not as
the agent's words. A probe listed here is only a candidate: whether the summary already keeps
it from the tool output the agent quoted is what ``bench_losses.py`` tells.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from bench_fresh import bench_for
from bench_fresh_all import folders, sets_here

from contextwarden.eval.probes import load_probes
from contextwarden.formats import load
from contextwarden.model import Message, TextBlock
from contextwarden.summarizers.failure_ranks import MARKED_RANKS, line_rank
from contextwarden.summarizers.textcalls import as_native_calls

_SPAN = re.compile(r"`([^`\n]{8,})`")
"""A code span long enough to hold a message (shorter ones are names: `foo.py`, `--flag`)."""
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def quoted_errors(messages: Sequence[Message]) -> Iterator[str]:
    """Each code span or fenced line of the agent's own text that ranks as an error line."""
    for message in as_native_calls(messages):
        if message.role != "assistant":
            continue
        for block in message.content:
            if not isinstance(block, TextBlock):
                continue
            fenced = [line for body in _FENCE.findall(block.text) for line in body.splitlines()]
            for line in (s.strip() for s in [*_SPAN.findall(block.text), *fenced]):
                if line_rank(line) in MARKED_RANKS:
                    yield line


def measure(n: int, fresh: Path) -> tuple[int, int, list[str]]:
    """Set ``n``'s quoted error lines, their characters, and the error probes they hold."""
    probes, data = folders(n, fresh)
    bench = bench_for(probes, data)
    lines: list[str] = []
    held: list[str] = []
    for session in bench.sessions:
        quoted = list(quoted_errors(load(data / session.path, index=session.index).messages))
        lines += quoted
        for probe in load_probes(bench.probes / session.probes):
            if probe.kind == "error" and any(probe.text in line for line in quoted):
                held.append(f"{session.path}: {probe.text}")
    return len(lines), sum(map(len, lines)), held


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fresh", type=Path, required=True, help="folder of fresh, fresh3, …")
    parser.add_argument("--sets", type=int, nargs="+", required=True, help="the sets to read")
    args = parser.parse_args(argv)
    print("| set | quoted error lines | characters | error probes they hold |")
    print("|---|---:|---:|---:|")
    total, chars = 0, 0
    held: list[str] = []
    for n in (s for s in args.sets if s in sets_here()):
        count, size, probes = measure(n, args.fresh)
        print(f"| {n} | {count} | {size:,} | {len(probes)} |")
        total, chars, held = total + count, chars + size, held + probes
    print(f"| all | {total} | {chars:,} | {len(held)} |")
    for probe in held:
        print(f"- {probe}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
