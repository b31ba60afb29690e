"""What a tool call did, read from its name, input and result: files, commands, todos, errors.

Agents name the same actions differently (Claude Code ``Read``/``Edit``/``Bash``, Codex
``exec_command``/``apply_patch``/``update_plan``, SWE-agent and OpenHands ``str_replace_editor``,
OpenCode ``read`` with ``filePath``); ``contextwarden.toolnames`` maps them onto Claude Code's.
Paths are kept as the tool input gave them (never resolved; only surrounding blanks dropped), so a
summary quotes what the agent used.

Shell commands are read for file paths only in obvious cases (documented on ``_shell_file_ops``);
anything cleverer would guess wrong, and a wrong path in a summary is worse than a missing one.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from contextwarden.model import ToolUseBlock, thaw
from contextwarden.summarizers.shell_syntax import pipeline_heads, shell_words
from contextwarden.summarizers.shell_wrappers import LOCAL_WRAPPERS, inner_command
from contextwarden.toolnames import (
    base_name,
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
_SHELL_READERS = frozenset({"cat", "head", "tail", "nl", "less", "more"})
_SHELL_SEARCHES = frozenset({"grep", "egrep", "fgrep", "rg"})
_SHELL_PROGRAMS = _SHELL_READERS | _SHELL_SEARCHES | {"sed", "git"}
_SED_VALUED = frozenset("efl")
"""sed's short options that take a value (``-e SCRIPT``, ``-f SCRIPT-FILE``, ``-l N``)."""
_SED_LONG_VALUED = frozenset({"--expression", "--file", "--line-length"})
_BSD_SUFFIX = re.compile(r"\A(?:\.[^/]*)?\Z")
"""BSD sed's ``-i`` backup suffix, a word of its own: ``-i .bak``, or ``-i ''`` for none."""
_GIT_SHOWN = re.compile(r"\A[^-:][^:]*:(?P<path>[^:]+)\Z")
"""``git show REV:PATH``'s operand: the file as that revision has it."""
_SEARCH_VALUED = frozenset(
    {
        "-e",
        "-f",
        "-m",
        "-A",
        "-B",
        "-C",
        "-d",
        "-D",
        "-g",
        "-t",
        "-T",
        "-M",
        "-j",
        "--regexp",
        "--file",
        "--max-count",
        "--after-context",
        "--before-context",
        "--context",
        "--glob",
        "--type",
        "--type-not",
        "--include",
        "--exclude",
        "--exclude-dir",
    }
)
"""Options of grep and ripgrep whose value is the next word (``-A 20``, ``-g '*.py'``)."""
_SHELL_META = re.compile(r"[*?$`<>|;&(){}\[\]]")


@dataclass(frozen=True, slots=True)
class FileOp:
    """What one tool call did to a file: ``operation`` is read, wrote, edited, deleted, searched."""

    path: str
    operation: str
    detail: str = ""
    """Line counts where known, e.g. ``120 lines`` or ``+4 -2 lines``."""
    code: str = ""
    """The code the call wrote (Write content, Edit replacement, created file text)."""


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


def is_shell(block: ToolUseBlock) -> bool:
    return canonical(block.name) == "Bash"


def shell_command(block: ToolUseBlock) -> str | None:
    """The command line a shell tool ran (``cmd``/``command``; argv lists joined)."""
    if not is_shell(block):
        return None
    args = plain_input(block)
    value = args.get("cmd", args.get("command"))
    if isinstance(value, tuple | list) and all(isinstance(v, str) for v in value):
        # Codex's ``shell`` tool wraps the real command as ["bash", "-lc", "<command>"].
        if len(value) == 3 and value[1] in ("-c", "-lc"):
            return str(value[2])
        return shlex.join(value)
    return value if isinstance(value, str) and value.strip() else None


_SCRIPTED_SHELL = "tools.exec_command("


def scripted_command(block: ToolUseBlock) -> str | None:
    """The command a Codex code-mode script (its ``exec`` tool: ``const r = await
    tools.exec_command({"cmd": "…", …})``) hands to the shell, or None."""
    script = plain_input(block).get("input")
    if base_name(block.name) != "exec" or not isinstance(script, str):
        return None
    start = script.find(_SCRIPTED_SHELL)
    if start < 0:
        return None
    try:
        args, _ = json.JSONDecoder().raw_decode(script, start + len(_SCRIPTED_SHELL))
    except ValueError:
        return None
    command = args.get("cmd") if isinstance(args, dict) else None
    return command if isinstance(command, str) and command.strip() else None


def lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def file_ops(block: ToolUseBlock, result_text: str = "") -> tuple[FileOp, ...]:
    """What ``block`` did to which files (nothing for tools that touch no file)."""
    args = plain_input(block)
    if is_patch(block.name):
        ops = tuple(_patch_ops(patch_text(args)))
        named = path_of(args)  # a loader that kept only the file the patch touched
        return ops or ((FileOp(named, "edited"),) if named else ())
    if is_editor(block.name):
        return _editor_ops(args, result_text)
    command = shell_command(block)
    if command is not None:
        return tuple(_shell_file_ops(command, result_text))
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


def _shell_file_ops(command: str, result_text: str) -> Iterator[FileOp]:
    """File paths from the obvious shell forms only.

    Each ``&&``/``||``/``;``/newline-separated part, before any pipe, is read (split as the
    shell does, ``shell_syntax``: ``sed -i 's|a|b|' f.txt`` is one command) when it is
    ``cat|head|tail|nl|less|more FILE…`` (read), ``sed -n 'X' FILE`` (read), ``sed -i … FILE``
    (edited), ``cat > FILE`` / ``cat >> FILE`` (wrote, a heredoc), ``git show REV:FILE`` (read:
    that revision's file) or ``grep|rg PATTERN FILE…``
    (searched, as a Grep call's path is: only operands that name a file, with an extension; a
    folder searched is no file touched). Operands that hold shell syntax (globs, variables,
    substitutions) are skipped: their real path is unknown. A command that runs another here
    (``shell_wrappers``: ``bash -lc '…'``, ``sudo``, ``timeout 30``, ``env A=1``) is read as
    the command it runs; one run on another host or in a container (``ssh host 'cat f'``,
    ``docker exec app cat f``) names that machine's files, not the workspace's.
    """
    for part in pipeline_heads(command):
        head = part.split(None, 1)
        local = bool(head) and (head[0].rsplit("/", 1)[-1] in LOCAL_WRAPPERS or "=" in head[0])
        if not head or (head[0] not in _SHELL_PROGRAMS and not local):
            continue  # shlex is slow; split only the parts that can name a file
        words = shell_words(part)
        inner = inner_command(words, elsewhere=False) if local else None
        if inner is not None:
            yield from _shell_file_ops(inner, result_text)
            continue
        if not words:
            continue
        if words[0] == "cat" and len(words) >= 3 and words[1] in (">", ">>"):
            if not _SHELL_META.search(words[2]):
                yield FileOp(words[2], "wrote")
            continue
        yield from _shell_reads(words, result_text)


def _shell_reads(words: list[str], result_text: str) -> Iterator[FileOp]:
    program, args = words[0], words[1:]
    if program == "sed" and args:
        operands, in_place = _sed_files(args)
        if not in_place and "-n" not in args:
            return
        kind = "edited" if in_place else "read"
    elif program in _SHELL_READERS:
        operands = [a for a in args if not a.startswith("-") and not a.isdigit()]
        kind = "read"
    elif program in _SHELL_SEARCHES:
        operands = [a for a in _search_operands(args) if PurePosixPath(a).suffix]
        kind = "searched"
    elif program == "git" and next((a for a in args if not a.startswith("-")), "") == "show":
        shown = (_GIT_SHOWN.match(a) for a in args)
        operands = [m["path"] for m in shown if m and PurePosixPath(m["path"]).suffix]
        kind = "read"
    else:
        return
    files = [a for a in operands if a and not _SHELL_META.search(a)]
    for path in files:
        single = len(files) == 1 and kind == "read" and result_text
        yield FileOp(path, kind, lines(line_count(result_text)) if single else "")


def _sed_files(args: list[str]) -> tuple[list[str], bool]:
    """The files a sed command reads, and whether it edits them in place. GNU sed's synopsis is
    ``sed [OPTION]... {script-only-if-no-other-script} [input-file]...``: the first operand is
    the script unless ``-e``/``--expression``/``-f``/``--file`` gave one, and an option's value
    (``-e 's/a\\./b./g'``, ``-l 80``) is no file. BSD sed's ``-i`` takes its backup suffix as
    the next word (``sed -i '' -e …``, ``-i .bak``); GNU's ``-i[SUFFIX]`` has it attached."""
    operands: list[str] = []
    scripted = False
    skip = False
    for index, arg in enumerate(args):
        valued = next((i for i, c in enumerate(arg) if c in _SED_VALUED), 0)
        if skip or arg == "--":
            skip = False
        elif arg == "-" or not arg.startswith("-") or "--" in args[:index]:
            operands.append(arg)
        elif arg.startswith("--"):
            scripted = scripted or arg.startswith(("--expression", "--file"))
            skip = arg in _SED_LONG_VALUED
        elif arg == "-i":
            skip = index + 1 < len(args) and _BSD_SUFFIX.match(args[index + 1]) is not None
        elif valued and not arg.startswith("-i"):
            scripted = scripted or arg[valued] in "ef"
            skip = valued == len(arg) - 1
    in_place = any(a.startswith(("-i", "--in-place")) for a in args)
    if not scripted and operands and _unterminated_s(operands[0]):
        return [], in_place  # sed stops at its script: "unterminated `s' command"
    return (operands if scripted else operands[1:]), in_place


def _unterminated_s(script: str) -> bool:
    """A script that is one ``s`` command missing a delimiter (``s/--mode`` of a ``'s/a b/c/'``
    whose quotes a wrapper's quoting broke): sed reads its whole script before any input, so it
    exits with ``unterminated `s' command`` and opens no file (POSIX sed: "the s command …
    any character other than backslash or newline can be used instead of a slash")."""
    if len(script) < 2 or script[0] != "s" or script[1] in "\\\n":
        return False
    delimiter = script[1]
    return len(re.findall(rf"(?<!\\){re.escape(delimiter)}", script[1:])) < 3


def _search_operands(args: list[str]) -> list[str]:
    """The paths a grep or ripgrep command searches: its operands after the pattern (every
    operand when ``-e``/``-f`` gives the pattern), an option's value skipped."""
    operands: list[str] = []
    pattern_given = False
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--":
            continue
        elif arg.startswith("-") and len(arg) > 1:
            skip = arg in _SEARCH_VALUED
            pattern_given = pattern_given or arg in ("-e", "-f", "--regexp", "--file")
            pattern_given = pattern_given or arg.startswith(("--regexp=", "--file="))
        else:
            operands.append(arg)
    return operands if pattern_given else operands[1:]


def todo_items(block: ToolUseBlock) -> tuple[TodoItem, ...] | None:
    """The full todo list a todo tool call set (``TodoWrite`` todos, Codex ``update_plan`` plan)."""
    if canonical(block.name) != "TodoWrite":
        return None
    args = plain_input(block)
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
