"""Peak memory of loading a large session file, read each way in a fresh process: a Claude Code
file whose one user message is ``--mb`` megabytes of text, and one of the same size made of
many ordinary turns.

    python benchmarks/bench_load_memory.py            # 100 MB
    python benchmarks/bench_load_memory.py --mb 20    # quicker
    python benchmarks/bench_load_memory.py --text letter   # a run of one letter (or cjk, emoji)

Each row is one child process; its peak resident memory (``ru_maxrss``) minus that of a child that
imported the same modules and read a one-line file is what reading the file cost, shown as a
multiple of the file's size. ``whole file`` is how the JSONL loaders read before
(``iter_jsonl(read_text(...))``: the bytes, their text and its lines at once); ``streamed`` is
``read_jsonl``. The ``load()`` rows add building the history, with a counter that counts nothing
(the loader's own cost) and with the default heuristic counter.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

MB = 1_000_000
DEFAULT_MB = 100
PHRASE = "lorem ipsum dolor sit amet, "
TEXTS = {"lorem": PHRASE, "letter": "a", "cjk": "上下文窗口管理", "emoji": "🙂🚀"}
"""What the text of the files is made of (``--text``): the counter's paths differ (runs of one
character, non-ASCII classes, astral characters: four bytes each, twelve in the JSON file)."""
TURN_CHARS = 5_000
"""Characters of each turn of the many-turns file."""

CHILD = """
import sys
from contextwarden.formats import load
from contextwarden.formats.base import iter_jsonl, read_jsonl, read_text
from contextwarden.loadreport import LoadReport

class Nothing:
    cache_key = "nothing"
    def count_text(self, text): return 0
    def count_message(self, message): return 0

how, path = sys.argv[1], sys.argv[2]
report = LoadReport(path, "claude-code")
if how == "whole file":
    values = [item.value for item in iter_jsonl(read_text(path, report), report)]
elif how == "streamed":
    values = [item.value for item in read_jsonl(path, report)]
elif how == "load(), counting nothing":
    values = load(path, "claude-code", counter=Nothing()).messages
else:
    values = load(path, "claude-code").messages
print(len(values))
"""

WAYS = ("whole file", "streamed", "load(), counting nothing", "load(), heuristic counter")


def one_message(path: Path, megabytes: float, phrase: str = PHRASE) -> None:
    """Two records: a user message of about ``megabytes`` of file and a short reply."""
    text = phrase * int(megabytes * MB / len(json.dumps(phrase)[1:-1]))
    path.write_text(_record("u1", None, "user", text) + _record("a1", "u1", "assistant", "ok"))


def many_records(path: Path, megabytes: float, phrase: str = PHRASE) -> None:
    """Turns of about ``TURN_CHARS`` file bytes each, ``megabytes`` in all."""
    turns = max(int(megabytes * MB / TURN_CHARS), 2)
    text = phrase * (TURN_CHARS // len(json.dumps(phrase)[1:-1]))
    with path.open("w", encoding="utf-8") as file:
        for n in range(turns):
            role = "user" if n % 2 == 0 else "assistant"
            file.write(_record(f"m{n}", f"m{n - 1}" if n else None, role, f"{n} {text}"))


def _record(uuid: str, parent: str | None, role: str, text: str) -> str:
    content: object = text if role == "user" else [{"type": "text", "text": text}]
    message = {"role": role, "content": content}
    record = {
        "type": role,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "message": message,
    }
    return json.dumps(record) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=DEFAULT_MB, help="size of the message")
    parser.add_argument("--text", choices=tuple(TEXTS), default="lorem", help="what it says")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Path(tmp) / "tiny.jsonl"
        one_message(tiny, 0.0001)
        base = peak_kb("whole file", tiny)
        print(f"interpreter and imports: {base / 1000:.0f} MB")
        print("| file | read as | peak (MB) | above the interpreter (MB) | x file |")
        print("|---|---|---:|---:|---:|")
        for label, make in (("one message", one_message), ("many turns", many_records)):
            big = Path(tmp) / "big.jsonl"
            make(big, args.mb, TEXTS[args.text])
            size_mb = big.stat().st_size / MB
            for how in WAYS:
                peak = peak_kb(how, big)
                above = (peak - base) / 1000
                name = f"{label} ({args.text}), {size_mb:.0f} MB"
                print(
                    f"| {name} | {how} | {peak / 1000:,.0f} | {above:,.0f} | "
                    f"{above / size_mb:.1f} |"
                )


def peak_kb(how: str, path: Path) -> int:
    """Peak RSS (KB) of a process that reads ``path`` the way ``how`` says: measured by a parent
    of its own, since ``RUSAGE_CHILDREN`` is the maximum over every child ever waited for."""
    code = (
        "import sys, resource, subprocess\n"
        f"subprocess.run([sys.executable, '-c', {CHILD!r}, {how!r}, {str(path)!r}], check=True,"
        " capture_output=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


if __name__ == "__main__":
    main()
