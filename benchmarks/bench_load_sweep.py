"""Load every session file under the given folders by auto-detection and tally how each loads:
cleanly (no load-report issue, the API rules hold), with warnings (issues the report lists, or a
broken rule), or not at all (a FormatError or a crash), by detected format.

    python benchmarks/bench_load_sweep.py FOLDER [FOLDER ...] [--json] [--show N]

Files are those with the suffixes session files carry (``.jsonl``, ``.json``, ``.md``, ``.traj``,
``.db``); a sample collected for a sweep keeps each file under a folder named for its agent, so
the per-file lines say where it came from. ``--show`` prints the first N issues of each file
that did not load cleanly; ``--json`` prints one JSON line per file instead, and no table.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from contextwarden.errors import ContextWardenError
from contextwarden.formats import load
from contextwarden.rules import validate

SUFFIXES = {".jsonl", ".json", ".md", ".traj", ".db"}
STORAGE_PARTS = {"message", "part"}
"""OpenCode storage folders read through their session file (``opencode_storage``), not alone."""


@dataclass
class Outcome:
    path: str
    format: str = "-"
    messages: int = 0
    verdict: str = "failed"
    issues: list[str] = field(default_factory=list)


def sweep_one(path: Path) -> Outcome:
    """How ``path`` loads: its format, message count, verdict and the issues behind it."""
    outcome = Outcome(str(path))
    try:
        history = load(path)
    except ContextWardenError as exc:
        outcome.issues = [str(exc)]
        return outcome
    except Exception as exc:  # a loader's crash is what a sweep is for: tallied, not raised
        outcome.issues = [f"crash: {type(exc).__name__}: {exc}"]
        return outcome
    report = history.source
    outcome.format = report.format if report else "-"
    outcome.messages = len(history.messages)
    outcome.issues = [str(issue) for issue in (report.issues if report else [])]
    outcome.issues += [str(v) for v in validate(history.messages)]
    outcome.verdict = "warnings" if outcome.issues else "clean"
    return outcome


def _session_file(path: Path) -> bool:
    """A file to load alone: a session suffix, and not a message or part of OpenCode storage."""
    in_storage = any(
        folder.name in STORAGE_PARTS and (folder.parent / "session").is_dir()
        for folder in path.parents
    )
    return path.is_file() and path.suffix in SUFFIXES and not in_storage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true", help="one JSON line per file")
    parser.add_argument("--show", type=int, default=3, help="issues shown per file")
    args = parser.parse_args()
    missing = [str(folder) for folder in args.folders if not folder.is_dir()]
    if missing:
        parser.error(f"no such folder: {', '.join(missing)}")
    files = sorted(p for folder in args.folders for p in folder.rglob("*") if _session_file(p))
    tally: Counter[tuple[str, str]] = Counter()
    for path in files:
        outcome = sweep_one(path)
        tally[outcome.format, outcome.verdict] += 1
        if args.json:
            print(json.dumps(outcome.__dict__))
        elif outcome.verdict != "clean":
            print(f"{outcome.verdict:8} {outcome.format:16} {outcome.messages:5} {path}")
            for issue in outcome.issues[: args.show]:
                print(f"         {issue[:200]}")
    if args.json:
        return
    formats = sorted({name for name, _ in tally})
    print(f"\n{'format':16} {'clean':>6} {'warnings':>8} {'failed':>6}")
    for name in formats:
        row = [tally[name, verdict] for verdict in ("clean", "warnings", "failed")]
        print(f"{name:16} {row[0]:6} {row[1]:8} {row[2]:6}")
    print(f"{len(files)} files")


if __name__ == "__main__":
    main()
