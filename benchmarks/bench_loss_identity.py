"""Whether two versions report the same losses: every session file under the given folders
replayed through the ladder with the offline summary at a 40,000-token window (as
``bench_summary_speed`` times them), in a child process per version, and the ``LossReport`` of
every compaction the manager applied compared item by item (kind, text, tokens, index, refs).
A speed-up of the loss report must leave every report as it was; the seconds each version spent
in it are printed too (the two run side by side, so the machine's load falls on both alike).

    python benchmarks/bench_loss_identity.py --before BASE/src [--after src] [--no-probes] [DIR …]

``BASE`` is an earlier checkout (``git archive REV src | tar -x -C BASE``); the folders (DIR)
default to the fixtures in ``tests/data``. ``--no-probes``: replay without deriving the probes,
which read every message before the first request (the proxy and ``chat`` have none). Exits 1
when a report differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_summary_speed import WINDOW, check_versions, session_folders, sessions, versions_parser


def child(folders: list[Path], probes: bool) -> dict[str, Any]:
    """Every session's loss reports, in the order the compactions were applied, and its tokens
    sent (the same replay or none: a report compared on another history proves nothing)."""
    import contextwarden.manager_runs as runs
    from contextwarden.compaction import loss
    from contextwarden.errors import ContextWardenError
    from contextwarden.eval.replay import replay
    from contextwarden.formats import load
    from contextwarden.policy import ContextPolicy
    from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer
    from contextwarden.tokens.heuristic import HeuristicCounter

    reports: list[Any] = []
    seconds = [0.0]
    measured = loss.losses  # the function the manager calls, by its own module's name

    def recorded(*args: Any) -> Any:  # the manager's own call, seen on its way back
        started = time.perf_counter()
        report = measured(*args)
        seconds[0] += time.perf_counter() - started
        reports.append(report.as_json()["items"])
        return report

    runs.losses = recorded  # type: ignore[attr-defined,assignment]  # imported there by name
    counter = HeuristicCounter()
    found: dict[str, Any] = {}
    for path in sessions(folders):
        try:
            history = load(path, counter=counter)
        except ContextWardenError:
            continue  # not a session (a probe file, a README, a bad-input fixture)
        reports.clear()
        summarizer = StructuredSummarizer(StructuredPolicy(context_window=WINDOW), counter)
        run = replay(
            history,
            ("ladder",),
            summarizer=summarizer,
            probes=None if probes else (),
            policy=ContextPolicy(context_window=WINDOW),
        ).runs["ladder"]
        found[str(path)] = {"sent": run.total_tokens_sent, "reports": list(reports)}
    return {"sessions": found, "seconds": seconds[0]}


def reports_of(srcs: list[Path], folders: list[Path], probes: bool) -> list[dict[str, Any]]:
    """``child`` run with the package in each of ``srcs``, each in a process of its own, side
    by side."""
    argv = [sys.executable, __file__, "--child", *map(str, folders)]
    if not probes:
        argv.append("--no-probes")
    children = [
        subprocess.Popen(
            argv, env={**os.environ, "PYTHONPATH": str(src)}, stdout=subprocess.PIPE, text=True
        )
        for src in srcs
    ]
    found = []
    for process in children:
        out, _ = process.communicate()
        if process.returncode:
            raise SystemExit(f"a replay failed (exit {process.returncode})")
        found.append(json.loads(out))
    return found


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per session whose replay or reports differ."""
    lines = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old is None or new is None:
            lines.append(f"{path}: replayed by one version only")
        elif old["sent"] != new["sent"]:
            lines.append(f"{path}: tokens sent {old['sent']:,} -> {new['sent']:,}")
        elif old["reports"] != new["reports"]:
            pairs = zip(old["reports"], new["reports"], strict=False)
            first = next((n for n, (a, b) in enumerate(pairs) if a != b), None)
            where = f"compaction {first}" if first is not None else "how many"
            lines.append(f"{path}: reports differ ({where})")
    return lines


def main() -> None:
    parser = versions_parser(__doc__.split("\n\n")[0])
    parser.add_argument(
        "--no-probes", action="store_true", help="replay without probes (as the proxy runs)"
    )
    args = parser.parse_args()
    folders = session_folders(parser, args)
    if args.child:
        print(json.dumps(child(folders, not args.no_probes)))
        return
    check_versions(parser, args)
    old, new = reports_of([args.before, args.after], folders, not args.no_probes)
    before, after = old["sessions"], new["sessions"]
    compactions = sum(len(s["reports"]) for s in before.values())
    items = sum(len(r) for s in before.values() for r in s["reports"])
    print(f"{len(before)} sessions, {compactions:,} compactions, {items:,} items compared")
    ratio = new["seconds"] / old["seconds"] if old["seconds"] else 1.0
    print(
        f"loss reports: {old['seconds']:.2f} s before, {new['seconds']:.2f} s after ({ratio:.3f}x)"
    )
    lines = differences(before, after)
    for line in lines:
        print(line)
    print("identical" if not lines else f"{len(lines)} sessions differ")
    sys.exit(1 if lines else 0)


if __name__ == "__main__":
    main()
