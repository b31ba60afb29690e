"""Rebuild the trimmed transcript fixtures in tests/data/transcripts/ from the full corpus.

    CONTEXTWARDEN_DATA=/path/to/data python tests/data/make_fixtures.py

Trimming keeps every file a valid session of its format: records are never edited structurally,
only long strings are shortened (head and tail kept around a marker saying how much was cut; a
string holding JSON is trimmed inside and re-encoded, so tool arguments stay parseable), and a
long conversation is cut after a whole turn (mini-swe-agent keeps its final `exit` message).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "transcripts"
TEXT_OUT = HERE / "text"
KEEP_CHARS = 200  # a trimmed string keeps this many characters, half from each end
TEXT_BYTES = 10_000  # a text sample's size: TEXT_CHUNKS runs of whole lines from the corpus file
TEXT_CHUNKS = 5
TEXT_KINDS = ("code", "en", "ja", "json", "mixed", "zh")


@dataclass(frozen=True)
class Spec:
    """One fixture: its path under transcripts/, and where a long conversation is cut."""

    path: str
    records: int | None = None  # JSONL: keep the first N lines
    messages: int | None = None  # trajectories: keep the first N chat messages (+ exit)
    steps: int | None = None  # classic SWE-agent: keep the first N trajectory steps
    events: int | None = None  # OpenHands output.jsonl: each run's first N events (+ its last)
    keep: int = KEEP_CHARS  # more for the sessions whose compaction the tests measure


SPECS = (
    Spec("claude-code/d-kimuson__claude-code-viewer__5c0375b4.jsonl"),
    Spec("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl", 179),
    Spec("codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl"),
    Spec("codex/EntityProcess__agentv__0034f597b72d-s1-codex-spark-2compactions.jsonl", 285),
    Spec("swe-agent/SWE-agent__SWE-agent__gpt4-pydicom-1458.traj", keep=1200),
    Spec(
        "swe-agent/SWE-agent__SWE-agent__demo-marshmallow-1867-fc-replace.traj",
        messages=10,
        steps=4,
    ),
    Spec(
        "swe-agent/SWE-agent__mini-swe-agent__pr816-deepseek-reasoner-sqlfluff-1733.traj.json",
        messages=24,
    ),
    Spec(
        "swe-agent/gruckion__mini-swe-agent__gemini3pro-django__django-11138.traj.json", messages=24
    ),
    Spec(
        "openai-chat/SWE-agent__mini-swe-agent__pr816-deepseek-chat-astroid-1333.traj.json",
        messages=24,
    ),
    Spec(
        "openhands/All-Hands-AI__OpenHands__multi-swe-bench-ponyc-llama4-output.jsonl",
        records=2,
        events=12,
    ),
    Spec("openhands/All-Hands-AI__OpenHands__resolver-mock-output.jsonl"),
    Spec("openhands/All-Hands-AI__OpenHands__runtime-traj-basic_gui_mode.json"),
)


def trim(value: Any, keep: int) -> Any:
    """The same JSON value with every string longer than ``keep`` shortened around a marker."""
    if isinstance(value, dict):
        return {key: trim(item, keep) for key, item in value.items()}
    if isinstance(value, list):
        return [trim(item, keep) for item in value]
    if not isinstance(value, str) or len(value) <= keep:
        return value
    if value.lstrip()[:1] in ("{", "["):
        try:
            inner = json.loads(value)
        except ValueError:
            pass
        else:
            return json.dumps(trim(inner, keep), ensure_ascii=False)
    cut = len(value) - keep
    half = keep // 2
    return f"{value[:half]}\n[… {cut:,} characters trimmed for the test fixture …]\n{value[-half:]}"


def cut_run(record: dict[str, Any], events: int | None) -> dict[str, Any]:
    """An OpenHands run with its history cut to the first ``events`` events and its last one."""
    history = record.get("history")
    if events is not None and isinstance(history, list) and len(history) > events + 1:
        record = {**record, "history": history[:events] + history[-1:]}
    return record


def trim_jsonl(text: str, spec: Spec) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    if spec.records is not None:
        lines = lines[: spec.records]
    return "".join(
        json.dumps(
            trim(cut_run(json.loads(line), spec.events), spec.keep),
            ensure_ascii=False,
            separators=(",", ":"),
        )
        + "\n"
        for line in lines
    )


def trim_document(text: str, spec: Spec) -> str:
    document = json.loads(text)
    if spec.messages is not None:
        key = "history" if "history" in document else "messages"
        chat = document[key]
        exits = [m for m in chat if m.get("role") == "exit"]
        document[key] = chat[: spec.messages] + exits
    if spec.steps is not None:
        document["trajectory"] = document["trajectory"][: spec.steps]
    return json.dumps(trim(document, spec.keep), ensure_ascii=False, indent=1) + "\n"


def text_sample(text: str) -> tuple[str, list[tuple[int, int]]]:
    """TEXT_CHUNKS pieces of whole lines spread evenly over a text corpus file (so every source
    in it is represented), about TEXT_BYTES in all, with their byte ranges in the file."""
    data = text.encode("utf-8")
    size = TEXT_BYTES // TEXT_CHUNKS
    ranges = []
    for i in range(TEXT_CHUNKS):
        start = data.rfind(b"\n", 0, i * len(data) // TEXT_CHUNKS) + 1
        end = data.rfind(b"\n", start, start + size) + 1
        if end > start:  # a window inside one long line (minified JSON) is left out
            ranges.append((start, end))
    return b"".join(data[a:b] for a, b in ranges).decode("utf-8"), ranges


def main() -> int:
    data = os.environ.get("CONTEXTWARDEN_DATA")
    if not data:
        print(
            "set CONTEXTWARDEN_DATA to the corpus directory (holding transcripts/)", file=sys.stderr
        )
        return 2
    source = Path(data) / "transcripts"
    for spec in SPECS:
        text = (source / spec.path).read_text(encoding="utf-8")
        jsonl = spec.path.endswith(".jsonl")
        out = trim_jsonl(text, spec) if jsonl else trim_document(text, spec)
        target = OUT / spec.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(out, encoding="utf-8")
        print(f"{len(out.encode()):>9,} bytes  {spec.path}")
    TEXT_OUT.mkdir(exist_ok=True)
    for kind in TEXT_KINDS:
        full = (Path(data) / "text" / f"{kind}.txt").read_text(encoding="utf-8")
        sample, ranges = text_sample(full)
        (TEXT_OUT / f"{kind}.txt").write_text(sample, encoding="utf-8")
        print(
            f"{len(sample.encode()):>9,} bytes  text/{kind}.txt, bytes "
            + ", ".join(f"[{a:,}, {b:,})" for a, b in ranges)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
