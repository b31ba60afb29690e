"""Run every session file under the given folders through the command line as a user would, one
process at a time, and record per file and command: exit code, seconds, whether stderr holds a
Python traceback; the format told without ``--format``; whether ``compact``'s output loads back;
whether the text view holds a control character a terminal would obey.

    python benchmarks/bench_cli_sweep.py FOLDER [FOLDER ...] [--src SRC] [--window 40000]
        [--timeout 120] [--json]

The commands: ``inspect FILE --json``, ``inspect FILE``, ``compact FILE -o OUT.json`` (then
``inspect OUT.json --json``) and ``replay FILE --window W``, each under a timeout. ``--src`` runs
another checkout's ``src`` (``PYTHONPATH``), to compare before and after. Files are those
``bench_load_sweep.py`` loads. ``--json`` prints one JSON line per file instead of the tally.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench_load_sweep import _session_file

COMMANDS = ("inspect-json", "inspect", "compact", "replay")
SLOW_SECONDS_PER_MB = 10.0
"""A command slower than this per megabyte of input is counted as slow (after a second of
start-up, which every command pays)."""
START_UP_SECONDS = 1.5


def _args(command: str, path: Path, out: Path, window: int) -> list[str]:
    return {
        "inspect-json": ["inspect", str(path), "--json"],
        "inspect": ["inspect", str(path)],
        "compact": ["compact", str(path), "-o", str(out)],
        "replay": ["replay", str(path), "--window", str(window)],
    }[command]


def _run(args: list[str], env: dict[str, str], timeout: int) -> dict[str, Any]:
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "contextwarden", *args],
            env=env,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        code, out, err = done.returncode, done.stdout, done.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        code, out, err = -1, b"", "timed out"
    seconds = round(time.monotonic() - started, 2)
    return {
        "rc": code,
        "s": seconds,
        "traceback": "Traceback" in err,
        "err": err[-300:],
        "out": out,
    }


def _obeyed(text: str) -> bool:
    """A control character a terminal acts on (ESC, a bell, a carriage return) in ``text``."""
    return any((ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0 for c in text)


def sweep_one(
    path: Path, env: dict[str, str], out: Path, window: int, timeout: int
) -> dict[str, Any]:
    row: dict[str, Any] = {"path": str(path), "bytes": path.stat().st_size, "format": None}
    for command in COMMANDS:
        result = _run(_args(command, path, out, window), env, timeout)
        stdout = result.pop("out")
        if command == "inspect-json" and result["rc"] == 0:
            row["format"] = json.loads(stdout)["format"]
        if command == "inspect":
            result["obeyed"] = _obeyed(stdout.decode(errors="replace"))
        if command == "compact" and result["rc"] == 0:
            result["reloads"] = _run(["inspect", str(out), "--json"], env, timeout)["rc"] == 0
        row[command] = result
    return row


def _slow(row: dict[str, Any], command: str) -> bool:
    allowed = START_UP_SECONDS + SLOW_SECONDS_PER_MB * row["bytes"] / 1e6
    return bool(row[command]["s"] > allowed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--src", type=Path, help="the src folder to run (default: installed)")
    parser.add_argument("--window", type=int, default=40_000)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--json", action="store_true", help="one JSON line per file")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.src is not None:
        env["PYTHONPATH"] = str(args.src.resolve())
    files = sorted(p for folder in args.folders for p in folder.rglob("*") if _session_file(p))
    tally: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "compacted.json"
        for path in files:
            row = sweep_one(path, env, out, args.window, args.timeout)
            if args.json:
                print(json.dumps(row), flush=True)
            tally["told" if row["format"] else "refused"] += 1
            for command in COMMANDS:
                result = row[command]
                tally[f"{command} exit {result['rc']}"] += 1
                tally[f"{command} traceback"] += result["traceback"]
                tally[f"{command} slow"] += _slow(row, command)
                seconds[command] += result["s"]
            tally["compact reloads"] += row["compact"].get("reloads", False)
            tally["inspect obeyed control"] += row["inspect"]["obeyed"]
    if args.json:
        return
    for key in sorted(tally):
        print(f"{key:32} {tally[key]:6}")
    for command in COMMANDS:
        print(f"{command + ' seconds':32} {seconds[command]:8.1f}")
    print(f"{len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
