"""Tool names across agents: what each agent calls the same action, in one table.

Claude Code's names are the canonical ones (``Read``, ``Write``, ``Edit``, ``Bash``, ``Grep``,
``Glob``, ``WebSearch``, ``WebFetch``, ``TodoWrite``); ``ALIASES`` maps the names other agents give
the same action onto them: Codex, Gemini CLI and qwen-code, OpenCode, Cline and Roo Code, Copilot
CLI, Copilot in VS Code (by VS Code's ``copilot_*`` ids, which SpecStory's extension writes),
Cursor, Continue, OpenHands, SWE-agent and mini-swe-agent. Names compare
case-insensitively with ``_``, ``-``, ``.`` and spaces ignored (``read_file``, ``ReadFile`` and
``read-file`` are one name), after an MCP or namespace prefix is dropped
(``mcp__files__read_file`` is ``read_file``); a version suffix is the same tool (Cursor 2's
``read_file_v2``, ``edit_file_v2`` and ``run_terminal_command_v2`` are ``read_file``,
``edit_file`` and ``run_terminal_command``).

Two families of editing tools take a different input and are also named on their own: an editor
that views, creates or edits by its ``command`` argument (``EDITOR_TOOLS``) and a patch whose text
names the files it touches (``PATCH_TOOLS``). Both are edits.

The compaction ladder reads this table to know whose results it may clear and which limit a result
has (``aliases_of``); the summarizer and the file tracker read it to know which file a call
touched: ``path_of`` by the input keys in ``PATH_KEYS``, ``patch_files`` from a patch's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

EDITOR_TOOLS: tuple[str, ...] = ("str_replace_editor", "str_replace_based_edit_tool", "text_editor")
"""OpenHands', SWE-agent's and Anthropic's text editor: ``command`` is view, create, str_replace,
insert or undo_edit."""
PATCH_TOOLS: tuple[str, ...] = ("apply_patch", "patch")
"""Codex's and OpenCode's patch tool: ``*** Add/Update/Delete File:`` lines name the files."""

ALIASES: Mapping[str, tuple[str, ...]] = {
    "Read": (
        "read_file",  # Gemini CLI, qwen-code, Cline, Cursor, Continue
        "view_file",
        "file_read",
        "open_file",
        "cat",
        "read_many_files",  # Gemini CLI
        "notebook_read",
        "view",  # Copilot CLI
        "open",  # SWE-agent
        "copilot_readFile",  # VS Code Copilot's id for its read_file
    ),
    "Write": (
        "write_file",  # Gemini CLI, qwen-code
        "create_file",
        "write_to_file",  # Cline, Roo Code
        "create",  # Copilot CLI, SWE-agent
        "create_new_file",  # Continue
        "file_write",
    ),
    "Edit": (
        *EDITOR_TOOLS,
        *PATCH_TOOLS,
        "edit_file",  # Cursor, Amp
        "multi_edit",
        "replace",  # Gemini CLI
        "str_replace",
        "replace_in_file",  # Cline
        "apply_diff",  # Roo Code
        "search_and_replace",  # Roo Code
        "search_replace",  # Cursor
        "insert_content",  # Roo Code
        "edit_existing_file",  # Continue
        "insert_edit_into_file",  # Copilot in VS Code
        "copilot_replaceString",  # Copilot in VS Code: replace_string_in_file's id
        "copilot_applyPatch",  # Copilot in VS Code: apply_patch's id
        "notebook_edit",
        "insert",  # SWE-agent
    ),
    "Bash": (
        "shell",  # Codex
        "exec_command",  # Codex
        "shell_command",  # Codex since 0.5x
        "local_shell",
        "container.exec",
        "run_shell_command",  # Gemini CLI, qwen-code
        "execute_command",  # Cline, Roo Code
        "execute_bash",  # OpenHands
        "execute_ipython_cell",  # OpenHands
        "run_command",
        "run",
        "terminal",
        "cmd",
        "cmdrun",
        "powershell",  # Copilot CLI on Windows
        "run_terminal_cmd",  # Cursor
        "run_terminal_command",  # Continue
        "run_in_terminal",  # Copilot in VS Code
    ),
    "Grep": (
        "grep_search",  # Cursor, qwen-code
        "ripgrep_raw_search",  # Cursor 2
        "codebase_search",  # Cursor (semantic search: code hits)
        "search_file_content",  # Gemini CLI
        "ripgrep",
        "rg",
        "search_files",  # Cline
        "find_in_files",
        "search_dir",  # SWE-agent
        "search_file",  # SWE-agent
        "copilot_findTextInFiles",  # Copilot in VS Code: grep_search's id
        "copilot_searchCodebase",  # Copilot in VS Code: semantic_search's id
    ),
    "Glob": (
        "find_files",
        "find_file",  # SWE-agent
        "list_files",  # Cline
        "list_dir",  # Cursor
        "list_directory",  # Gemini CLI, qwen-code
        "list",  # OpenCode
        "ls",
        "file_search",  # Cursor
        "glob_file_search",  # Cursor 2
        "copilot_listDirectory",  # Copilot in VS Code: list_dir's id
        "copilot_findFiles",  # Copilot in VS Code: file_search's id
    ),
    "WebSearch": (
        "web_search",
        "search_web",
        "google_search",
        "google_web_search",
        "web.run",  # Codex desktop's web tool (search_query, open); tools.web__run in code mode
    ),
    "WebFetch": ("web_fetch", "fetch", "fetch_url", "browser", "browse", "read_url"),
    "TodoWrite": ("todo_write", "update_plan", "write_todos"),  # qwen-code, Codex, Gemini CLI
}
"""Canonical tool → the names other agents give it (the comment says whose, where one agent's)."""

PATH_KEYS: tuple[str, ...] = (
    "file_path",
    "filePath",  # OpenCode
    "path",
    "absolute_path",  # Gemini CLI before 0.2
    "target_file",  # Cursor
    "filepath",  # Continue
    "notebook_path",
    "filename",
    "file",
)
"""The input keys a file-tool call names its file by, in the order they are looked for."""
PATCH_KEYS: tuple[str, ...] = ("input", "patch")
"""Where a patch call's text is when no string of its input opens with ``*** Begin Patch``."""
_VERSION = re.compile(r"[_-]?v\d+$")
"""A tool name's version suffix (``read_file_v2``)."""
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)


TEXT_RESULT_HEADER = re.compile(r"^\[(?P<name>[\w:.-]+)(?: for [^\n]*?)?\] Result:")
"""How Cline and its forks (Roo Code, Kilo Code) open a tool's answer they write as user text
(``[read_file for 'src/app.ts'] Result:``), whether the call was native or XML in the text."""
TEXT_NOT_RUN_HEADER = re.compile(r"^Tool \[(?P<name>[\w:.-]+)\] was not executed")
"""...and the answer to a call they did not run (one tool per reply)."""


def normalize(name: str) -> str:
    """``Read_File`` → ``readfile``: case, ``_``, ``-``, ``.`` and spaces do not matter."""
    return _normalize(name)


@lru_cache(maxsize=4096)
def _normalize(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


@lru_cache(maxsize=4096)
def base_name(name: str) -> str:
    """A tool name with its MCP or namespace prefix dropped, in lower case
    (``mcp__files__Read_File`` → ``read_file``); remembered, as ``_normalize``: every question
    asked of a call (is it a code-mode script, a shell, an edit) starts here."""
    return name.rsplit("__", 1)[-1].lower()


def canonical(name: str | None) -> str | None:
    """The canonical name of any agent's tool (``read_file`` → ``Read``), or None."""
    if name is None:
        return None
    return _canonical(name)


@lru_cache(maxsize=4096)
def _canonical(name: str) -> str | None:
    base = base_name(name)
    return (
        _TABLE.get(normalize(name))  # a namespaced name of its own (``web.run``, not ``run``)
        or _TABLE.get(normalize(base))
        or _TABLE.get(normalize(_VERSION.sub("", base)))
    )


def is_editor(name: str) -> bool:
    """An editor that acts by its ``command`` argument (``EDITOR_TOOLS``)."""
    return normalize(base_name(name)) in _EDITORS


def is_patch(name: str) -> bool:
    """A patch tool whose text names its files (``PATCH_TOOLS``)."""
    return normalize(base_name(name)) in _PATCHES


def aliases_of(name: str) -> tuple[str, ...]:
    """The other names of the tool ``name`` is the canonical name of (``()`` for any other)."""
    for known, aliases in ALIASES.items():
        if normalize(known) == normalize(name):
            return aliases
    return ()


def path_of(args: Mapping[str, Any]) -> str | None:
    """The file a file-tool call's input names (by ``PATH_KEYS``, surrounding blanks dropped)."""
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


@dataclass(frozen=True, slots=True)
class PatchFile:
    """One file a patch touches: ``operation`` is ``Add``, ``Update`` or ``Delete``."""

    operation: str
    path: str
    body: tuple[str, ...]
    """The patch lines under the file's header, up to the next file."""


def patch_text(args: Mapping[str, Any]) -> str:
    """The text of a patch call, whatever key the loader kept it under."""
    for value in args.values():
        if isinstance(value, str) and "*** Begin Patch" in value:
            return value
    for key in PATCH_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return ""


def patch_files(text: str) -> Iterator[PatchFile]:
    """The files a patch's ``*** Add/Update/Delete File:`` lines name, in order, with their
    lines."""
    matches = list(_PATCH_FILE.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = tuple(text[match.end() : end].splitlines()[1:])  # [0]: the header line's end
        yield PatchFile(match.group(1), match.group(2).strip(), body)


def _table() -> dict[str, str]:
    table: dict[str, str] = {}
    for name, aliases in ALIASES.items():
        table[normalize(name)] = name
        for alias in aliases:
            table.setdefault(normalize(alias), name)
    return table


_TABLE = _table()
_EDITORS = frozenset(map(normalize, EDITOR_TOOLS))
_PATCHES = frozenset(map(normalize, PATCH_TOOLS))
