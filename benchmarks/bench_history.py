"""Append one message + ``estimate_tokens()`` at 100, 1,000 and 10,000 messages, vs a full recount.

The history checks a new message against the last one only and the ledger counts it once, so the
cost must stay flat as the history grows. Baselines measured in the same run: the previous add
path (the rule objects on every add, and the heuristic as of commit PREVIOUS, loaded from git),
and a full recount + validate of every message. Chat turns (text) and tool-loop turns (a call,
then its ~400-character result) are timed apart: they take different paths through the checks.

    python benchmarks/bench_history.py [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

from bench_tokens import LAST_ROUND, PREVIOUS, previous_heuristic

from contextwarden import (
    DEFAULT_RULES,
    ConversationHistory,
    HeuristicCounter,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    validate,
)
from contextwarden.tokens.base import TokenCounter

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "text"
SIZES = (100, 1_000, 10_000)
APPENDS = 2_000
"""Timed appends per size (user + assistant pairs, so the history stays valid)."""
ROUNDS = 5
SECTION = "## History: append + estimate (target ≤ 10 µs, flat to 10,000 messages)"
OLD_SECTIONS = (
    "## History: append + estimate (target ≤ 20 µs at 10,000 messages, ≥ 100x a recount)",
)


def filled(size: int, text: str, **kwargs: object) -> ConversationHistory:
    history = ConversationHistory(**kwargs)  # type: ignore[arg-type]
    for i in range(size // 2):
        history.add_user_message(f"{i} {text}")
        history.add_assistant_message(Message.assistant(f"reply {i}: looked at it"))
    return history


def chat_turns(text: str) -> list[tuple[Message, Message]]:
    """A user message of ``text`` and a short reply, APPENDS // 2 times."""
    return [
        (Message.user(f"new {i} {text}"), Message.assistant(f"reply {i}"))
        for i in range(APPENDS // 2)
    ]


def tool_turns(text: str) -> list[tuple[Message, Message]]:
    """A tool call (with a line of text) and its result of ``text``, APPENDS // 2 times."""
    turns = []
    for i in range(APPENDS // 2):
        call = ToolUseBlock(f"toolu_{i:06d}", "Read", {"file_path": f"src/module_{i}.py"})
        turns.append(
            (
                Message("assistant", (TextBlock(f"Reading module {i}."), call)),
                Message("user", (ToolResultBlock(call.id, f"{i} {text}"),)),
            )
        )
    return turns


def time_appends(size: int, text: str, tools: bool = False, **kwargs: object) -> float:
    """Median over rounds of the CPU time per (add + estimate_tokens) at ``size`` messages, in a
    history made with ``kwargs`` (``counter``, ``rules``, ``model``): chat turns, or tool-loop
    turns with ``tools``."""
    samples = []
    for _ in range(ROUNDS):
        history = filled(size, text, **kwargs)
        if tools:
            history.add_user_message("Read every module and summarize it.")
        batch = tool_turns(text) if tools else chat_turns(text)
        start = time.process_time()
        for user, reply in batch:
            history.add(user)
            history.estimate_tokens()
            history.add(reply)
            history.estimate_tokens()
        samples.append((time.process_time() - start) / APPENDS)
    return statistics.median(samples)


def time_recount(size: int, text: str) -> float:
    """CPU time to count every message again (and validate), as a naive check would per turn."""
    history = filled(size, text)
    counter = HeuristicCounter()
    samples = []
    for _ in range(ROUNDS):
        start = time.process_time()
        sum(counter.count_message(m) for m in history.messages)
        validate(history.messages)
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def table() -> list[str]:
    text = (SHARED / "en.txt").read_text(encoding="utf-8")[:400]
    previous: TokenCounter = previous_heuristic()
    last: TokenCounter = previous_heuristic(LAST_ROUND)
    lines = [
        SECTION,
        "",
        "Made by `python benchmarks/bench_history.py --write docs/benchmarks.md` "
        f"(Python {platform.python_version()}, 2 cores, CPU time, median of {ROUNDS} rounds of "
        f"{APPENDS:,} appends, user and assistant in turn; each user message is 400 characters "
        "of en.txt). *Before*: the previous add path, measured in the same run — every rule "
        f"object on every add, and HeuristicCounter as of commit {PREVIOUS} (loaded from git). "
        "*Now*: the default history; *last round*: the default history with HeuristicCounter "
        f"as of commit {LAST_ROUND} (session 6); "
        '*exact*: `ConversationHistory(model="gpt-4o")` '
        "(QuicktokCounter, o200k_base). *Tool loop*: the same with an assistant message "
        "(a line of text and a Read call) and the user message answering it (a 400-character "
        "tool result) in turn, heuristic, before and now. Recount: every message counted and "
        "validated again.",
        "",
        "| messages | before | last round | now (heuristic) | now vs before "
        "| now vs 100 messages | exact (gpt-4o) | tool loop: before | tool loop: now "
        "| full recount + validate |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    first = None
    for size in SIZES:
        before = time_appends(size, text, counter=previous, rules=list(DEFAULT_RULES))
        now = time_appends(size, text)
        last_round = time_appends(size, text, counter=last)
        exact = time_appends(size, text, model="gpt-4o")
        tools_before = time_appends(
            size, text, tools=True, counter=previous, rules=list(DEFAULT_RULES)
        )
        tools_now = time_appends(size, text, tools=True)
        recount = time_recount(size, text)
        first = first or now
        lines.append(
            f"| {size:,} | {before * 1e6:.1f} µs | {last_round * 1e6:.1f} µs "
            f"| {now * 1e6:.1f} µs | {before / now:.2f}x "
            f"| {now / first:.2f}x | {exact * 1e6:.1f} µs | {tools_before * 1e6:.1f} µs "
            f"| {tools_now * 1e6:.1f} µs | {recount * 1e3:.2f} ms |"
        )
    return lines


def write_section(path: Path, lines: list[str]) -> None:
    """Replace this section (up to the next ``## `` heading) in ``path``, or append it."""
    old = path.read_text(encoding="utf-8").splitlines() if path.exists() else ["# Benchmarks"]
    title = next((t for t in (SECTION, *OLD_SECTIONS) if t in old), None)
    if title is not None:
        start = old.index(title)
        end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")), len(old))
        new = [*old[:start], *lines, "", *old[end:]]
    else:
        new = [*old, "", *lines]
    path.write_text("\n".join(new).rstrip("\n") + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="update this section of a markdown file")
    args = parser.parse_args()
    lines = table()
    print("\n".join(lines))
    if args.write:
        write_section(args.write, lines)
        print(f"\nwritten to {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
