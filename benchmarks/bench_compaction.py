"""Compaction ladder speed: the light rungs over a 1,000,000-token history, ``prepare()``
when nothing needs doing at 10,000 messages, and the last resort (truncate, then the cap) when
one message is larger than the window.

    python benchmarks/bench_compaction.py            # prints the tables for docs/benchmarks.md

Times are CPU time of this process (``time.process_time``), best of several runs, so other
load on the machine inflates them as little as possible. Each figure is printed next to
baselines measured in the same process on the same history: a full ``validate`` and a full
recount with ``HeuristicCounter``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter

TOOLS = ("Read", "Bash", "Grep", "TodoWrite")
LINE = "    result = compute(value, option=True)  # a typical line of source or log\n"


def tool_history(target_tokens: int, *, big_every: int = 25) -> ConversationHistory:
    """A coding-agent session of about ``target_tokens``: tool calls with results of ~2,000
    tokens; every ``big_every``-th one is over its tool's limit, and two in ``big_every`` end
    with a 6,000-character line (``big_every=0``: none)."""
    history = ConversationHistory()
    history.add_user_message("Refactor the parser and keep the tests green.")
    n = 0
    while history.estimate_tokens() < target_tokens:
        name = TOOLS[n % len(TOOLS)]
        use = ToolUseBlock(f"toolu_{n:06d}", name, {"file_path": f"src/module_{n}.py"})
        history.add(Message("assistant", (TextBlock(f"Step {n}: checking."), use)))
        big = big_every > 0 and n % big_every == 0
        wide = big_every > 0 and n % big_every == big_every // 2
        body = f"output {n}\n" + LINE * (600 if big else 110)
        if big or wide:
            body += "x," * 3_000 + "\n"  # a minified line: Snip's work (or the preview's)
        history.add(Message("user", (ToolResultBlock(use.id, body),)))
        n += 1
    history.add(Message("assistant", (TextBlock("Done for now."),)))
    history.add_user_message("Thanks, continue.")
    return history


def chat_history(messages: int) -> ConversationHistory:
    """``messages`` short turns (user prompt, assistant tool call, tool result, assistant text)."""
    history = ConversationHistory()
    history.add_user_message("Start the work.")
    n = 0
    while len(history) < messages:
        use = ToolUseBlock(f"toolu_{n:06d}", "Bash", {"command": f"make step{n}"})
        history.add(Message("assistant", (TextBlock("Running it."), use)))
        history.add(Message("user", (ToolResultBlock(use.id, f"step {n} ok\n"),)))
        n += 1
    return history


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Best (least) CPU seconds of ``fn()`` over ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        runs.append(time.process_time() - started)
    return min(runs)


def light_pass(repeat: int, big_every: int) -> dict[str, float]:
    """One ``prepare()`` over a fresh 1M-token history; the window is set so only the light
    rungs (tool-result budget, snip) can have work: with ``big_every`` 25 they cut or snip 8 %
    of the results, with 0 they find nothing to do."""
    policy = ContextPolicy(context_window=4_000_000)
    runs: list[float] = []
    applied: tuple[str, ...] = ()
    for _ in range(repeat):
        history = tool_history(1_000_000, big_every=big_every)
        manager = ContextManager(policy)
        started = time.process_time()
        report = manager.prepare(history)
        runs.append(time.process_time() - started)
        applied = report.applied
    changed = sum(1 for e in history.log if type(e).__name__ == "CompactionBoundary")
    assert changed <= 1 and all(a in ("tool_result_budget", "snip") for a in applied), applied
    messages = history.messages
    counter = HeuristicCounter()
    return {
        "messages": len(messages),
        "tokens": history.estimate_tokens(),
        "applied": len(applied),
        "prepare": min(runs),
        "validate": timed(lambda: validate(messages), 3),
        "recount": timed(lambda: sum(counter.count_message(m) for m in messages), 3),
    }


def idle_prepare(messages: int, calls: int) -> dict[str, float]:
    """``prepare()`` with nothing to do at ``messages``, and after each new message of an agent
    loop (assistant tool call, then its result). The window is large enough that no threshold
    is reached, so these are the costs of deciding that nothing needs doing."""
    history = chat_history(messages)
    view = history.messages
    counter = HeuristicCounter()
    baselines = {
        "validate": timed(lambda: validate(view), 5),
        "recount": timed(lambda: sum(counter.count_message(m) for m in view), 5),
    }
    manager = ContextManager(ContextPolicy(context_window=10_000_000))
    manager.prepare(history)  # the first call looks at every message once
    nothing = timed(lambda: manager.prepare(history), calls)
    after_call: list[float] = []
    after_result: list[float] = []
    for n in range(calls):
        use = ToolUseBlock(f"toolu_more_{n}", "Read", {"file_path": f"src/m{n}.py"})
        for message, runs in (
            (Message("assistant", (use,)), after_call),
            (Message("user", (ToolResultBlock(use.id, "def f():\n    return 1\n"),)), after_result),
        ):
            history.add(message)
            started = time.process_time()
            manager.prepare(history)
            runs.append(time.process_time() - started)
    copy = list(history.messages)
    return {
        "snapshot": timed(lambda: tuple(copy), calls),
        "nothing": nothing,
        "call": min(after_call),
        "result": min(after_result),
        **baselines,
    }


def last_resort(repeat: int, oversized: int) -> dict[str, object]:
    """One ``prepare()`` with a 30,000-token window on a fresh ~100,000-token session whose last
    message is a typed user message of ``oversized`` characters, so the ladder summarizes and,
    when that message alone is over the window, truncates and caps; best of ``repeat``."""
    runs: list[float] = []
    for _ in range(repeat):
        history = tool_history(100_000, big_every=0)
        history.add(Message("assistant", (TextBlock("What next?"),)))
        history.add_user_message(("Paste: " + LINE * (oversized // len(LINE) + 1))[:oversized])
        manager = ContextManager(ContextPolicy(context_window=30_000))
        started = time.process_time()
        report = manager.prepare(history)
        runs.append(time.process_time() - started)
    return {
        "prepare": min(runs),
        "applied": ", ".join(report.applied),
        "tokens": history.estimate_tokens(),
        "over": report.over_window,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh histories for the light pass")
    args = parser.parse_args()
    print("### Light rungs over a 1,000,000-token history (one `prepare()`, target ≤ 50 ms)\n")
    print("| history | rungs applied | `prepare()` ms | full `validate` ms | full recount ms |")
    print("|---|---|---:|---:|---:|")
    for label, every in (("8 % of results cut or snipped", 25), ("nothing over a limit", 0)):
        row = light_pass(args.repeat, every)
        print(
            f"| {row['messages']:,} messages, {label} | {row['applied']} | "
            f"{row['prepare'] * 1e3:.1f} | {row['validate'] * 1e3:.1f} | "
            f"{row['recount'] * 1e3:.1f} |"
        )
    print("\n### `prepare()` when nothing needs doing (target ≤ 50 µs at 10,000 messages)\n")
    print(
        "| messages | nothing new (µs) | after a tool call (µs) | after a tool result (µs) "
        "| of which `history.messages` rebuild (µs) | full validate (µs) | full recount (µs) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in (100, 1_000, 10_000):
        row = idle_prepare(size, 200)
        print(
            f"| {size:,} | {row['nothing'] * 1e6:.1f} | {row['call'] * 1e6:.1f} | "
            f"{row['result'] * 1e6:.1f} | {row['snapshot'] * 1e6:.1f} | "
            f"{row['validate'] * 1e6:,.0f} | {row['recount'] * 1e6:,.0f} |"
        )
    print("\n### The last resort: one message larger than a 30,000-token window\n")
    print("| last user message | `prepare()` ms | rungs applied | tokens after | over |")
    print("|---|---:|---|---:|:-:|")
    for label, size in (("200 characters (baseline)", 200), ("900,000 characters", 900_000)):
        last = last_resort(max(1, args.repeat // 3), size)
        over = "yes" if last["over"] else "no"
        print(
            f"| {label} | {float(str(last['prepare'])) * 1e3:.1f} | {last['applied']} | "
            f"{last['tokens']:,} | {over} |"
        )


if __name__ == "__main__":
    main()
