"""How often the proxy summarizes when an agent's fixed part (system prompt + tools) takes a
large share of the window: 40 requests of one ~1,000-token tool turn each through the proxy's
sessions (``--cache auto``'s ladder, SQLite store), 30,000-token window, with the kept tail
bounded by ``summary_room_ratio`` 1.0 (the kept tail as large as the room allows: close to the
budget before that field existed), 0.5 (the default) and 0.3, in one run.

    python benchmarks/bench_proxy_fixed_share.py [--requests 40] [--window 30000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from contextwarden.compaction.cache import CachePolicy
from contextwarden.log import CompactionBoundary
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.sessions import Sessions
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter

SYSTEM = "You are a coding agent."


def file_text(n: int) -> str:
    return "\n".join(
        f"def f{n}_{i}(x):  # line {i} of module {n}\n    return x * {i}" for i in range(60)
    )


def summaries(window: int, fixed_words: int, requests: int, ratio: float) -> tuple[int, int]:
    """(the preamble's tokens, summaries made over ``requests`` requests)."""
    tools = [
        {"name": f"Tool{i}", "description": "word " * fixed_words, "input_schema": {}}
        for i in range(10)
    ]
    policy = ContextPolicy(context_window=window, summary_room_ratio=ratio)
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "s.sqlite3")
        sessions = Sessions(store, ContextManager(policy, cache=CachePolicy()), HeuristicCounter())
        items: list[Any] = [{"role": "user", "content": "Read every module."}]
        for n in range(requests):
            body = {"messages": items, "system": SYSTEM, "tools": tools}
            sessions.manage(ANTHROPIC.conversation(body, "agent"))
            use = {"type": "tool_use", "id": f"call_{n}", "name": "Tool0", "input": {"n": n}}
            result = {"type": "tool_result", "tool_use_id": f"call_{n}", "content": file_text(n)}
            items += [
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [result]},
            ]
        history = sessions.history("agent", SYSTEM, tools)
        made = sum(isinstance(e, CompactionBoundary) and e.summary is not None for e in history.log)
        store.close()
    return history.preamble_tokens, made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--window", type=int, default=30_000)
    args = parser.parse_args()
    print(f"{args.requests} requests, {args.window:,}-token window\n")
    print("| system + tools | summaries, summary_room_ratio 1.0 | 0.5 (default) | 0.3 |")
    print("|---|--:|--:|--:|")
    for words in (600, 1_000, 1_400, 1_700, 1_850):
        fixed, wide = summaries(args.window, words, args.requests, 1.0)
        half = summaries(args.window, words, args.requests, 0.5)[1]
        bounded = summaries(args.window, words, args.requests, 0.3)[1]
        share = fixed / args.window
        print(f"| {fixed:,} tokens ({share:.0%}) | {wide} | {half} | {bounded} |")


if __name__ == "__main__":
    main()
