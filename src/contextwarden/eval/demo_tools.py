"""The demo agent's tools, really run: files are read, searched and written, commands executed.

Names and inputs follow Claude Code's tools (Read, Grep, Glob, Bash, Write, Edit, TodoWrite), so
the session looks like one to every part of contextwarden; ``Recorder`` turns each call and its
real output into a tool_use / tool_result pair with the time it happened.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextwarden.history import ConversationHistory
from contextwarden.model import (
    Block,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    freeze,
)

MAX_READ_LINES = 2_000
"""Read returns at most this many lines of a file (Claude Code's default)."""
MAX_LINE_CHARS = 2_000
"""Read cuts longer lines (as Claude Code does)."""
MAX_GREP_LINES = 250
"""Grep lists at most this many matching lines."""
MAX_OUTPUT_CHARS = 30_000
"""Bash output is cut to this many characters (Claude Code's Bash limit)."""
COMMAND_TIMEOUT = 60.0
"""Seconds a Bash command may run."""


def _schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": [next(iter(properties))],
    }


TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = (
    {
        "name": "Read",
        "description": "Read a file; lines are numbered.",
        "input_schema": _schema(file_path="string", offset="integer", limit="integer"),
    },
    {
        "name": "Grep",
        "description": "Search file contents with a regular expression.",
        "input_schema": _schema(pattern="string", path="string", glob="string"),
    },
    {
        "name": "Glob",
        "description": "List files matching a glob pattern.",
        "input_schema": _schema(pattern="string", path="string"),
    },
    {
        "name": "Bash",
        "description": "Run a shell command.",
        "input_schema": _schema(command="string", description="string"),
    },
    {
        "name": "Write",
        "description": "Write a file.",
        "input_schema": _schema(file_path="string", content="string"),
    },
    {
        "name": "Edit",
        "description": "Replace one exact string in a file.",
        "input_schema": _schema(file_path="string", old_string="string", new_string="string"),
    },
    {
        "name": "TodoWrite",
        "description": "Replace the todo list.",
        "input_schema": _schema(todos="array"),
    },
)


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call the script asks for."""

    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a tool really returned."""

    text: str
    is_error: bool = False


class DemoTools:
    """Runs the tools against ``root`` (reads, searches, commands) and ``scratch`` (writes)."""

    def __init__(self, root: Path, scratch: Path) -> None:
        self.root = root
        self.scratch = scratch

    def run(self, call: Call) -> Outcome:
        handler: Callable[[Mapping[str, Any]], Outcome] = getattr(self, f"_{call.name.lower()}")
        try:
            return handler(call.input)
        except OSError as exc:  # a real tool reports the failure to the model, it does not crash
            return Outcome(f"{type(exc).__name__}: {exc.strerror or exc}", True)

    def _read(self, args: Mapping[str, Any]) -> Outcome:
        path = Path(args["file_path"])
        if not path.is_file():
            return Outcome(f"File does not exist: {path}", True)
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        start = max(int(args.get("offset", 1)), 1)
        chosen = lines[start - 1 : start - 1 + int(args.get("limit", MAX_READ_LINES))]
        return Outcome(
            "\n".join(f"{start + i:>6}\t{line[:MAX_LINE_CHARS]}" for i, line in enumerate(chosen))
        )

    def _grep(self, args: Mapping[str, Any]) -> Outcome:
        pattern = re.compile(args["pattern"])
        base = Path(args.get("path") or self.root)
        files = [base] if base.is_file() else sorted(base.rglob(args.get("glob") or "*"))
        hits: list[str] = []
        for file in files:
            if not file.is_file() or "__pycache__" in file.parts:
                continue
            text = file.read_text(encoding="utf-8", errors="replace")
            hits.extend(
                f"{file}:{n}:{line}"
                for n, line in enumerate(text.splitlines(), 1)
                if pattern.search(line)
            )
        if not hits:
            return Outcome("No matches found")
        shown = hits[:MAX_GREP_LINES]
        more = len(hits) - len(shown)
        return Outcome("\n".join(shown) + (f"\n… {more} more matching lines" if more else ""))

    def _glob(self, args: Mapping[str, Any]) -> Outcome:
        base = Path(args.get("path") or self.root)
        found = sorted(
            str(p)
            for p in base.glob(args["pattern"])
            if p.is_file() and "__pycache__" not in p.parts
        )
        return Outcome("\n".join(found) if found else "No files found")

    def _bash(self, args: Mapping[str, Any]) -> Outcome:
        done = subprocess.run(
            args["command"],
            shell=True,
            cwd=self.root,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        output = (done.stdout + done.stderr).rstrip("\n")
        if len(output) > MAX_OUTPUT_CHARS:
            output = output[:MAX_OUTPUT_CHARS] + f"\n… output cut at {MAX_OUTPUT_CHARS} characters"
        if done.returncode != 0:
            return Outcome(f"Exit code {done.returncode}\n{output}", True)
        return Outcome(output or "(no output)")

    def _write(self, args: Mapping[str, Any]) -> Outcome:
        path = self._scratch_path(args["file_path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(args["content"], encoding="utf-8")
        return Outcome(f"File created successfully at: {path}")

    def _edit(self, args: Mapping[str, Any]) -> Outcome:
        path = self._scratch_path(args["file_path"])
        text = path.read_text(encoding="utf-8")
        count = text.count(args["old_string"])
        if count != 1:
            found = "not found" if count == 0 else f"found {count} times"
            return Outcome(f"String to replace {found} in {path}", True)
        path.write_text(text.replace(args["old_string"], args["new_string"]), encoding="utf-8")
        return Outcome(f"The file {path} has been updated.")

    def _todowrite(self, args: Mapping[str, Any]) -> Outcome:
        return Outcome(
            "Todos have been modified successfully. Ensure that you continue to use the todo list "
            "to track your progress. Please proceed with the current tasks if applicable"
        )

    def _scratch_path(self, name: str) -> Path:
        """Writes go only to the scratch directory: the demo never changes the files it reviews."""
        path = Path(name).resolve()
        if not path.is_relative_to(self.scratch.resolve()):
            raise PermissionError(f"the demo agent writes only under {self.scratch}, not {path}")
        return path


class Recorder:
    """Builds the session in a strict ConversationHistory as the scripted agent works."""

    def __init__(
        self,
        tools: DemoTools,
        system: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tools = tools
        self.clock = clock
        self.history = ConversationHistory(system=system, tools=TOOL_DEFINITIONS)
        self._ids = itertools.count(1)

    def user(self, text: str) -> None:
        self._add("user", (TextBlock(text),))

    def say(self, text: str) -> None:
        """An assistant reply without tool calls: it ends the agent's turn."""
        self._add("assistant", (TextBlock(text),))

    def act(self, text: str, *calls: Call, interjection: str | None = None) -> list[Outcome]:
        """Announce and make tool calls, run them for real, record their results.

        ``interjection``: text the person typed while the tools ran (Claude Code stores it after
        the results, in the same user message).
        """
        uses = [
            ToolUseBlock(f"toolu_demo_{next(self._ids):04d}", c.name, freeze(c.input))
            for c in calls
        ]
        self._add("assistant", (TextBlock(text), *uses))
        outcomes = [self.tools.run(call) for call in calls]
        results: list[Block] = [
            ToolResultBlock(use.id, out.text, out.is_error)
            for use, out in zip(uses, outcomes, strict=True)
        ]
        if interjection:
            results.append(TextBlock(interjection))
        self._add("user", tuple(results))
        return outcomes

    def _add(self, role: str, blocks: Sequence[Block]) -> None:
        meta = MessageMeta(timestamp=self.clock())
        self.history.add(Message("user" if role == "user" else "assistant", tuple(blocks), meta))
