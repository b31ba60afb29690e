"""Gemini CLI, Cline/Roo and OpenCode sessions: loaded by detection, then replayed in a window.

For every session file under the given folders (default: the fixtures in tests/data/): the format
detected, the records the file holds and the messages read, the load-report lines, and the
replay at ``--window`` through the ladder beside the baseline (``none``: every request sent
whole) in the same process: requests, tokens sent, peak context, requests over the window and
requests the API would refuse. ``--before`` also loads each file the way the library did before
these loaders (``openai``, the format ``auto`` guessed for Cline and OpenCode files) and prints
the messages that reading kept, or its error.

    python benchmarks/bench_agent_sessions.py [FOLDER …] [--window 8000] [--before]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from contextwarden.errors import ContextWardenError
from contextwarden.eval.replay import replay
from contextwarden.formats import load

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "data"
AGENT_FOLDERS = ("gemini-cli", "cline", "opencode")
SUFFIXES = {".json", ".jsonl"}
STRATEGIES = ("ladder", "none")


def files(folders: list[Path]) -> list[Path]:
    return sorted(p for f in folders for p in f.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def before(path: Path) -> str:
    """What loading as OpenAI chat (the old guess) kept, or the error it gave."""
    try:
        return str(len(load(path, "openai").messages))
    except ContextWardenError as exc:
        return "error: " + str(exc).split(": ", 1)[-1][:48]


def row(path: Path, window: int, old: bool) -> list[str]:
    history = load(path)
    report = history.source
    assert report is not None
    runs = replay(history, STRATEGIES, window=window).runs
    ladder, none = runs["ladder"], runs["none"]
    cells = [
        path.name[:44],
        report.format,
        str(report.records),
        str(len(history.messages)),
        str(len(report.issues)),
        str(len(ladder.tokens)),
        f"{ladder.total_tokens_sent:,} / {none.total_tokens_sent:,}",
        f"{ladder.total_tokens_sent / max(1, none.total_tokens_sent):.2f}",
        f"{ladder.peak_context:,} / {none.peak_context:,}",
        f"{ladder.over_window} / {none.over_window}",
        f"{ladder.invalid_requests} / {none.invalid_requests}",
    ]
    return [*cells, before(path)] if old else cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--window", type=int, default=8_000)
    parser.add_argument("--before", action="store_true")
    args = parser.parse_args()
    folders = args.folders or [FIXTURES / name for name in AGENT_FOLDERS]
    head = [
        "file", "format", "records", "messages", "issues", "requests",
        "sent ladder / none", "ratio", "peak ladder / none", "over ladder / none",
        "invalid ladder / none",
    ]  # fmt: skip
    print(f"window {args.window:,} tokens")
    print("| " + " | ".join([*head, *(["before: openai"] if args.before else [])]) + " |")
    print("|" + "---|" * (len(head) + args.before))
    for path in files(folders):
        print("| " + " | ".join(row(path, args.window, args.before)) + " |")


if __name__ == "__main__":
    main()
