"""What agents' own compactions took out of the context, totalled over real session files: for every
file given (or found under a folder given), what ``inspect`` reports for each compaction the file
records (``compactions_lost``), then the totals.

    python benchmarks/bench_agent_compactions.py DATA/transcripts/codex [MORE_ROLLOUTS …]

A session saved more than once (two checkpoints of one Codex session) is counted once, from its
longest file. Per compaction: the summary's state (read, encrypted, absent), the tokens that left
the context or were not kept word for word, the tool results and assistant messages among them,
and the facts gone: typed texts, files, errors, decisions.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from contextwarden.cli.inspect_cmd import recorded_losses
from contextwarden.content_ids import CONTENT_ID_PREFIX
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.tokens.heuristic import HeuristicCounter

SUFFIXES = {".json", ".jsonl"}
COLUMNS = ("tokens", "tool results", "assistant", "typed", "files", "errors", "decisions")
FACTS = {"user_text": "typed", "file": "files", "error": "errors", "decision": "decisions"}


def files(paths: list[Path]) -> list[Path]:
    found = [p for p in paths if p.is_file()]
    found += [f for p in paths if p.is_dir() for f in p.rglob("*") if f.suffix in SUFFIXES]
    return sorted(set(found))


def sessions(paths: list[Path]) -> dict[str, ConversationHistory]:
    """Each session once: by the session id the file records, else by its path; the longest
    file (most records) of a session wins."""
    out: dict[str, ConversationHistory] = {}
    for path in paths:
        history = load(path)
        report = history.source
        assert report is not None
        session = report.metadata.get("session")
        key = str(session.get("id")) if isinstance(session, dict) else str(path)
        kept = out.get(key)
        if kept is None or (kept.source and kept.source.records < report.records):
            out[key] = history
    return out


def counts(compaction: dict[str, Any]) -> Counter[str]:
    """One compaction's columns, from its ``lost`` report."""
    items = compaction["lost"]["items"]
    row: Counter[str] = Counter(tokens=compaction["lost"]["tokens"])
    for item in items:
        if item["kind"] in FACTS:
            row[FACTS[item["kind"]]] += 1
            continue
        row["tool results"] += sum(1 for r in item["refs"] if not r.startswith(CONTENT_ID_PREFIX))
        row["assistant"] += item["what"].startswith("assistant:")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="session files or folders")
    args = parser.parse_args()
    counter = HeuristicCounter()
    by_state: dict[str, Counter[str]] = {}
    found = sessions(files(args.paths))
    print(f"{'file':<44} {'#':>3} {'summary':<9} " + " ".join(f"{c:>12}" for c in COLUMNS))
    for history in found.values():
        assert history.source is not None
        name = Path(history.source.path or "?").name[:44]
        for n, compaction in enumerate(recorded_losses(history, counter), start=1):
            row = counts(compaction)
            by_state.setdefault(compaction["summary"], Counter())
            by_state[compaction["summary"]] += row + Counter(compactions=1)
            print(f"{name:<44} {n:>3} {compaction['summary']:<9} {_cells(row)}")
    print(f"{len(found)} session(s)")
    total: Counter[str] = sum(by_state.values(), Counter())
    for state, row in [*sorted(by_state.items()), ("total", total)]:
        print(f"{state:<44} {row['compactions']:>3} {'':<9} {_cells(row)}")


def _cells(row: Counter[str]) -> str:
    return " ".join(f"{row[c]:>12,}" for c in COLUMNS)


if __name__ == "__main__":
    main()
