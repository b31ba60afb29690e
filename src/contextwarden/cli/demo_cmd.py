"""``contextwarden demo``: build a real coding-agent session offline, replay it, write the report.

No data, no API key, no network: a scripted agent really reads, searches and runs commands over a
directory (this package's own source by default), then the session is replayed through every
strategy with a small window.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from contextwarden.cli.common import (
    console,
    existing_dir,
    output_file,
    print_json,
    progress_enabled,
    status,
)
from contextwarden.cli.replay_cmd import add_replay_options, run_replay, show
from contextwarden.eval.demo import default_root, generate

DEFAULT_WINDOW = 12_000
"""Small on purpose: the demo session is about 35 requests and 95,000 tokens, and this window
makes every strategy work (the ladder needs its budget, microcompact and summary rungs)."""
DEFAULT_REPORT = Path("contextwarden-report.html")
NOTE = (
    "Demo session: a scripted agent reviewed {root}. Every tool call was really executed and "
    "every output is real; the assistant's words are templates, not a model's."
)


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help="run a scripted coding agent over real files, replay it, write an HTML report",
        description=(
            "Build a realistic coding-agent session by really running tools (read, grep, list, "
            "shell commands) over a directory, then replay it through every strategy with a small "
            "window. Offline: no data, no API key, no network."
        ),
    )
    parser.add_argument(
        "--dir", type=existing_dir, help="directory to review (default: this package's own source)"
    )
    parser.add_argument(
        "--report",
        type=output_file,
        default=str(DEFAULT_REPORT),
        help=f"where to write the HTML report (default {DEFAULT_REPORT}; its directory must exist)",
    )
    parser.add_argument("--no-report", action="store_true", help="do not write the report")
    add_replay_options(parser, window=DEFAULT_WINDOW)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    root = (args.dir or default_root()).resolve()
    with status(f"Running the scripted agent over {root}…", enabled=progress_enabled(args)):
        session = generate(root)
    built = time.perf_counter() - started
    result = run_replay(session, args, label=f"demo session over {root}")
    note = NOTE.format(root=root)
    report = None if args.no_report else _report(result, args.report, note)
    info = {
        "directory": str(root),
        "messages": len(session.messages),
        "session_tokens": session.estimate_tokens(),
        "build_seconds": round(built, 3),
        "seconds": round(time.perf_counter() - started, 3),
    }
    if args.json:
        print_json(
            {**result.as_json(), "report": str(report) if report else None, "demo": info}, args
        )
        return 0
    console().print(
        f"[bold]contextwarden demo[/]: a scripted agent reviewed {root} with real tools: "
        f"{info['messages']} messages, {info['session_tokens']:,} tokens, built in "
        f"{built:.1f} s. Its words are templates; every tool output is real."
    )
    show(result, report)
    return 0


def _report(result: Any, path: Path, note: str) -> Path:
    from contextwarden.eval.report import write_report

    return write_report(result, path, title="contextwarden demo: strategies compared", note=note)
