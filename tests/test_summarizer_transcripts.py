"""The offline summary of every real transcript: user messages, files, budget, determinism."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from conftest import FIXTURE_TRANSCRIPTS, TRANSCRIPTS, corpus, session_params

from contextwarden.formats import load
from contextwarden.model import Message
from contextwarden.summarizers import StructuredSummarizer, Summary, user_messages
from contextwarden.summarizers.sections import OMISSION_NOTE
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()
SUMMARIZER = StructuredSummarizer()
SESSIONS = session_params()
# Written here rather than imported so the oracle does not share the summarizer's tool tables:
# tool inputs that name one file to read or write (searches name directories).
FILE_KEYS = ("file_path", "notebook_path", "filename")
EDITOR_COMMANDS = ("view", "create", "str_replace", "insert")


@cache
def messages_of(path: Path) -> tuple[Message, ...]:
    return tuple(load(path).messages)


@cache
def summary_of(path: Path) -> Summary:
    return SUMMARIZER.summarize(messages_of(path))


def touched_files(messages: tuple[Message, ...]) -> set[str]:
    """Paths a tool input names as the file it reads or writes, and files Codex patches name."""
    paths: set[str] = set()
    for message in messages:
        for use in message.tool_uses:
            args = use.input
            paths.update(args[k] for k in FILE_KEYS if isinstance(args.get(k), str))
            if args.get("command") in EDITOR_COMMANDS and isinstance(args.get("path"), str):
                paths.add(args["path"])
            if use.name in ("Read", "read_file") and isinstance(args.get("path"), str):
                paths.add(args["path"])
            for value in args.values():
                if isinstance(value, str) and value.startswith("*** Begin Patch"):
                    for line in value.splitlines():
                        for verb in ("Add", "Update", "Delete"):
                            if line.startswith(f"*** {verb} File: "):
                                paths.add(line.split(": ", 1)[1].strip())
    return {p for p in paths if p.strip()}


@pytest.mark.parametrize("path", SESSIONS)
def test_every_user_message_is_in_the_summary(path: Path) -> None:
    summary = summary_of(path)
    typed = user_messages(messages_of(path))
    assert typed, "every transcript has a typed first request"
    for message in typed:
        if message.text in summary.text:
            continue
        # Shortened: only a message too large for its share, keeping its head and tail.
        assert COUNTER.count_text(message.text) > SUMMARIZER.policy.min_user_message_tokens
        head, tail = message.text[:40], message.text[-40:]
        assert head in summary.sections[6] and tail in summary.sections[6]
        assert OMISSION_NOTE.split("{")[0] in summary.sections[6]


@pytest.mark.parametrize("path", SESSIONS)
def test_every_file_a_tool_read_or_wrote_is_named(path: Path) -> None:
    summary = summary_of(path)
    missing = sorted(p for p in touched_files(messages_of(path)) if p not in summary.text)
    assert missing == []


@pytest.mark.parametrize("path", SESSIONS)
def test_summary_is_within_budget_and_deterministic(path: Path) -> None:
    summary = summary_of(path)
    assert COUNTER.count_text(summary.text) <= SUMMARIZER.budget
    again = StructuredSummarizer().summarize(messages_of(path))
    assert again.text.encode() == summary.text.encode()
    assert list(summary.sections) == list(range(1, 10))


def test_identical_bytes_across_processes_and_hash_seeds() -> None:
    """No dict-order, set-order or hash dependence: other interpreters give the same bytes."""
    path = max(FIXTURE_TRANSCRIPTS, key=lambda p: p.stat().st_size)
    script = (
        "import sys, hashlib\n"
        "from contextwarden.formats import load\n"
        "from contextwarden.summarizers import StructuredSummarizer\n"
        "text = StructuredSummarizer().summarize(load(sys.argv[1]).messages).text\n"
        "print(hashlib.sha256(text.encode()).hexdigest())\n"
    )
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1


@corpus
def test_real_typed_text_that_a_naive_rule_would_lose() -> None:
    def typed(part: str) -> list[str]:
        path = next(p for p in TRANSCRIPTS if part in p.name)
        return [m.text for m in user_messages(messages_of(path))]

    # The todo-app session's real request is a slash command's arguments.
    assert typed("fe5e1c67")[0] == "/orchestrator create TODO app by Next.js"
    # A reason typed while rejecting a tool call lives inside a tool result.
    assert "no, I did not say commit anything" in typed("b6f735fbac66")
    # A mini-swe-agent run has one typed message (the task); its outputs are observations.
    sympy = typed("sympy__sympy-13091")
    assert len(sympy) == 1 and sympy[0].startswith("<pr_description>")
