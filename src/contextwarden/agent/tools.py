"""The agent's tools, run for real inside a Workspace: read, list, search, edit, write, shell.

Every argument is checked against ``schema`` before a tool runs, and each tool reports failure to
the model as an error result instead of raising. Every resource is bounded while the tool runs:
output bytes, time (search and shell run as child processes killed at their limit), and the files
touched (regular files inside the workspace). Output is not cut here beyond those caps: the
tool-result budget of the compaction ladder caps what the model sees, and the log keeps the full
text (``history.rehydrate``).
"""

from __future__ import annotations

import difflib
import json
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from contextwarden.agent import grep_child
from contextwarden.agent.bounded import Finished, run_bounded
from contextwarden.agent.regular import read_small, refuse_special, write_text
from contextwarden.agent.schema import MAX_READ_LINES, TOOL_DEFINITIONS, checked
from contextwarden.agent.workspace import Workspace
from contextwarden.errors import ToolError

__all__ = [
    "CONFIRM",
    "TOOL_DEFINITIONS",
    "Call",
    "Outcome",
    "Tools",
]

MAX_LINE_CHARS = 2_000
"""read_file and grep cut longer lines."""
MAX_SCAN_CHARS = 1_000_000
"""A longer line is read (and searched) in pieces of this many characters."""
MAX_GREP_LINES = 250
"""grep lists at most this many matching lines."""
MAX_LISTED = 1_000
"""list_files lists at most this many files."""
MAX_OUTPUT_BYTES = 5_000_000
"""Output of one bash command kept at all; past it the command is stopped (the ladder's budget
decides what the model sees of what is kept)."""
COMMAND_TIMEOUT = 120.0
"""Seconds a bash command may run unless the call asks for another limit."""
SEARCH_TIMEOUT = 10.0
"""Seconds one grep may search (it runs without asking, so it must end on its own)."""
MAX_RECURSIVE_PARTS = 2
"""``**`` components a glob may hold (``src/**/tests/**/*.py``); more would walk the tree again
for each one, and list_files and grep run without asking."""
SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".mypy_cache"})
CONFIRM = frozenset({"bash", "edit_file", "write_file"})
"""Tools that change things: the chat asks before running them (unless ``--yes``)."""
_GREP_CHILD = Path(grep_child.__file__)


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
        try:
            args = checked(call.name, call.input)
            handler: Callable[[Mapping[str, Any]], Outcome] = getattr(self, f"_{call.name}")
            return handler(args)
        except ToolError as exc:
            return Outcome(str(exc), True)
        except (OSError, ValueError, re.error) as exc:
            # A real tool reports the failure to the model; it does not crash the agent.
            return Outcome(f"{type(exc).__name__}: {exc}", True)

    # ------------------------------------------------------------------ the tools
    def _read_file(self, args: Mapping[str, Any]) -> Outcome:
        path = self.workspace.resolve(args["path"])
        name = self.workspace.display(path)
        if not refuse_special("read_file", path, name):
            return Outcome(f"File does not exist: {name}", True)
        start = max(args.get("offset", 1), 1)
        end = start + args.get("limit", MAX_READ_LINES)
        chosen: list[str] = []
        total = 0
        for number, line in grep_child.lines(str(path), MAX_SCAN_CHARS):
            if number == total:
                continue  # a later piece of a long line, already cut
            if number >= end:
                break
            total = number
            if number >= start:
                chosen.append(f"{number:>6}\t{line[:MAX_LINE_CHARS]}")
        if not chosen:
            return Outcome(f"(the file has {total} lines; none from line {start})")
        return Outcome("\n".join(chosen))

    def _list_files(self, args: Mapping[str, Any]) -> Outcome:
        base = self.workspace.resolve(args.get("path") or ".")
        pattern = _relative_glob("list_files", "pattern", args.get("pattern") or "**/*")
        found = sorted(self.workspace.display(p) for p in self._files(base, pattern))
        if not found:
            return Outcome("No files found")
        more = len(found) - MAX_LISTED
        return Outcome("\n".join(found[:MAX_LISTED]) + (f"\n… {more} more" if more > 0 else ""))

    def _grep(self, args: Mapping[str, Any]) -> Outcome:
        re.compile(args["pattern"])  # a bad pattern is reported before anything runs
        base = self.workspace.resolve(args.get("path") or ".")
        glob = _relative_glob("grep", "glob", args.get("glob") or "*")  # matched from the right
        files = (
            [base]
            if base.is_file()
            else [p for p in self._files(base, "**/*") if p.relative_to(base).match(glob)]
        )
        found = self._search(args["pattern"], files)
        text = found.output.decode("utf-8", errors="replace").rstrip("\n")
        if found.stopped != "exited":
            return Outcome(_search_stopped(found.stopped) + (f"\n{text}" if text else ""), True)
        if found.returncode != 0:
            return Outcome(f"grep failed (exit code {found.returncode})\n{text}", True)
        return Outcome(text or "No matches found")

    def _edit_file(self, args: Mapping[str, Any]) -> Outcome:
        path = self.workspace.resolve(args["path"], write=True)
        name = self.workspace.display(path)
        old, new = args["old_string"], args["new_string"]
        if not refuse_special("edit_file", path, name):
            return Outcome(f"File does not exist: {name}", True)
        text = read_small("edit_file", path, name)
        count = text.count(old) if old else 0
        if count != 1:
            found = "not found" if count == 0 else f"found {count} times; make it unique"
            return Outcome(f"old_string {found} in {name}", True)
        updated = text.replace(old, new)
        write_text("edit_file", path, name, updated)
        return Outcome(diff(text, updated, name))

    def _write_file(self, args: Mapping[str, Any]) -> Outcome:
        path = self.workspace.resolve(args["path"], write=True)
        name = self.workspace.display(path)
        content: str = args["content"]
        existed = refuse_special("write_file", path, name)
        before = read_small("write_file", path, name) if existed else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text("write_file", path, name, content)
        if not existed:
            return Outcome(f"Created {name} ({len(content.splitlines())} lines)")
        return Outcome(diff(before, content, name))

    def _bash(self, args: Mapping[str, Any]) -> Outcome:
        timeout = float(args.get("timeout", self.timeout))
        done = run_bounded(
            args["command"],
            shell=True,
            cwd=self.workspace.root,
            timeout=timeout,
            max_bytes=MAX_OUTPUT_BYTES,
        )
        output = done.output.decode("utf-8", errors="replace").rstrip("\n")
        if done.stopped == "timeout":
            return Outcome(f"Command timed out after {timeout:g} s\n{output}".rstrip(), True)
        if done.stopped == "output cap":
            note = f"Command stopped: its output passed {MAX_OUTPUT_BYTES:,} bytes"
            return Outcome(f"{note}; redirect it to a file and read parts of it\n{output}", True)
        if done.returncode != 0:
            return Outcome(f"Exit code {done.returncode}\n{output}", True)
        return Outcome(output or "(no output)")

    def _todo_write(self, args: Mapping[str, Any]) -> Outcome:
        return Outcome(f"Todo list updated ({len(args['todos'])} items).")

    # ------------------------------------------------------------------ helpers
    def _files(self, base: Path, pattern: str) -> list[Path]:
        """Regular files under ``base`` matching ``pattern`` that resolve inside the workspace."""
        if not base.is_dir():
            raise NotADirectoryError(f"{self.workspace.display(base)} is not a directory")
        out = []
        for path in base.glob(pattern):
            if SKIPPED_DIRS.intersection(path.relative_to(base).parts) or not path.is_file():
                continue
            if path.resolve().is_relative_to(self.workspace.root):
                out.append(path)
        return out

    def _search(self, pattern: str, files: list[Path]) -> Finished:
        """Search ``files`` for ``pattern`` in a child process stopped at ``SEARCH_TIMEOUT``."""
        job = {
            "pattern": pattern,
            "files": [[str(f), self.workspace.display(f)] for f in files],
            "max_hits": MAX_GREP_LINES,
            "max_line_chars": MAX_LINE_CHARS,
            "max_scan_chars": MAX_SCAN_CHARS,
        }
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".json") as handle:
            json.dump(job, handle)
            handle.flush()
            return run_bounded(
                [sys.executable, "-I", str(_GREP_CHILD), handle.name],
                cwd=self.workspace.root,
                timeout=SEARCH_TIMEOUT,
                max_bytes=MAX_OUTPUT_BYTES,
            )


def _relative_glob(tool: str, argument: str, pattern: str) -> str:
    """``pattern`` if it stays below the directory it is matched in (no root, no ``..``) and
    can be matched in bounded time (each ``**`` multiplies the walk)."""
    parts = PurePath(pattern).parts
    if parts.count("**") > MAX_RECURSIVE_PARTS:
        raise ToolError(
            f"{tool}'s {argument!r} may hold '**' at most {MAX_RECURSIVE_PARTS} times "
            f"(each one walks the tree again); got {pattern!r}",
            tool=tool,
            argument=argument,
        )
    if PurePath(pattern).is_absolute() or pattern.startswith("~") or ".." in parts:
        raise ToolError(
            f"{tool}'s {argument!r} must be a pattern relative to the searched directory, such "
            f"as **/*.py; {pattern!r} would leave it (pass a directory inside the workspace as "
            "'path' instead)",
            tool=tool,
            argument=argument,
        )
    return pattern


def _search_stopped(why: str) -> str:
    if why == "timeout":
        return (
            f"grep stopped after {SEARCH_TIMEOUT:g} s: the pattern backtracks too much (as "
            "(a+)+$ does) or the files are too many; narrow the pattern, path or glob. "
            "Matches found before it stopped:"
        )
    return f"grep stopped: its output passed {MAX_OUTPUT_BYTES:,} bytes. Matches found:"


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
