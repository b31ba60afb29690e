"""What a session store holds after a LangChain agent run that compacts on most requests.

    python benchmarks/bench_store_growth.py              # 12 file reads, as issue 25's run
    python benchmarks/bench_store_growth.py --reads 40

A real ``langchain.agents.create_agent`` agent with ``ContextWardenMiddleware`` (an 8,000-token
window) and a scripted model (LangChain's fake list chat model: no LLM) reads ``--reads`` files of
about 10 KB each, one per request. The events of its session are then measured as stored (compaction
views written as references) and, in the same process, as every view written whole (the baseline:
what the store wrote before, ``encode`` without references).
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

from contextwarden import ContextPolicy
from contextwarden.integrations.langchain import ContextWardenMiddleware
from contextwarden.stores import SqliteStore
from contextwarden.stores.codec import encode, kind_of

WINDOW = 8_000
READS = 12
LINES_PER_FILE = 500


class ScriptedModel(FakeMessagesListChatModel):
    """LangChain's fake list chat model: replies from a script, tools bound as a no-op."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}: " + " ".join(f"line {i} of {path}" for i in range(LINES_PER_FILE))


def script(reads: int) -> list[BaseMessage]:
    replies: list[BaseMessage] = []
    for n in range(reads + 1):
        usage = {"input_tokens": 500 + 900 * n, "output_tokens": 20, "total_tokens": 520 + 900 * n}
        calls = [{"name": "read_file", "args": {"path": f"f{n}.txt"}, "id": f"call_{n}"}]
        text, tool_calls = ("done", []) if n == reads else ("", calls)
        replies.append(AIMessage(text, tool_calls=tool_calls, usage_metadata=usage))
    return replies


def run(reads: int, directory: Path) -> Path:
    db = directory / "sessions.db"
    middleware = ContextWardenMiddleware(store=str(db), policy=ContextPolicy(context_window=WINDOW))
    agent = create_agent(
        ScriptedModel(responses=script(reads)), tools=[read_file], middleware=[middleware]
    )
    agent.invoke(
        {"messages": [HumanMessage(f"read all {reads} files")]},
        {"configurable": {"thread_id": "t1"}, "recursion_limit": 4 * reads + 10},
    )
    middleware.mirror.store.close()
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=READS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = run(args.reads, Path(tmp))
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            rows = conn.execute("SELECT kind, length(body) FROM events").fetchall()
        size = db.stat().st_size
        store = SqliteStore(db)
        (session,) = store.list_sessions()
        log = store.log(session)
        store.close()
    stored: Counter[str] = Counter()
    for kind, length in rows:
        stored[kind] += length
    whole: Counter[str] = Counter()
    for entry in log:
        whole[kind_of(entry)] += len(encode(entry))
    print(
        f"{args.reads} reads, {len(log)} events; sessions.db {size / 1e6:.2f} MB after a checkpoint"
    )
    print("| events | count | stored (KB) | written whole (KB) | ratio |")
    print("|---|---:|---:|---:|---:|")
    counts = Counter(kind_of(e) for e in log)
    for kind in sorted(whole):
        ratio = whole[kind] / stored[kind] if stored[kind] else 0.0
        print(
            f"| {kind} | {counts[kind]} | {stored[kind] / 1e3:,.1f} | {whole[kind] / 1e3:,.1f} | "
            f"{ratio:.1f}x |"
        )
    total, total_whole = sum(stored.values()), sum(whole.values())
    ratio = total_whole / total
    print(f"| all | {len(log)} | {total / 1e3:,.1f} | {total_whole / 1e3:,.1f} | {ratio:.1f}x |")


if __name__ == "__main__":
    main()
