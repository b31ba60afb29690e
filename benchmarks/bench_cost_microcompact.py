"""Microcompact's first trigger check: ledger counts reused vs re-counting every old result.

    python benchmarks/bench_cost_microcompact.py [--tokens 2000000]

A history of tool results (as many tokens as asked) is built once; then, in the same run, the
time of ``CompactableResults.old_tokens`` on its first call (which now takes each result's share
of the ledger's message count) next to a full recount of the same results' text with the
heuristic (what the first call used to do), best of 3.
"""

from __future__ import annotations

import argparse
import time

from contextwarden.compaction.incremental import CompactableResults
from contextwarden.compaction.tools import ToolMatcher
from contextwarden.history import ConversationHistory
from contextwarden.model import Message, MessageMeta, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.policy import CLEARED_MARKER, DEFAULT_COMPACTABLE_TOOLS
from contextwarden.tokens.heuristic import HeuristicCounter

RESULT_CHARS = 20_000
LINE = "src/contextwarden/module.py:120: def function(argument): return value  # comment\n"


def build(tokens: int) -> ConversationHistory:
    history = ConversationHistory()
    history.add(Message.user("work on the project"))
    body = LINE * (RESULT_CHARS // len(LINE))
    n = 0
    while history.counted_tokens() < tokens:
        use = ToolUseBlock(f"toolu_{n}", "Read", {"file_path": f"src/f{n}.py"})
        history.add(Message("assistant", (TextBlock(f"step {n}"), use), MessageMeta()))
        history.add(Message("user", (ToolResultBlock(f"toolu_{n}", f"{n}\n{body}"),)))
        n += 1
    return history


def best(fn: object, runs: int = 3) -> tuple[float, int]:
    times, value = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        value = fn()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times), value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=2_000_000)
    args = parser.parse_args()
    history = build(args.tokens)
    view = history.messages
    matcher = ToolMatcher(DEFAULT_COMPACTABLE_TOOLS)
    counter = HeuristicCounter()

    def first_pass() -> int:
        found = CompactableResults(matcher)
        found.update(view)
        return found.old_tokens(view, 3, history.message_tokens, CLEARED_MARKER)

    def recount() -> int:
        return sum(counter.count_text(r.text) for m in view[:-6] for r in m.tool_results)

    new, saving = best(first_pass)
    old, exact = best(recount)
    print(f"history: {history.counted_tokens():,} tokens in {len(view):,} messages")
    print(f"full recount of old results:  {old * 1000:8.1f} ms  ({exact:,} tokens)")
    print(f"first pass, ledger reused:    {new * 1000:8.1f} ms  ({saving:,} tokens)")
    print(f"speed-up {old / new:.0f}x; estimate off by {saving / exact - 1:+.2%}")


if __name__ == "__main__":
    main()
