"""Time format detection on the shared corpus's transcripts and the samples under tests/data/:
the plain head only (the first ``SNIFF_BYTES``, as detection read before) against
``detect_format`` (that head, then a condensed one when it is one unfinished JSON value no
sniffer knew), in one process, with the same sniffers.

    CONTEXTWARDEN_DATA=DATA python benchmarks/bench_detect.py [--repeat 5]

Prints the total and the slowest file's time each way (best of ``--repeat`` runs), how many
files took the condensed head, and any file the two ways tell differently; then the time
``detect_format`` takes on two files whose first value is bigger than the head: a Codex rollout
whose ``session_meta`` carries ``--mb`` MB of instructions (told on the condensed head), and a
JSON document of no known format holding one string of that size (refused after reading at most
``LONG_HEAD_BYTES``: the worst case).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from contextwarden.errors import FormatError
from contextwarden.formats import FORMATS, SNIFF_BYTES, _module, detect_format
from contextwarden.formats.sniffing import sniffed_heads

MB = 1_000_000
SUFFIXES = {".jsonl", ".json", ".traj", ".md", ".db"}
TESTS_DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SHARED_TEXT = "text"
"""The folders of text samples (not sessions) under both roots."""


def _files() -> list[Path]:
    roots = [TESTS_DATA]
    if os.environ.get("CONTEXTWARDEN_DATA"):
        roots.append(Path(os.environ["CONTEXTWARDEN_DATA"]) / "transcripts")
    return sorted(
        p
        for root in roots
        for p in root.rglob("*")
        if p.is_file() and p.suffix in SUFFIXES and SHARED_TEXT not in p.relative_to(root).parts
    )


def _plain_head(path: Path) -> str:
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    return next((name for name in FORMATS if _module(name).sniff(path, head)), "-")


def _detected(path: Path) -> str:
    try:
        return detect_format(path)
    except FormatError:
        return "-"


def _best(path: Path, detect: Callable[[Path], str], repeat: int) -> tuple[float, str]:
    times, name = [], "-"
    for _ in range(repeat):
        start = time.perf_counter()
        name = detect(path)
        times.append(time.perf_counter() - start)
    return min(times), name


def _big_first_values(folder: Path, mb: int) -> dict[str, Path]:
    text = 'Follow the repository\'s AGENTS.md; quote "paths" as C:\\x does.\n' * (mb * MB // 64)
    meta = {"id": "019c", "cwd": "/repo", "originator": "codex_cli_rs", "instructions": text}
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": meta},
        {
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "fix the build"}],
            },
        },
    ]
    rollout = folder / "rollout.jsonl"
    rollout.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    unknown = folder / "notes.json"
    unknown.write_text(json.dumps({"notes": text * 8}), encoding="utf-8")
    return {"codex rollout": rollout, "unknown document": unknown}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mb", type=int, default=8)
    args = parser.parse_args()
    files = _files()
    for name in FORMATS:  # imports out of the timings
        _module(name)
    totals = {"plain head": 0.0, "detect_format": 0.0}
    slowest = dict.fromkeys(totals, (0.0, ""))
    condensed, differ = 0, []
    for path in files:
        told = {}
        for way, detect in (("plain head", _plain_head), ("detect_format", _detected)):
            seconds, told[way] = _best(path, detect, args.repeat)
            totals[way] += seconds
            slowest[way] = max(slowest[way], (seconds, path.name))
        condensed += len(list(sniffed_heads(path))) > 1
        if told["plain head"] != told["detect_format"]:
            differ.append(f"{path.name}: {told['plain head']} -> {told['detect_format']}")
    print(f"{len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB")
    for way, total in totals.items():
        seconds, name = slowest[way]
        print(f"{way:13} total {total * 1e3:8.1f} ms   slowest {seconds * 1e3:6.1f} ms ({name})")
    print(f"heads cut inside the first value: {condensed}; told differently: {len(differ)}")
    for line in differ:
        print("  " + line)
    with tempfile.TemporaryDirectory() as folder:
        for what, path in _big_first_values(Path(folder), args.mb).items():
            seconds, name = _best(path, _detected, args.repeat)
            size = path.stat().st_size / MB
            print(f"{what} ({size:.0f} MB): {seconds * 1e3:.1f} ms, told: {name}")


if __name__ == "__main__":
    main()
