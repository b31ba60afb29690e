"""Hostile input for the loaders and the stores' codec, shared by the fuzz tests (a few hundred
cases, seconds) and ``benchmarks/bench_fuzz.py`` (thousands).

Every case is made from a seed, so a failure names the seed that reproduces it. Mutations work on
bytes (truncation, invalid UTF-8, deleted or repeated slices) and on parsed JSON (a value swapped
for a wrong type, a huge value, or a deep nest), on real files and on generated documents.
"""

from __future__ import annotations

import json
import random
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError
from contextwarden.formats import FORMATS, load
from contextwarden.stores.codec import decode

DEEP = 1_200
"""Levels of a nest deeper than the JSON parser takes."""
TOOL_DEEP = 500
"""Levels of a nest the parser takes but a recursive walk of the value would not survive."""
HUGE = 200_000
"""Characters of a huge string value."""


def deep_nest(levels: int, rng: random.Random) -> Any:
    """Arrays and objects nested ``levels`` deep (built without recursion)."""
    value: Any = rng.choice([0, "x", None])
    for _ in range(levels):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


def nested_results(levels: int) -> dict[str, Any]:
    """A tool_result whose content holds a tool_result, ``levels`` deep: a nest that a reader
    recursing block by block would follow."""
    value: dict[str, Any] = {"type": "tool_result", "tool_use_id": "t0", "content": "x"}
    for _ in range(levels):
        value = {"type": "tool_result", "tool_use_id": "t0", "content": [value]}
    return value


def wild_value(rng: random.Random) -> Any:
    """A value of a type no field expects, or of a size none expects."""
    choices: list[Callable[[], Any]] = [
        lambda: None,
        lambda: rng.randint(-(10**20), 10**20),
        lambda: 1e308,
        lambda: True,
        lambda: "",
        lambda: "\x00\ud800x",
        lambda: "x" * HUGE,
        lambda: [],
        lambda: {},
        lambda: [None, 1, "two"],
        lambda: {"type": "tool_use", "id": 7, "name": ["x"], "input": "no"},
        lambda: {"type": "tool_result", "content": [{"type": "text"}]},
        lambda: deep_nest(TOOL_DEEP, rng),
        lambda: nested_results(TOOL_DEEP // 2),
        lambda: deep_nest(rng.randint(90, 130), rng),
    ]
    return rng.choice(choices)()


def _nodes(value: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every value inside ``value``, found without recursion."""
    found: list[tuple[Any, Any]] = []
    stack = [value]
    while stack and len(found) < 5_000:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            found.append((node, key))
            if isinstance(child, dict | list):
                stack.append(child)
    return found


def mutate_json(value: Any, rng: random.Random) -> Any:
    """``value`` with a few of its inner values replaced by wild ones (in place, returned)."""
    if not isinstance(value, dict | list):
        return wild_value(rng)
    nodes = _nodes(value)
    for _ in range(rng.randint(1, 3)):
        if not nodes:
            break
        container, key = rng.choice(nodes)
        container[key] = wild_value(rng)
    return value


def mutate_text(data: bytes, rng: random.Random) -> bytes:
    """``data`` (JSON or JSONL) damaged at the byte level or through its parsed values."""
    kind = rng.randrange(6)
    if kind == 0 or not data:
        return data[: rng.randrange(len(data) + 1)]  # truncated
    if kind == 1:
        at = rng.randrange(len(data))
        return data[:at] + rng.choice([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x00"]) + data[at:]
    if kind == 2:
        at, size = rng.randrange(len(data)), rng.randint(1, 200)
        return data[:at] + data[at + size :]
    if kind == 3:
        at = rng.randrange(len(data))
        return data[:at] + b"[" * DEEP + data[at:]
    return _mutate_records(data, rng)


def _mutate_records(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8", errors="replace")
    try:
        whole = json.loads(text)
    except ValueError:
        lines = text.splitlines()
        if not lines:
            return data
        pick = rng.randrange(len(lines))
        try:
            lines[pick] = json.dumps(mutate_json(json.loads(lines[pick]), rng))
        except ValueError:
            lines[pick] = lines[pick][::-1]
        return "\n".join(lines).encode("utf-8", errors="surrogatepass")
    return json.dumps(mutate_json(whole, rng)).encode("utf-8", errors="surrogatepass")


def generated_document(rng: random.Random) -> Any:
    """A document shaped like a conversation, with wild values in it."""
    messages: list[Any] = []
    for i in range(rng.randint(1, 6)):
        role = rng.choice(["user", "assistant", "tool", "system", 3])
        content: Any = rng.choice(
            [
                f"message {i}",
                [{"type": "text", "text": "hi"}],
                [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": "a"}}],
                [{"type": "tool_result", "tool_use_id": f"t{i - 1}", "content": "ok"}],
            ]
        )
        messages.append({"role": role, "content": content})
    document: Any = rng.choice([messages, {"messages": messages}])
    return mutate_json(document, rng)


KEEP_ITEMS = 8
"""A trimmed source keeps this many lines (JSONL) or items of each list (JSON)."""


def trimmed(source: Path, directory: Path) -> Path:
    """A small copy of a real file with its shape: the first lines of JSONL, or each list of a
    JSON document cut to its first items (so mutating and loading it takes milliseconds)."""
    text = source.read_text(encoding="utf-8", errors="replace")
    out = directory / source.name
    try:
        document = json.loads(text)
    except ValueError:
        out.write_text("\n".join(text.splitlines()[:KEEP_ITEMS]) + "\n", encoding="utf-8")
        return out
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            del node[KEEP_ITEMS:]
        children = node.values() if isinstance(node, dict) else node
        stack.extend(c for c in children if isinstance(c, dict | list))
    out.write_text(json.dumps(document), encoding="utf-8")
    return out


@dataclass
class FuzzResult:
    """What a fuzz run saw: cases run, clean errors by class, and escaped exceptions."""

    cases: int = 0
    loaded: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    escaped: list[str] = field(default_factory=list)
    """One line per exception outside ContextWardenError: seed, target, and where it was raised."""

    def record(self, label: str, run: Callable[[], object]) -> None:
        self.cases += 1
        try:
            run()
        except ContextWardenError as exc:
            name = type(exc).__name__
            self.errors[name] = self.errors.get(name, 0) + 1
        except Exception as exc:  # the point of a fuzzer: find exactly these
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{Path(frame.filename).name}:{frame.lineno}"
            self.escaped.append(f"{label}: {type(exc).__name__} at {where}: {str(exc)[:120]}")
        else:
            self.loaded += 1


def load_cases(
    sources: list[Path], count: int, directory: Path, seed: int = 0
) -> Iterator[tuple[str, Path, str]]:
    """``count`` mutated files (label, path, format to load it as): each mutates a real source
    file or a generated document, and is loaded as every format in turn and as ``auto``."""
    rng = random.Random(seed)
    formats = ["auto", *FORMATS]
    for n in range(count):
        if sources and rng.random() < 0.75:
            source = rng.choice(sources)
            data, suffix = mutate_text(source.read_bytes(), rng), source.suffix
            label = f"seed {seed} case {n} ({source.name})"
        else:
            text = json.dumps(generated_document(rng))
            data, suffix = (
                text.encode("utf-8", errors="surrogatepass"),
                rng.choice([".json", ".jsonl"]),
            )
            label = f"seed {seed} case {n} (generated)"
        path = directory / f"case{n}{suffix}"
        path.write_bytes(data)
        yield label, path, formats[n % len(formats)]


def fuzz_loaders(sources: list[Path], count: int, directory: Path, seed: int = 0) -> FuzzResult:
    """Load ``count`` mutated files; every failure must be a ContextWardenError."""
    result = FuzzResult()
    for label, path, fmt in load_cases(sources, count, directory, seed):
        result.record(f"{label} as {fmt}", partial(load, path, fmt))
        path.unlink()
    return result


def fuzz_codec(lines: list[str], count: int, seed: int = 0) -> FuzzResult:
    """Decode ``count`` mutated store events (a corrupted row or line)."""
    rng = random.Random(seed)
    result = FuzzResult()
    for n in range(count):
        data = mutate_text(rng.choice(lines).encode(), rng)
        label = f"seed {seed} event {n}"
        result.record(label, partial(decode, data, where=label))
    return result
