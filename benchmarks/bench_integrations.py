"""Framework adapters against the frameworks' own context tools, on the real sessions replayed.

    CONTEXTWARDEN_DATA=../shared/data python benchmarks/bench_integrations.py [--window 36000]

Each session is replayed request by request as a framework would hold it: before every assistant
turn, the whole conversation so far (as LangChain messages, or as Responses items for the Agents
SDK). LangGraph: what the model is sent with no management, with LangChain's
``trim_messages(strategy="last", start_on="human")``, with LangMem's ``summarize_messages`` (the
function behind its ``SummarizationNode``; its model here is a scripted one that answers a
fixed ~250-token summary, so only sizes are compared, not what the summary keeps), and with
``ContextWardenMiddleware.pre_model_hook``. Agents SDK: ``get_items`` of the SDK's
``SQLiteSession`` and of ``ContextWardenSession``. Every request is counted by one counter
(``HeuristicCounter``) and checked by ``validate``: over the window, empty (nothing but the
system prompt), broken (an API rule violated: orphaned tool results, a first message that is not
the user's…). All approaches run in the same process, one session after another.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agents import SQLiteSession
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, trim_messages
from langmem.short_term import RunningSummary, summarize_messages

from contextwarden.formats import load
from contextwarden.integrations.langchain import (
    ContextWardenMiddleware,
    from_langchain,
    to_langchain,
)
from contextwarden.integrations.openai_agents import ContextWardenSession
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.responses import messages_from_responses, messages_to_responses

SUFFIXES = {".jsonl", ".json", ".traj"}
COUNTER = HeuristicCounter()
SUMMARY = "Summary of the conversation so far: " + "the user asked for work; " * 40


@dataclass
class Tally:
    """One approach over all sessions."""

    requests: int = 0
    tokens: int = 0
    over: int = 0
    empty: int = 0
    broken: int = 0
    seconds: float = 0.0
    sessions_over: set[str] = field(default_factory=set)

    def add(self, session: str, messages: Sequence[Message], system: str, window: int) -> None:
        total = sum(map(COUNTER.count_message, messages)) + COUNTER.count_text(system)
        self.requests += 1
        self.tokens += total
        if total > window:
            self.over += 1
            self.sessions_over.add(session)
        if not messages:
            self.empty += 1
        elif validate(messages):
            self.broken += 1


def lc_tokens() -> Callable[[list[BaseMessage]], int]:
    """A LangChain ``token_counter`` that counts with the same counter as everything else,
    caching per message object (the replay reuses them)."""
    cache: dict[int, int] = {}

    def count(messages: list[BaseMessage]) -> int:
        total = 0
        for message in messages:
            key = id(message)
            if key not in cache:
                _, ours = from_langchain([message]) if message.type != "system" else ("", [])
                text = message.text if message.type == "system" else ""
                cache[key] = sum(map(COUNTER.count_message, ours)) + COUNTER.count_text(text)
            total += cache[key]
        return total

    return count


def requests(messages: Sequence[Message]) -> list[int]:
    """Indices of the assistant messages: a request is sent before each."""
    return [i for i, m in enumerate(messages) if m.role == "assistant" and i > 0]


def langgraph(
    name: str, messages: Sequence[Message], system: str, window: int, out: dict[str, Tally]
) -> None:
    policy = ContextPolicy(context_window=window)
    per_message = [to_langchain([m]) for m in messages]
    for i, group in enumerate(per_message):
        for j, lc in enumerate(group):
            lc.id = lc.id or f"m{i}.{j}"  # LangMem needs message ids
    head = to_langchain([], system) if system else []
    count = lc_tokens()
    summarizer = FakeMessagesListChatModel(responses=[AIMessage(SUMMARY)])
    running: RunningSummary | None = None
    with tempfile.TemporaryDirectory() as tmp:
        hook = ContextWardenMiddleware(store=str(Path(tmp) / "s.db"), policy=policy)
        for k in requests(messages):
            state = head + [lc for group in per_message[:k] for lc in group]
            runs: dict[str, Callable[[list[BaseMessage]], list[BaseMessage]]] = {
                "none": lambda state: state,
                "trim_messages": lambda state: trim_messages(
                    state,
                    max_tokens=policy.effective_window,
                    strategy="last",
                    token_counter=count,
                    start_on="human",
                    include_system=True,
                ),
                "contextwarden": lambda state: hook.pre_model_hook({"messages": state})[
                    "llm_input_messages"
                ],
            }
            for approach, run in runs.items():
                started = time.perf_counter()
                sent = run(state)
                out[approach].seconds += time.perf_counter() - started
                sent_system, ours = from_langchain(sent)
                out[approach].add(name, ours, sent_system or "", window)
            started = time.perf_counter()
            result = summarize_messages(
                state,
                running_summary=running,
                model=summarizer,
                token_counter=count,
                max_tokens=policy.effective_window,
                max_tokens_before_summary=policy.autocompact_threshold,
                max_summary_tokens=300,
            )
            out["langmem"].seconds += time.perf_counter() - started
            running = result.running_summary
            sent_system, ours = from_langchain(result.messages)
            out["langmem"].add(name, ours, sent_system or "", window)


def agents_sdk(
    name: str, messages: Sequence[Message], system: str, window: int, out: dict[str, Tally]
) -> None:
    policy = ContextPolicy(context_window=window)
    items_per_message = [messages_to_responses([m]) for m in messages]
    with tempfile.TemporaryDirectory() as tmp:
        theirs = SQLiteSession("bench", str(Path(tmp) / "sdk.db"))
        ours = ContextWardenSession("bench", store=str(Path(tmp) / "cw.db"), policy=policy)
        done = 0
        for k in requests(messages):
            new = [item for items in items_per_message[done:k] for item in items]
            done = k
            for approach, session in (("SQLiteSession", theirs), ("ContextWardenSession", ours)):
                asyncio.run(session.add_items(new))  # type: ignore[arg-type]
                started = time.perf_counter()
                got = asyncio.run(session.get_items())
                out[approach].seconds += time.perf_counter() - started
                out[approach].add(name, messages_from_responses(got)[1], system, window)
        theirs.close()


def table(title: str, tallies: dict[str, Tally], baseline: str) -> list[str]:
    base = tallies[baseline].tokens or 1
    lines = [
        f"**{title}**",
        "",
        "| approach | requests | tokens sent | vs " + baseline + " | over window | "
        "sessions over | empty | broken | ms/request |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for approach, t in tallies.items():
        ms = 1000 * t.seconds / max(t.requests, 1)
        lines.append(
            f"| {approach} | {t.requests:,} | {t.tokens:,} | {t.tokens / base:.2f}x | {t.over:,} "
            f"| {len(t.sessions_over)} | {t.empty:,} | {t.broken:,} | {ms:.1f} |"
        )
    return [*lines, ""]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=36_000)
    parser.add_argument("--data", default=os.environ.get("CONTEXTWARDEN_DATA"))
    args = parser.parse_args(argv)
    if not args.data:
        print("set CONTEXTWARDEN_DATA (the shared data directory) or pass --data", file=sys.stderr)
        return 2
    files = sorted(p for p in (Path(args.data) / "transcripts").rglob("*") if p.suffix in SUFFIXES)
    graph = {k: Tally() for k in ("none", "trim_messages", "langmem", "contextwarden")}
    sdk = {k: Tally() for k in ("SQLiteSession", "ContextWardenSession")}
    for n, path in enumerate(files, 1):
        history = load(path)
        system = history.system if isinstance(history.system, str) else ""
        print(f"[{n}/{len(files)}] {path.name}", file=sys.stderr)
        langgraph(path.name, history.messages, system, args.window, graph)
        agents_sdk(path.name, history.messages, system, args.window, sdk)
    print(f"{len(files)} sessions, window {args.window:,} tokens\n")
    print("\n".join(table("LangGraph / LangChain", graph, "none")))
    print("\n".join(table("OpenAI Agents SDK sessions", sdk, "SQLiteSession")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
