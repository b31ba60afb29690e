"""What a tool call did, read from its name, input and result: files, commands, todos, errors.

Agents name the same actions differently (Claude Code ``Read``/``Edit``/``Bash``, Codex
``exec_command``/``apply_patch``/``update_plan``, SWE-agent and OpenHands ``str_replace_editor``,
OpenCode ``read`` with ``filePath``); ``contextwarden.toolnames`` maps them onto Claude Code's.
Paths are kept as the tool input gave them (never resolved; only surrounding blanks dropped), so a
summary quotes what the agent used.

Shell commands are read for file paths only in obvious cases (``shell_files``); anything
cleverer would guess wrong, and a wrong path in a summary is worse than a missing one.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from contextwarden.model import ToolUseBlock, thaw
from contextwarden.summarizers.code_mode import is_script, nested_calls, script_answer
from contextwarden.summarizers.file_op import FileOp, line_count, lines
from contextwarden.summarizers.remembered import Remembered
from contextwarden.summarizers.shell_files import shell_file_ops
from contextwarden.toolnames import (
    canonical,
    is_editor,
    is_patch,
    patch_files,
    patch_text,
    path_of,
)

CONTENT_KINDS = frozenset({"Read", "Grep", "Glob"})
"""Tools whose result is a file's contents or search hits (``toolnames.canonical``)."""
DONE_STATUSES = frozenset({"completed", "complete", "done", "cancelled", "canceled"})

_EDITOR_OPS = {
    "view": "read",
    "create": "wrote",
    "str_replace": "edited",
    "insert": "edited",
    "undo_edit": "edited",
    "write": "wrote",
}
_PATCH_OPS = {"Add": "wrote", "Update": "edited", "Delete": "deleted"}


@dataclass(frozen=True, slots=True)
class TodoItem:
    text: str
    status: str

    @property
    def done(self) -> bool:
        return self.status.lower() in DONE_STATUSES


def plain_input(block: ToolUseBlock) -> Mapping[str, Any]:
    """The tool input as a read-only mapping (frozen: nested lists are tuples)."""
    return block.input if isinstance(block.input, Mapping) else {}


def calls_made(block: ToolUseBlock) -> tuple[ToolUseBlock, ...]:
    """The calls ``block`` stands for: the nested calls of a Codex code-mode script
    (``code_mode``), else ``block`` itself."""
    return nested_calls(block) if is_script(block) else (block,)


def is_shell(block: ToolUseBlock) -> bool:
    """A shell tool's call, or a code-mode script that runs a command."""
    return any(canonical(call.name) == "Bash" for call in calls_made(block))


def shell_command(block: ToolUseBlock) -> str | None:
    """The command line a shell tool ran (``cmd``/``command``; argv lists joined); a code-mode
    script's commands one per line, as a shell runs a list."""
    commands = [c for c in map(_own_command, calls_made(block)) if c is not None]
    return "\n".join(commands) if commands else None


def _own_command(block: ToolUseBlock) -> str | None:
    """The command line of ``block`` itself when it is a shell tool's call (not a script's)."""
    if canonical(block.name) != "Bash" or is_script(block):
        return None
    args = plain_input(block)
    value = args.get("cmd", args.get("command"))
    if isinstance(value, tuple | list) and all(isinstance(v, str) for v in value):
        # Codex's ``shell`` tool wraps the real command as ["bash", "-lc", "<command>"].
        if len(value) == 3 and value[1] in ("-c", "-lc"):
            return str(value[2])
        return shlex.join(value)
    return value if isinstance(value, str) and value.strip() else None


def file_ops(block: ToolUseBlock, result_text: str = "") -> tuple[FileOp, ...]:
    """What ``block`` did to which files (nothing for tools that touch no file)."""
    if is_script(block):
        calls = nested_calls(block)
        answer = script_answer(result_text)
        shown = answer.shown if answer is not None else result_text
        return tuple(
            op for call in calls for op in file_ops(call, shown if len(calls) == 1 else "")
        )
    args = plain_input(block)
    if is_patch(block.name):
        ops = tuple(_patch_ops(patch_text(args)))
        named = path_of(args)  # a loader that kept only the file the patch touched
        return ops or ((FileOp(named, "edited"),) if named else ())
    if is_editor(block.name):
        return _editor_ops(args, result_text)
    command = shell_command(block)
    if command is not None:
        return _shell_ops(command, result_text)
    kind = canonical(block.name)
    paths = _paths_of(args) if kind == "Read" else ()
    if len(paths) > 1:  # Gemini CLI's read_many_files
        return tuple(FileOp(path, "read") for path in paths)
    path = path_of(args)
    if path is None:
        return ()
    if kind == "Read":
        return (FileOp(path, "read", _read_detail(args, result_text)),)
    if kind == "Write":
        content = _first_of(args, ("content", "file_text", "text", "contents"))
        return (FileOp(path, "wrote", lines(line_count(content)), content),)
    if kind == "Edit":
        return (_edit_op(path, args),)
    if kind in ("Grep", "Glob"):
        return (FileOp(path, "searched"),)
    return ()


def _paths_of(args: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths of a call that reads several files (``paths``: a list of strings)."""
    value = args.get("paths")
    if isinstance(value, tuple | list):
        return tuple(v for v in value if isinstance(v, str) and v.strip())
    return ()


def _first_of(args: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return ""


def _shell_reading(command: str, result_text: str) -> tuple[FileOp, ...]:
    return tuple(shell_file_ops(command, result_text))


_shell_ops = Remembered(_shell_reading)
"""A command line is split as the shell does (``shlex``, slow) at every compaction that reads
its message again; what it names depends on the command and its output alone."""


def _read_detail(args: Mapping[str, Any], result_text: str) -> str:
    offset, limit = args.get("offset"), args.get("limit")
    if isinstance(offset, int) and isinstance(limit, int):
        return f"lines {offset}-{offset + limit - 1}"
    return lines(line_count(result_text)) if result_text else ""


def _edit_op(path: str, args: Mapping[str, Any]) -> FileOp:
    edits = args.get("edits")
    pairs: list[tuple[str, str]] = []
    if isinstance(edits, tuple | list):
        for edit in edits:
            if isinstance(edit, Mapping):
                pairs.append((_first_of(edit, ("old_string",)), _first_of(edit, ("new_string",))))
    else:
        old = _first_of(args, ("old_string", "old_str", "search"))
        new = _first_of(
            args, ("new_string", "new_str", "replace", "new_source", "text", "code_edit")
        )
        pairs.append((old, new))
    removed = sum(line_count(old) for old, _ in pairs)
    added = sum(line_count(new) for _, new in pairs)
    code = "\n".join(new for _, new in pairs if new)
    # An edit whose input names neither text (Cursor's edit_file_v2 carries only the path)
    # changed an unknown number of lines: "+0 -0 lines" would say it changed none.
    detail = f"+{added} -{removed} lines" if added or removed else ""
    return FileOp(path, "edited", detail, code)


def _editor_ops(args: Mapping[str, Any], result_text: str) -> tuple[FileOp, ...]:
    path = path_of(args)
    command = args.get("command")
    if path is None or not isinstance(command, str):
        return ()
    operation = _EDITOR_OPS.get(command, command)
    if command == "create":
        text = _first_of(args, ("file_text",))
        return (FileOp(path, operation, lines(line_count(text)), text),)
    if command in ("str_replace", "insert"):
        return (_edit_op(path, args),)
    return (FileOp(path, operation, lines(line_count(result_text)) if result_text else ""),)


def _patch_ops(patch: str) -> Iterator[FileOp]:
    for file in patch_files(patch):
        added = [line[1:] for line in file.body if line.startswith("+")]
        removed = sum(1 for line in file.body if line.startswith("-"))
        operation = _PATCH_OPS[file.operation]
        detail = "" if operation == "deleted" else f"+{len(added)} -{removed} lines"
        yield FileOp(file.path, operation, detail, "\n".join(added))


def todo_items(block: ToolUseBlock) -> tuple[TodoItem, ...] | None:
    """The full todo list a todo tool call set (``TodoWrite`` todos, Codex ``update_plan`` plan)."""
    todo = next((call for call in calls_made(block) if canonical(call.name) == "TodoWrite"), None)
    if todo is None:
        return None
    args = plain_input(todo)
    raw = args.get("todos", args.get("plan"))
    if not isinstance(raw, tuple | list):
        return None
    items = []
    for entry in raw:
        if isinstance(entry, Mapping):
            text = _first_of(entry, ("content", "step", "text", "title", "task", "description"))
            status = entry.get("status")
            if text:
                items.append(TodoItem(text, status if isinstance(status, str) else "pending"))
    return tuple(items)


def canonical_input(block: ToolUseBlock) -> str:
    """A stable text form of a tool input (sorted keys), for comparing two calls."""
    return json.dumps(thaw(block.input), sort_keys=True, ensure_ascii=False, default=str)
