"""What each agent tool accepts: one table that both tells the model (``TOOL_DEFINITIONS``) and
checks what the model sent (``checked``), so a call of the wrong type or range never reaches a tool.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from contextwarden.errors import ToolError

__all__ = ["MAX_READ_LINES", "MAX_TIMEOUT", "TOOL_DEFINITIONS", "TOOL_SPECS", "checked"]

MAX_READ_LINES = 2_000
"""read_file returns at most this many lines per call (Claude Code's default)."""
MAX_TIMEOUT = 600.0
"""The longest a bash command may ask to run, in seconds."""
MAX_TEXT_ARGUMENT = 10_000_000
"""Characters a string argument may hold (a file's content for write_file is the large one)."""
MAX_PATTERN_CHARS = 1_000
"""Characters a glob or regular expression may hold."""

_SHOWN_UP_TO = 10**15  # a number beyond this is not printed back (it may have 10,000 digits)

Kind = Literal["string", "integer", "number", "array"]
_PYTHON_TYPES: Mapping[Kind, tuple[type, ...]] = MappingProxyType(
    {"string": (str,), "integer": (int,), "number": (int, float), "array": (list, tuple)}
)


@dataclass(frozen=True, slots=True)
class Param:
    """One argument: its JSON type, whether it is required, and its allowed range.

    ``low``/``high`` bound a number (inclusive); for a string, ``high`` bounds its length.
    """

    name: str
    kind: Kind
    required: bool = False
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[Param, ...]

    def definition(self) -> dict[str, Any]:
        """The tool as the Anthropic Messages API describes it (``name``, ``input_schema``)."""
        properties = {p.name: {"type": p.kind} for p in self.params}
        required = [p.name for p in self.params if p.required]
        schema = {"type": "object", "properties": properties, "required": required}
        return {"name": self.name, "description": self.description, "input_schema": schema}


def _text(name: str, *, required: bool = False, high: int = MAX_TEXT_ARGUMENT) -> Param:
    return Param(name, "string", required, high=high)


TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "read_file",
        "Read a text file; lines are numbered. offset is the first line (1-based).",
        (
            _text("path", required=True),
            Param("offset", "integer", low=0, high=2**31),
            Param("limit", "integer", low=1, high=MAX_READ_LINES),
        ),
    ),
    ToolSpec(
        "list_files",
        "List files matching a glob pattern (default **/*) under a directory.",
        (_text("pattern", high=MAX_PATTERN_CHARS), _text("path")),
    ),
    ToolSpec(
        "grep",
        "Search file contents with a regular expression; glob filters files.",
        (
            _text("pattern", required=True, high=MAX_PATTERN_CHARS),
            _text("path"),
            _text("glob", high=MAX_PATTERN_CHARS),
        ),
    ),
    ToolSpec(
        "edit_file",
        "Replace one exact, unique string in a file; shows the diff.",
        (
            _text("path", required=True),
            _text("old_string", required=True),
            _text("new_string", required=True),
        ),
    ),
    ToolSpec(
        "write_file",
        "Create or overwrite a file with the given content.",
        (_text("path", required=True), _text("content", required=True)),
    ),
    ToolSpec(
        "bash",
        "Run a shell command in the workspace directory.",
        (
            _text("command", required=True),
            Param("timeout", "number", low=0.001, high=MAX_TIMEOUT),
            _text("description", high=MAX_PATTERN_CHARS),
        ),
    ),
    ToolSpec(
        "todo_write",
        "Replace the todo list (a list of {content, status}).",
        (Param("todos", "array", required=True),),
    ),
)
_BY_NAME = MappingProxyType({spec.name: spec for spec in TOOL_SPECS})
TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = tuple(spec.definition() for spec in TOOL_SPECS)


def checked(name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    """``arguments`` for tool ``name`` if every one has the declared type and range; otherwise a
    ToolError naming the argument and what it should be. Absent optional arguments stay absent."""
    spec = _BY_NAME.get(name)
    if spec is None:
        known = ", ".join(_BY_NAME)
        raise ToolError(f"no tool named {name!r}; the tools are {known}", tool=name)
    if not isinstance(arguments, Mapping):
        raise ToolError(f"{name}'s input must be a JSON object", tool=name)
    allowed = {p.name for p in spec.params}
    unknown = sorted(str(key) for key in arguments if key not in allowed)
    if unknown:
        raise ToolError(
            f"{name} takes no argument {unknown[0]!r}; it takes {', '.join(sorted(allowed))}",
            tool=name,
            argument=unknown[0],
        )
    for param in spec.params:
        value = arguments.get(param.name)
        if value is None:
            if param.required:
                raise ToolError(f"{name} needs {param.name!r}", tool=name, argument=param.name)
            continue
        _check(name, param, value)
    return MappingProxyType({k: v for k, v in arguments.items() if v is not None})


def _check(tool: str, param: Param, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, _PYTHON_TYPES[param.kind]):
        got = type(value).__name__
        raise ToolError(
            f"{tool}'s {param.name!r} must be a JSON {param.kind}, not {got}",
            tool=tool,
            argument=param.name,
        )
    if isinstance(value, str):
        _check_range(tool, param, len(value), "characters long")
    elif isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise ToolError(
                f"{tool}'s {param.name!r} must be a finite number", tool=tool, argument=param.name
            )
        _check_range(tool, param, value, "")


def _check_range(tool: str, param: Param, size: float, unit: str) -> None:
    low = param.low if param.low is not None else -math.inf
    high = param.high if param.high is not None else math.inf
    if low <= size <= high:
        return
    bounds = f"at most {high:g}" if low == -math.inf else f"between {low:g} and {high:g}"
    shown = f"{size:g}" if abs(size) < _SHOWN_UP_TO else "a larger number"
    raise ToolError(
        f"{tool}'s {param.name!r} must be {bounds}{' ' + unit if unit else ''} (got {shown})",
        tool=tool,
        argument=param.name,
    )
