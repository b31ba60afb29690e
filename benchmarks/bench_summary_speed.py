"""How long the ladder with the offline summary takes to replay real sessions, two versions side by
side: every session file under the given folders replayed at a 40,000-token window, as
``bench_fresh`` replays its sets, timed in a child process per version, the two alternated round
by round so the machine's load falls on both alike. What each sends is printed too: a speed-up
that changed a request is no speed-up.

    python benchmarks/bench_summary_speed.py --before BASE/src [--after src] [FOLDER …] [--rounds 3]

``BASE`` is an earlier checkout (``git archive REV src | tar -x -C BASE``); the folders default to
the fixtures in ``tests/data``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WINDOW = 40_000
SUFFIXES = {".json", ".jsonl", ".md"}


def sessions(folders: list[Path]) -> list[Path]:
    """Every file of a session format under ``folders``, in a stable order."""
    return sorted(p for f in folders for p in f.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def child(folders: list[Path]) -> dict[str, Any]:
    """Replay every session that loads; the seconds the replays took and what they sent."""
    from contextwarden.errors import ContextWardenError
    from contextwarden.eval.replay import replay
    from contextwarden.formats import load
    from contextwarden.policy import ContextPolicy
    from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer
    from contextwarden.tokens.heuristic import HeuristicCounter

    counter = HeuristicCounter()
    histories = []
    for path in sessions(folders):
        try:
            histories.append(load(path, counter=counter))
        except ContextWardenError:
            continue  # not a session (a probe file, a README, a bad-input fixture)
    started = time.perf_counter()
    sent = requests = 0
    for history in histories:
        summarizer = StructuredSummarizer(StructuredPolicy(context_window=WINDOW), counter)
        run = replay(
            history,
            ("ladder",),
            summarizer=summarizer,
            policy=ContextPolicy(context_window=WINDOW),
        ).runs["ladder"]
        sent += run.total_tokens_sent
        requests += len(run.tokens)
    seconds = time.perf_counter() - started
    return {"sessions": len(histories), "requests": requests, "sent": sent, "seconds": seconds}


def timed(src: Path, folders: list[Path]) -> dict[str, Any]:
    """``child`` run with the package in ``src``, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, __file__, "--child", *map(str, folders)]
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def versions_parser(description: str) -> argparse.ArgumentParser:
    """The arguments of a benchmark that runs two versions (``--before``, ``--after``: src
    folders) over folders of session files, each version in a child process (``--child``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("folders", nargs="*", type=Path, help="folders of session files")
    parser.add_argument("--before", type=Path, help="the src folder of the baseline")
    parser.add_argument("--after", type=Path, default=ROOT / "src", help="the src folder compared")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser


def session_folders(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Path]:
    """The folders given (the fixtures in ``tests/data`` when none is); a missing one is an
    error, not an empty run."""
    folders: list[Path] = args.folders or [ROOT / "tests" / "data"]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        parser.error(f"not a folder: {', '.join(missing)}")
    return folders


def check_versions(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--before`` is given, and both src folders hold the package: a folder without it would
    silently run the installed one."""
    if args.before is None:
        parser.error("--before SRC is required")
    for src in (args.before, args.after):
        if not (src / "contextwarden").is_dir():
            parser.error(f"{src} holds no contextwarden package (pass a checkout's src folder)")


def in_child(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    folders: list[Path],
    child: Callable[[list[Path]], Any],
) -> bool:
    """In a version's child process (``--child``), print ``child(folders)`` as JSON and say so;
    in the parent, check that both versions are given (``check_versions``) and say not."""
    if args.child:
        print(json.dumps(child(folders)))
        return True
    check_versions(parser, args)
    return False


def main() -> None:
    parser = versions_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternated runs of each version")
    args = parser.parse_args()
    folders = session_folders(parser, args)
    if in_child(parser, args, folders, child):
        return
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for n in range(args.rounds):
        for name, src in (("before", args.before), ("after", args.after)):
            runs[name].append(timed(src, folders))
            print(f"round {n + 1}: {name} {runs[name][-1]['seconds']:.2f} s", file=sys.stderr)
    first = runs["before"][0]
    print(f"{first['sessions']} sessions, {first['requests']:,} requests replayed at {WINDOW:,}")
    print("| | median seconds | tokens sent |")
    print("|---|---:|---:|")
    medians = {}
    for name, done in runs.items():
        medians[name] = statistics.median(r["seconds"] for r in done)
        print(f"| {name} | {medians[name]:.2f} | {done[0]['sent']:,} |")
    print(f"after / before: {medians['after'] / medians['before']:.3f}x")


if __name__ == "__main__":
    main()
