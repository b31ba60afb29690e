"""Session stores: append latency and load time of a 10,000-message session, per store, and
PostgreSQL with 20 sessions appended to concurrently.

    python benchmarks/bench_stores.py                    # print the tables
    python benchmarks/bench_stores.py --write            # also update docs/benchmarks.md
    python benchmarks/bench_stores.py --messages 2000    # a quicker run
    python benchmarks/bench_stores.py --vs-plain         # SQLite append against a plain INSERT

Appends go one event per call with ``expected_version``, as a write-through history sends them.
PostgreSQL runs against ``$CONTEXTWARDEN_DSN`` (default postgres@127.0.0.1:5432/test) in a
throw-away schema; it is skipped, and says so, when no server answers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from contextwarden.errors import StoreError
from contextwarden.log import MessageAdded, Preamble
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.stores import JsonlStore, PostgresStore, SessionStore, SqliteStore
from contextwarden.stores.codec import encode
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.anthropic import message_to_wire

MESSAGES = 10_000
CONCURRENT_SESSIONS = 20
CONCURRENT_MESSAGES = 500
"""Messages appended to each of the concurrent PostgreSQL sessions."""
LOAD_RUNS = 7
VS_PLAIN_ROUNDS = 3
SECTION = "## Session stores"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
TARGET_APPEND_MS = 1.0
"""Issue 5's target for one SQLite append."""
TARGET_LOAD_MS = 200.0
"""Issue 5's target for loading a 10,000-message session."""


def conversation(n: int, tag: str = "") -> list[Message]:
    """``n`` messages shaped like an agent session: text turns and tool calls with results."""
    out: list[Message] = []
    for i in range(n):
        if i % 2 == 0:
            prev = out[-1] if out else None
            if prev is not None and prev.tool_uses:
                result = ToolResultBlock(prev.tool_uses[0].id, f"{tag}output {i}\n" + "x" * 1500)
                out.append(Message("user", (result,)))
            else:
                out.append(Message.user(f"{tag}request {i}: " + "please look at this. " * 10))
        elif i % 4 == 1:
            call = ToolUseBlock(f"toolu_{tag}{i}", "Bash", {"command": f"grep -rn item{i} src/"})
            out.append(Message("assistant", (TextBlock(f"checking {i}"), call)))
        else:
            out.append(Message.assistant(f"{tag}answer {i}: " + "here is what I found. " * 15))
    return out


def spread(ms: list[float]) -> str:
    """Median and, in brackets, best of the runs: the best is what the code costs, the median
    adds what other processes on the machine took from it."""
    return f"{statistics.median(ms):.0f} ({min(ms):.0f})"


@dataclass
class Result:
    store: str
    appends: list[float]
    log_ms: list[float]
    load_ms: list[float]
    recount_ms: list[float]
    """``load()`` with a counter whose counts are not stored: every message is counted."""
    size: str

    @property
    def append_ms(self) -> tuple[float, float]:
        """(median, p99) of the append latencies, in ms."""
        ms = sorted(t * 1000 for t in self.appends)
        return statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.99))]

    def row(self) -> str:
        median, p99 = self.append_ms
        return (
            f"| {self.store} | {median:.3f} | {p99:.3f} | {spread(self.log_ms)} | "
            f"{spread(self.load_ms)} | {spread(self.recount_ms)} | {self.size} |"
        )

    def verdict(self) -> str:
        median = self.append_ms[0]
        load, best = statistics.median(self.load_ms), min(self.load_ms)

        def met(value: float, target: float) -> str:
            return "met" if value <= target else "**not met**"

        return (
            f"{self.store}: append median {median:.2f} ms (target ≤ {TARGET_APPEND_MS:g} ms: "
            f"{met(median, TARGET_APPEND_MS)}); load median {load:.0f} ms, best {best:.0f} ms "
            f"(target ≤ {TARGET_LOAD_MS:g} ms: {met(load, TARGET_LOAD_MS)} by the median, "
            f"{met(best, TARGET_LOAD_MS)} by the best run)."
        )


class UncachedCounter:
    """The default estimate without a ``cache_key``: loading with it counts every message, as
    loading a log written before counts were stored does."""

    def __init__(self) -> None:
        self._counter = HeuristicCounter()

    def count_text(self, text: str) -> int:
        return self._counter.count_text(text)

    def count_message(self, message: Message) -> int:
        return self._counter.count_message(message)


def entries(messages: list[Message]) -> list[MessageAdded]:
    """The entries a write-through history records: each message with its count."""
    counter = HeuristicCounter()
    key = counter.cache_key
    return [MessageAdded(m, tokens=counter.count_message(m), counter=key) for m in messages]


def bench_store(name: str, store: SessionStore, messages: list[Message], directory: Path) -> Result:
    session = f"bench-{uuid.uuid4().hex[:8]}"
    store.append(session, [Preamble("You are a coding agent.")], expected_version=0)
    times: list[float] = []
    version = 1
    for entry in entries(messages):
        start = time.perf_counter()
        version = store.append(session, [entry], expected_version=version)
        times.append(time.perf_counter() - start)
    reads: list[float] = []
    loads: list[float] = []
    recounts: list[float] = []
    for _ in range(LOAD_RUNS):
        # Each result is kept until the next is timed: freeing 10,000 messages is not loading.
        start = time.perf_counter()
        log = store.log(session)
        reads.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        history = store.load(session)
        loads.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        recounted = store.load(session, counter=UncachedCounter())
        recounts.append((time.perf_counter() - start) * 1000)
        assert len(log) == len(messages) + 1 and len(history.messages) == len(messages)
        assert recounted.estimate_tokens() == history.estimate_tokens()
        del log, history, recounted
    return Result(name, times, reads, loads, recounts, disk_usage(directory))


def concurrent_postgres(dsn: str, schema: str) -> str:
    """20 threads, one session each, appending at once through one pooled store."""
    store = PostgresStore(dsn, schema=schema, max_size=CONCURRENT_SESSIONS)
    latencies: list[float] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        mine: list[float] = []
        version = 0
        for message in conversation(CONCURRENT_MESSAGES, tag=f"s{n}-"):
            start = time.perf_counter()
            version = store.append(f"c{n}", [MessageAdded(message)], expected_version=version)
            mine.append(time.perf_counter() - start)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(CONCURRENT_SESSIONS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    lost = duplicated = 0
    for n in range(CONCURRENT_SESSIONS):
        log = store.log(f"c{n}")
        counts = Counter(fingerprint(e.message) for e in log if isinstance(e, MessageAdded))
        wanted = [fingerprint(m) for m in conversation(CONCURRENT_MESSAGES, tag=f"s{n}-")]
        lost += sum(1 for text in wanted if text not in counts)
        duplicated += sum(c - 1 for c in counts.values())
    store.close()
    ms = sorted(t * 1000 for t in latencies)
    total = len(latencies)
    return (
        f"| {CONCURRENT_SESSIONS} sessions, {CONCURRENT_MESSAGES} appends each | {total} | "
        f"{total / elapsed:,.0f} | {statistics.median(ms):.2f} | "
        f"{ms[int(total * 0.99)]:.2f} | {lost} | {duplicated} |"
    )


def vs_plain(messages: list[Message], directory: Path) -> tuple[float, float]:
    """(median SqliteStore append, median plain INSERT) in seconds, measured interleaved.

    The baseline is what any SQLite log costs at least: the same event body, encoded before the
    clock starts, inserted into a table of the same shape with one ``INSERT`` in its own
    ``BEGIN IMMEDIATE`` transaction, WAL and ``synchronous=NORMAL`` like the store. Each event
    is timed once each way, one right after the other, so both see the same machine load.
    """
    store = SqliteStore(directory / "store.db")
    plain = sqlite3.connect(directory / "plain.db", isolation_level=None)
    plain.execute("PRAGMA journal_mode=WAL")
    plain.execute("PRAGMA synchronous=NORMAL")
    plain.execute(
        "CREATE TABLE events (session_id TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL,"
        " body TEXT NOT NULL, PRIMARY KEY (session_id, seq))"
    )
    version = store.append("s", [Preamble("You are a coding agent.")], expected_version=0)
    ours: list[float] = []
    theirs: list[float] = []
    events = entries(messages)
    bodies = [encode(e) for e in events]  # all before, so no encoding warms the store's caches
    for entry, body in zip(events, bodies, strict=True):
        start = time.perf_counter()
        plain.execute("BEGIN IMMEDIATE")
        plain.execute("INSERT INTO events VALUES (?, ?, ?, ?)", ("s", version, "message", body))
        plain.execute("COMMIT")
        theirs.append(time.perf_counter() - start)
        start = time.perf_counter()
        version = store.append("s", [entry], expected_version=version)
        ours.append(time.perf_counter() - start)
    store.close()
    plain.close()
    return statistics.median(ours), statistics.median(theirs)


def run_vs_plain(n: int, rounds: int = VS_PLAIN_ROUNDS) -> str:
    messages = conversation(n)
    rows = []
    for i in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            ours, theirs = vs_plain(messages, Path(tmp))
        rows.append(f"| {i + 1} | {ours * 1e6:.1f} | {theirs * 1e6:.1f} | {ours / theirs:.2f}x |")
        print(rows[-1], file=sys.stderr)
    load1, _, _ = os.getloadavg()
    return "\n".join(
        [
            f"`python benchmarks/bench_stores.py --vs-plain --messages {n}` — {rounds} rounds of "
            f"{n:,} write-through appends (one event per call, `expected_version`), each timed "
            "right after a plain `INSERT` of the same pre-encoded body in its own transaction "
            f"(WAL, synchronous NORMAL); medians. Load average {load1:.1f} at the end.",
            "",
            "| round | `SqliteStore.append` (µs) | plain INSERT (µs) | ratio |",
            "|---:|---:|---:|---:|",
            *rows,
        ]
    )


def fingerprint(message: Message) -> str:
    return json.dumps(message_to_wire(message), sort_keys=True)


def drop_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def disk_usage(path: Path) -> str:
    if not path.is_dir():
        return "server"
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return f"{total / 1e6:.1f} MB"


def stores(base: Path, dsn: str, schema: str) -> list[tuple[str, Callable[[], SessionStore]]]:
    """(label, how to open it) of each store measured; files go under ``base/<n>``."""
    return [
        ("SQLite (WAL, sync NORMAL: default)", lambda: SqliteStore(base / "0/s.db")),
        ("SQLite (WAL, sync FULL)", lambda: SqliteStore(base / "1/s.db", synchronous="FULL")),
        ("JSONL (fsync every append)", lambda: JsonlStore(base / "2")),
        ("PostgreSQL 15 (localhost, pooled)", lambda: PostgresStore(dsn, schema=schema)),
    ]  # fmt: skip


def run(n: int) -> str:
    messages = conversation(n)
    dsn = os.environ.get("CONTEXTWARDEN_DSN", DEFAULT_DSN)
    schema = f"cw_bench_{uuid.uuid4().hex[:8]}"
    results: list[Result] = []
    concurrent = ""
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, make) in enumerate(stores(Path(tmp), dsn, schema)):
            try:
                store = make()
            except StoreError as exc:
                print(f"skipped {name}: {exc}", file=sys.stderr)
                continue
            result = bench_store(name, store, messages, Path(tmp) / str(i))
            store.close()
            results.append(result)
            print(result.row(), file=sys.stderr)
    try:
        concurrent = concurrent_postgres(dsn, schema)
        drop_schema(dsn, schema)
    except StoreError as exc:
        print(f"skipped concurrent PostgreSQL: {exc}", file=sys.stderr)
    return report(n, results, concurrent)


def report(n: int, results: list[Result], concurrent: str) -> str:
    load1, _, _ = os.getloadavg()
    lines = [
        SECTION,
        "",
        f"`python benchmarks/bench_stores.py` — {n:,} messages (text turns, tool calls, 1.5 KB "
        "tool results) appended one per call with `expected_version`, as write-through does; "
        f"then `store.log()` and `store.load()` of the whole session: median (best) of {LOAD_RUNS} "
        "runs, wall time. "
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {load1:.1f} at the end of the run.",
        "",
        "| store | append median (ms) | append p99 (ms) | `log()` (ms) | `load()` (ms) "
        "| `load()`, recounting (ms) | on disk |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(r.row() for r in results),
        "",
        "Each event carries the message's token count, as a write-through history records it. "
        "`log()` is the store's own work: read and decode every event. `load()` adds rebuilding "
        "the `ConversationHistory`; its token ledger reuses the stored counts (same counter "
        "`cache_key`). `load()`, recounting: the same with a counter whose counts are not stored "
        "(a log written before counts were stored, or another counter), so the ledger counts "
        "every message of the view. SQLite's on-disk size includes its write-ahead log.",
        "",
        "What makes `load()` fast (issue 5): the count a history computes for each message is "
        "stored with it (`MessageAdded.tokens`, under the counter's `cache_key`), so a restart "
        "does not count the session again (compaction boundary views are recounted); the codec "
        "builds the blocks our writer writes (text, tool calls, text tool results, thinking, "
        "without extra fields) directly, any other shape through the general wire reader; and "
        "the cyclic garbage collector is paused while a log is decoded, which makes no cycles.",
    ]
    if results:
        lines += ["", "Targets: " + results[0].verdict()]
    if concurrent:
        lines += [
            "",
            "PostgreSQL, concurrent sessions (one thread per session, one pooled store; every "
            "session's log is compared with what its thread appended):",
            "",
            "| run | appends | appends/s | median (ms) | p99 (ms) | lost | duplicated |",
            "|---|---:|---:|---:|---:|---:|---:|",
            concurrent,
        ]
    return "\n".join(lines) + "\n"


def write_section(text: str, path: Path = DOCS) -> None:
    """Replace this benchmark's section of docs/benchmarks.md (other sections are kept)."""
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = old.find(SECTION + "\n")
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(SECTION))
        new = old[:start] + text + (old[end:] if end >= 0 else "")
    path.write_text(new, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=MESSAGES)
    parser.add_argument("--write", action="store_true", help=f"update {DOCS}")
    parser.add_argument(
        "--vs-plain", action="store_true", help="only SQLite append against a plain INSERT"
    )
    args = parser.parse_args()
    if args.vs_plain:
        print(run_vs_plain(args.messages))
        return
    text = run(args.messages)
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
