"""The agent's tools, run for real inside a Workspace: read, list, search, edit, write, shell.

Each tool reports failure to the model as an error result instead of raising. Output is not cut
here beyond a safety cap: the tool-result budget of the compaction ladder caps what the model
sees, and the log keeps the full text (``history.rehydrate``).
"""

from __future__ import annotations

import difflib
import os
import re
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextwarden.agent.workspace import Workspace

__all__ = [
    "CONFIRM",
    "TOOL_DEFINITIONS",
    "Call",
    "Outcome",
    "Tools",
]

MAX_READ_LINES = 2_000
"""read_file returns at most this many lines per call (Claude Code's default)."""
MAX_LINE_CHARS = 2_000
"""read_file cuts longer lines."""
MAX_GREP_LINES = 250
"""grep lists at most this many matching lines."""
MAX_LISTED = 1_000
"""list_files lists at most this many files."""
MAX_OUTPUT_CHARS = 5_000_000
"""Safety cap on one bash output kept at all (the ladder's budget decides what the model sees)."""
COMMAND_TIMEOUT = 120.0
"""Seconds a bash command may run unless the call asks for another limit."""
SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".mypy_cache"})
CONFIRM = frozenset({"bash", "edit_file", "write_file"})
"""Tools that change things: the chat asks before running them (unless ``--yes``)."""


def _schema(required: tuple[str, ...], **properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(required),
    }


TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = (
    {
        "name": "read_file",
        "description": "Read a text file; lines are numbered. offset is the first line (1-based).",
        "input_schema": _schema(("path",), path="string", offset="integer", limit="integer"),
    },
    {
        "name": "list_files",
        "description": "List files matching a glob pattern (default **/*) under a directory.",
        "input_schema": _schema((), pattern="string", path="string"),
    },
    {
        "name": "grep",
        "description": "Search file contents with a regular expression; glob filters files.",
        "input_schema": _schema(("pattern",), pattern="string", path="string", glob="string"),
    },
    {
        "name": "edit_file",
        "description": "Replace one exact, unique string in a file; shows the diff.",
        "input_schema": _schema(
            ("path", "old_string", "new_string"),
            path="string",
            old_string="string",
            new_string="string",
        ),
    },
    {
        "name": "write_file",
        "description": "Create or overwrite a file with the given content.",
        "input_schema": _schema(("path", "content"), path="string", content="string"),
    },
    {
        "name": "bash",
        "description": "Run a shell command in the workspace directory.",
        "input_schema": _schema(("command",), command="string", timeout="number"),
    },
    {
        "name": "todo_write",
        "description": "Replace the todo list (a list of {content, status}).",
        "input_schema": _schema(("todos",), todos="array"),
    },
)


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: the tool's name and its input."""

    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a tool returned, and whether it failed."""

    text: str
    is_error: bool = False


class Tools:
    """The tools of ``TOOL_DEFINITIONS``, run inside ``workspace``."""

    def __init__(self, workspace: Workspace, timeout: float = COMMAND_TIMEOUT) -> None:
        self.workspace = workspace
        self.timeout = timeout

    def run(self, call: Call) -> Outcome:
        handler: Callable[[Mapping[str, Any]], Outcome] | None = getattr(
            self, f"_{call.name}", None
        )
        if handler is None or call.name.startswith("_"):
            return Outcome(f"no tool named {call.name!r}", True)
        try:
            return handler(call.input)
        except (OSError, ValueError, KeyError, TypeError, re.error) as exc:
            # A real tool reports the failure to the model; it does not crash the agent.
            return Outcome(f"{type(exc).__name__}: {exc}", True)

    # ------------------------------------------------------------------ the tools
    def _read_file(self, args: Mapping[str, Any]) -> Outcome:
        path = self.workspace.resolve(args["path"])
        if not path.is_file():
            return Outcome(f"File does not exist: {self.workspace.display(path)}", True)
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        start = max(int(args.get("offset") or 1), 1)
        limit = min(int(args.get("limit") or MAX_READ_LINES), MAX_READ_LINES)
        chosen = lines[start - 1 : start - 1 + limit]
        if not chosen:
            return Outcome(f"(the file has {len(lines)} lines; none from line {start})")
        return Outcome(
            "\n".join(f"{start + i:>6}\t{line[:MAX_LINE_CHARS]}" for i, line in enumerate(chosen))
        )

    def _list_files(self, args: Mapping[str, Any]) -> Outcome:
        base = self.workspace.resolve(args.get("path") or ".")
        found = sorted(
            self.workspace.display(p) for p in self._files(base, args.get("pattern") or "**/*")
        )
        if not found:
            return Outcome("No files found")
        more = len(found) - MAX_LISTED
        return Outcome("\n".join(found[:MAX_LISTED]) + (f"\n… {more} more" if more > 0 else ""))

    def _grep(self, args: Mapping[str, Any]) -> Outcome:
        pattern = re.compile(args["pattern"])
        base = self.workspace.resolve(args.get("path") or ".")
        glob = args.get("glob") or "*"  # matched from the right, at any depth (as rg --glob)
        files = (
            [base]
            if base.is_file()
            else [p for p in self._files(base, "**/*") if p.relative_to(base).match(glob)]
        )
        hits: list[str] = []
        for file in files:
            text = file.read_text(encoding="utf-8", errors="replace")
            name = self.workspace.display(file)
            hits.extend(
                f"{name}:{n}:{line[:MAX_LINE_CHARS]}"
                for n, line in enumerate(text.splitlines(), 1)
                if pattern.search(line)
            )
        if not hits:
            return Outcome("No matches found")
        more = len(hits) - MAX_GREP_LINES
        shown = "\n".join(hits[:MAX_GREP_LINES])
        return Outcome(shown + (f"\n… {more} more matching lines" if more > 0 else ""))

    def _edit_file(self, args: Mapping[str, Any]) -> Outcome:
        path = self.workspace.resolve(args["path"], write=True)
        old, new = str(args["old_string"]), str(args["new_string"])
        text = path.read_text(encoding="utf-8")
        count = text.count(old) if old else 0
        if count != 1:
            found = "not found" if count == 0 else f"found {count} times; make it unique"
            return Outcome(f"old_string {found} in {self.workspace.display(path)}", True)
        updated = text.replace(old, new)
        path.write_text(updated, encoding="utf-8")
        return Outcome(diff(text, updated, self.workspace.display(path)))

    def _write_file(self, args: Mapping[str, Any]) -> Outcome:
        path = self.workspace.resolve(args["path"], write=True)
        existed = path.is_file()
        before = path.read_text(encoding="utf-8", errors="replace") if existed else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(args["content"]), encoding="utf-8")
        name = self.workspace.display(path)
        if not existed:
            return Outcome(f"Created {name} ({len(str(args['content']).splitlines())} lines)")
        return Outcome(diff(before, str(args["content"]), name))

    def _bash(self, args: Mapping[str, Any]) -> Outcome:
        timeout = float(args.get("timeout") or self.timeout)
        process = subprocess.Popen(
            str(args["command"]),
            shell=True,
            cwd=self.workspace.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches us, and we stop the command's whole group
        )
        try:
            raw, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            return Outcome(f"Command timed out after {timeout:g} s", True)
        except KeyboardInterrupt:
            _kill(process)
            raise
        output = raw.decode("utf-8", errors="replace").rstrip("\n")
        if len(output) > MAX_OUTPUT_CHARS:
            output = output[:MAX_OUTPUT_CHARS] + f"\n… output cut at {MAX_OUTPUT_CHARS:,} chars"
        if process.returncode != 0:
            return Outcome(f"Exit code {process.returncode}\n{output}", True)
        return Outcome(output or "(no output)")

    def _todo_write(self, args: Mapping[str, Any]) -> Outcome:
        todos = args.get("todos") or []
        return Outcome(f"Todo list updated ({len(todos)} items).")

    # ------------------------------------------------------------------ helpers
    def _files(self, base: Path, pattern: str) -> list[Path]:
        """Files under ``base`` matching ``pattern`` that resolve inside the workspace."""
        if not base.is_dir():
            raise NotADirectoryError(f"{self.workspace.display(base)} is not a directory")
        out = []
        for path in base.glob(pattern):
            if SKIPPED_DIRS.intersection(path.relative_to(base).parts) or not path.is_file():
                continue
            if path.resolve().is_relative_to(self.workspace.root):
                out.append(path)
        return out


def diff(before: str, after: str, name: str) -> str:
    """A unified diff of a file's change (what the chat shows, and the model reads)."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{name}",
        f"b/{name}",
    )
    text = "".join(lines)
    return text if text else f"{name}: no change"


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
